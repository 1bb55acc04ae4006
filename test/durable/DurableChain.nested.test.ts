/**
 * A tool whose handler runs a chain of its own (a sub-agent): its model
 * calls are part of the tool's recorded step, so a replay after an approval
 * gets the outer run's own turns back, not the sub-agent's.
 */
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"

const Research = Tool.make("research", { parameters: Schema.Struct({ topic: Schema.String }), success: Schema.String })
const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Research, Refund)
it.effect("a sub-agent inside a durable tool: replayed after an approval, the run ends with its own answer; the sub-agent ran once", () => {
  let subRuns = 0
  const sub = ScriptedModel.make([{ text: "sub answer" }], { repeat: true })
  const handlers = toolkit.toLayer(Effect.gen(function*() {
    const subModel = yield* Layer.build(sub.layer)
    return {
      research: ({ topic }: { readonly topic: string }) =>
        Effect.orDie(Effect.map(
          Chain.run(Chain.make({ user: topic }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(subModel)),
          (outcome) => (subRuns++, outcome._tag)
        )),
      refund: () => Effect.succeed("ok")
    }
  }).pipe(Effect.scoped))
  const model = ScriptedModel.make([(request) => {
    const turns = request.prompt.content.filter((m) => m.role === "assistant").length
    return turns === 0
      ? { toolCalls: [{ id: "c1", name: "research", params: { topic: "x" } }, { id: "c2", name: "refund", params: { amount: 1 } }] }
      : { text: "done" }
  }], { repeat: true })
  const W = DurableChain.workflow("Nested", {
    input: Schema.Struct({ id: Schema.String }),
    idempotencyKey: ({ id }) => id,
    toolkit,
    chain: () => Chain.make({ user: "go", toolkit }),
    mode: Mode.whileNeedsResponse
  })
  const live = DurableChain.layer(W).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory)))
  return Effect.gen(function*() {
    const id = yield* W.execute({ id: "1" }, { discard: true })
    for (let i = 0; i < 100 && (yield* DurableChain.pending(W, id)).length === 0; i++) yield* Effect.yieldNow
    yield* DurableChain.decide(W, id, { c2: Approval.approve })
    const r = yield* W.execute({ id: "1" })
    expect(r._tag).toBe("Finished")
    expect((JSON.parse(r.document) as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content).toBe("done")
    expect(subRuns).toBe(1)
  }).pipe(Effect.provide(live))
})

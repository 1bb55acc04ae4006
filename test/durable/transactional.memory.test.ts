/** `transactional` on the memory engine (no SQL): it ends as the plain run, each tool once. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { waitingOn } from "../support/durable.ts"

const toolkit = Toolkit.make(
  Tool.make("charge", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, failure: Schema.String, needsApproval: true })
)

describe("transactional on the memory engine", () => {
  it.live("fails, dies, approval, called twice: ends as the plain run", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const handlers = toolkit.toLayer({
        charge: ({ amount }, { toolCallId }) =>
          Effect.suspend(() => (ran.push(String(toolCallId)), amount === 1 ? Effect.fail("declined") : amount === 2 ? Effect.die(new Error("boom")) : Effect.succeed(`charged ${amount}`)))
      })
      const script = [
        { toolCalls: [{ id: "c1", name: "charge", params: { amount: 1 } }, { id: "c2", name: "charge", params: { amount: 2 } }, { id: "c3", name: "charge", params: { amount: 3 } }] },
        { text: "Done." }
      ] as never
      const W = DurableChain.workflow("ProbeTxMem", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: () => Chain.make({ user: "Ticket T", toolkit }),
        mode: Mode.whileNeedsResponse,
        transactional: ["charge"]
      })
      const model = ScriptedModel.make(script)
      const live = DurableChain.layer(W).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory)))
      const result = yield* Effect.gen(function*() {
        const id = yield* W.execute({ ticket: "T" }, { discard: true })
        const waiting = yield* waitingOn(W, id)
        yield* DurableChain.decide(W, id, Object.fromEntries(waiting.map((c) => [c.callId, Approval.approve])))
        return yield* W.execute({ ticket: "T" })
      }).pipe(Effect.timeout("20 seconds"), Effect.provide(live))
      const durableRan = [...ran]
      ran.length = 0
      const plainModel = ScriptedModel.make(script)
      const plain = yield* Effect.gen(function*() {
        const o = yield* Chain.run(Chain.make({ user: "Ticket T", toolkit }), { mode: Mode.whileNeedsResponse })
        const calls = o._tag === "Pause" && o.reason._tag === "ApprovalPending" ? o.reason.calls : []
        const decided = yield* Approval.decide(o.chain, Object.fromEntries(calls.map((c) => [c.id, Approval.approve])))
        const o2 = yield* Chain.run(decided, { mode: Mode.whileNeedsResponse })
        return JSON.stringify(yield* Chain.encode(o2.chain))
      }).pipe(Effect.provide([plainModel.layer, handlers]))
      expect(result.document).toBe(plain)
      expect(durableRan.sort()).toEqual(["c1", "c2", "c3"])
    }), 60_000)
})

/**
 * DurableChain.stop on the memory engine: a waiting execution stops at once,
 * a running one before its next model call; either way it ends Paused with
 * StopRequested and the chain as it was, and nothing more runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Refund, Lookup)

const setup = (script: ReadonlyArray<ScriptedModel.Reply>, lookup: (order: string) => Effect.Effect<string>) => {
  const ran: Array<string> = []
  let modelCalls = 0
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    lookup: ({ order }) => Effect.tap(lookup(order), () => Effect.sync(() => ran.push(`lookup ${order}`)))
  })
  const model = ScriptedModel.make([
    (request) => {
      modelCalls++
      const turns = request.prompt.content.filter((m) => m.role === "assistant").length
      return script[turns] ?? { text: "nothing more" }
    }
  ], { repeat: true })
  const Support = DurableChain.workflow("Support", {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit,
    chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
    mode: Mode.whileNeedsResponse
  })
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live, modelCalls: () => modelCalls }
}

const roundWithApproval: ScriptedModel.Reply = {
  toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }, { id: "c2", name: "refund", params: { amount: 20 } }]
}

const documentOf = (result: { readonly document: string }) =>
  JSON.parse(result.document) as { readonly messages: ReadonlyArray<{ readonly role: string }>; readonly pendingToolCalls: ReadonlyArray<{ readonly id: string }> }

describe("DurableChain.stop", () => {
  it.effect("a waiting execution stops at once: Paused StopRequested, the call still pending in its document, a later decision refused", () => {
    const { live, ran, Support, modelCalls } = setup([roundWithApproval, { text: "Refunded." }], (order) => Effect.succeed(`order ${order}`))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      for (let turn = 0; turn < 100 && (yield* DurableChain.pending(Support, id)).length === 0; turn++) yield* Effect.yieldNow
      yield* DurableChain.stop(Support, id)
      yield* DurableChain.stop(Support, id)
      const result = yield* Support.execute({ ticket: "T1" })
      expect(result._tag).toBe("Paused")
      if (result._tag !== "Paused") return
      expect(result.reason).toBe("StopRequested")
      expect(documentOf(result).pendingToolCalls.map((call) => call.id)).toEqual(["c2"])
      expect(ran).toEqual(["lookup A1"])
      expect(modelCalls()).toBe(1)
      expect(yield* DurableChain.pending(Support, id)).toEqual([])
      const late = yield* Effect.flip(DurableChain.decide(Support, id, { c2: Approval.approve }))
      expect(late._tag).toBe("AlreadyAnswered")
    }).pipe(Effect.provide(live))
  })

  it.effect("a running execution stops before its next model call; the tool in flight finishes and is kept", () => {
    const started = Deferred.makeUnsafe<void>()
    const release = Deferred.makeUnsafe<void>()
    const script: ReadonlyArray<ScriptedModel.Reply> = [
      { toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }] },
      { toolCalls: [{ id: "c2", name: "lookup", params: { order: "A2" } }] },
      { text: "done" }
    ]
    const { live, ran, Support, modelCalls } = setup(script, (order) =>
      Effect.andThen(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)), Effect.succeed(`order ${order}`)))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T2" }, { discard: true })
      yield* Deferred.await(started)
      yield* DurableChain.stop(Support, id)
      yield* Deferred.succeed(release, undefined)
      const result = yield* Support.execute({ ticket: "T2" })
      expect(result._tag).toBe("Paused")
      if (result._tag !== "Paused") return
      expect(result.reason).toBe("StopRequested")
      expect(documentOf(result).messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
      expect(ran).toEqual(["lookup A1"])
      expect(modelCalls()).toBe(1)
    }).pipe(Effect.provide(live))
  })

  it.effect("a stop asked before the run posts its waiting calls ends it when it would wait", () => {
    const started = Deferred.makeUnsafe<void>()
    const release = Deferred.makeUnsafe<void>()
    const { live, ran, Support, modelCalls } = setup([roundWithApproval, { text: "Refunded." }], (order) =>
      Effect.andThen(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)), Effect.succeed(`order ${order}`)))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T3" }, { discard: true })
      yield* Deferred.await(started)
      yield* DurableChain.stop(Support, id)
      yield* Deferred.succeed(release, undefined)
      const result = yield* Support.execute({ ticket: "T3" })
      expect(result._tag === "Paused" ? result.reason : result._tag).toBe("StopRequested")
      expect(ran).toEqual(["lookup A1"])
      expect(modelCalls()).toBe(1)
    }).pipe(Effect.provide(live))
  })

  it.effect("bad requests are typed errors: a workflow that is not a durable chain, an execution id that is not one", () => {
    const { live, Support } = setup([{ text: "hi" }], (order) => Effect.succeed(order))
    return Effect.gen(function*() {
      const foreign = yield* Effect.flip(DurableChain.stop({ _tag: "Other" } as never, "x"))
      expect(foreign._tag).toBe("NotDurableChain")
      for (const executionId of ["", "x".repeat(2_000), 42, null]) {
        const error = yield* Effect.flip(DurableChain.stop(Support, executionId as string))
        expect(error._tag).toBe("InvalidInput")
      }
    }).pipe(Effect.provide(live))
  })
})

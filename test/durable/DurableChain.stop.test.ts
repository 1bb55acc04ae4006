/**
 * DurableChain.stop on the memory engine: a waiting execution stops at once,
 * a running one before its next model call; either way it ends Paused with
 * StopRequested and the chain as it was, and nothing more runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Refund, Lookup)

const setup = (
  script: ReadonlyArray<ScriptedModel.Reply>,
  lookup: (order: string) => Effect.Effect<string>,
  store: Layer.Layer<WaitingCalls.WaitingCalls> = WaitingCalls.layerMemory
) => {
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
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, store, WorkflowEngine.layerMemory))
  )
  const Other = supportWorkflow("Other", toolkit)
  return { ran, Support, Other, live, modelCalls: () => modelCalls }
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

  it.effect("an execution id with a '/' is refused: with 'Support' it would reach the rows of 'Support/Admin'", () => {
    const { ran, Support } = setup([roundWithApproval, { text: "Refunded." }], (order) => Effect.succeed(`order ${order}`))
    const Admin = supportWorkflow("Support/Admin", toolkit)
    const handlers = toolkit.toLayer({
      refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
      lookup: ({ order }) => Effect.succeed(`order ${order}`)
    })
    const live = Layer.mergeAll(DurableChain.layer(Support), DurableChain.layer(Admin)).pipe(
      Layer.provideMerge(Layer.mergeAll(ScriptedModel.make([roundWithApproval, { text: "Refunded." }]).layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
    )
    return Effect.gen(function*() {
      const id = yield* Admin.execute({ ticket: "A1" }, { discard: true })
      expect(id).not.toContain("/")
      expect((yield* waitingOn(Admin, id)).map((call) => call.callId)).toEqual(["c2"])
      const forged = `Admin/${id}`
      const refusals = [
        yield* Effect.flip(DurableChain.pending(Support, forged)),
        yield* Effect.flip(DurableChain.decide(Support, forged, { c2: Approval.reject("hijacked") })),
        yield* Effect.flip(DurableChain.supply(Support, forged, { c2: { result: "hijacked" } })),
        yield* Effect.flip(DurableChain.stop(Support, forged))
      ]
      for (const refusal of refusals) {
        if (refusal._tag !== "InvalidInput") return expect.unreachable(`refused as InvalidInput, not ${refusal._tag}`)
        expect(refusal.message).toContain("no '/'")
      }
      // Admin's call still waits for its own approver, who decides it.
      expect((yield* DurableChain.pending(Admin, id)).map((call) => call.callId)).toEqual(["c2"])
      yield* DurableChain.decide(Admin, id, { c2: Approval.approve })
      expect((yield* Admin.execute({ ticket: "A1" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 20"])
    }).pipe(Effect.provide(live))
  })

  it.effect("an execution id given with another workflow reaches nothing of it", () => {
    const { live, ran, Support, Other } = setup([roundWithApproval, { text: "Refunded." }], (order) => Effect.succeed(`order ${order}`))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T4" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* DurableChain.stop(Other, id)
      expect(yield* DurableChain.pending(Other, id)).toEqual([])
      expect((yield* Effect.flip(DurableChain.decide(Other, id, { c2: Approval.approve })))._tag).toBe("CallNotAwaiting")
      yield* DurableChain.decide(Support, id, { c2: Approval.approve })
      expect((yield* Support.execute({ ticket: "T4" }))._tag).toBe("Finished")
      expect(ran).toEqual(["lookup A1", "refund 20"])
    }).pipe(Effect.provide(live))
  })

  it.effect("asking again completes a stop whose process was lost between marking a call and waking the run", () => {
    const { live, Support } = setup([roundWithApproval, { text: "Refunded." }], (order) => Effect.succeed(`order ${order}`))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T5" }, { discard: true })
      yield* waitingOn(Support, id)
      // What a stop lost halfway leaves: the call marked stopped, the run never woken.
      const store = yield* WaitingCalls.WaitingCalls
      yield* store.requestStop(`Support/${id}`)
      expect(yield* store.claim(`Support/${id}`, "c2", JSON.stringify({ loopworkStop: true }), 1, "approval")).toBe("answered")
      yield* DurableChain.stop(Support, id)
      const result = yield* Support.execute({ ticket: "T5" })
      expect(result._tag === "Paused" ? result.reason : result._tag).toBe("StopRequested")
    }).pipe(Effect.provide(live))
  })

  it.effect("every waiting call is posted before the run waits: all are answered at once", () => {
    const twoApprovals: ScriptedModel.Reply = {
      toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }, { id: "r2", name: "refund", params: { amount: 7 } }]
    }
    const { live, ran, Support } = setup([twoApprovals, { text: "Refunded twice." }], (order) => Effect.succeed(order))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T6" }, { discard: true })
      let waiting = yield* waitingOn(Support, id)
      for (let turn = 0; turn < 100 && waiting.length < 2; turn++) waiting = yield* Effect.andThen(Effect.yieldNow, DurableChain.pending(Support, id))
      expect(waiting.map((call) => call.callId)).toEqual(["r1", "r2"])
      yield* DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.reject("too much") })
      expect((yield* Support.execute({ ticket: "T6" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  })

  it.live("a store that cannot say whether a stop was asked, now and then, does not end the run: it is asked again", () => {
    let failures = 3
    const flaky = Layer.effect(
      WaitingCalls.WaitingCalls,
      Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) => ({
        ...store,
        stopRequested: (key: string) =>
          Effect.suspend(() =>
            failures-- > 0 ? Effect.fail(new SqlError({ reason: new UnknownError({ cause: "database is locked" }) })) : store.stopRequested(key)
          )
      }))
    ).pipe(Layer.provide(WaitingCalls.layerMemory))
    const { live, Support } = setup([{ toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }] }, { text: "done" }], Effect.succeed, flaky)
    return Effect.gen(function*() {
      const result = yield* Support.execute({ ticket: "T7" })
      expect(result._tag).toBe("Finished")
      expect(failures).toBeLessThan(0)
    }).pipe(Effect.provide(live))
  })
})

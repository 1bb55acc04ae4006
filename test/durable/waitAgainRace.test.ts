/**
 * A decision that passed its checks while a call waited for its first
 * decision, and claims only after the call waits again (a repair retry with
 * new arguments, or an external tool approved and now waiting for its
 * result). The late claim must not answer the new wait.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ExternalTool, Mode, ToolFailurePolicy } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { pendingWhen, supportWorkflow } from "../support/durable.ts"

/** The memory store whose next claimAll, once `armed`, says it `reached` the claim and waits for `release`. */
const heldStore = (armed: { on: boolean }, reached: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Layer.effect(
    WaitingCalls.WaitingCalls,
    Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) => WaitingCalls.WaitingCalls.of({
      ...store,
      claimAll: (key, kind, claims) =>
        Effect.suspend(() => {
          if (!armed.on) return store.claimAll(key, kind, claims)
          armed.on = false
          return Effect.andThen(Effect.andThen(Deferred.succeed(reached, undefined), Deferred.await(release)), store.claimAll(key, kind, claims))
        })
    }))
  ).pipe(Layer.provide(WaitingCalls.layerMemory))

describe("a late claim against a call that waits again", () => {
  it.live("a stale rejection checked at wait 1 and claimed after the repair retry posted wait 2 is refused; wait 2 still waits", () => {
    const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, failure: Schema.String, needsApproval: true })
    const refunds = Toolkit.make(Refund)
    const ran: Array<number> = []
    const handlers = refunds.toLayer({
      refund: ({ amount }) => Effect.suspend(() => (ran.push(amount), amount === 20 ? Effect.fail("over the limit") : Effect.succeed(`refunded ${amount}`)))
    })
    const Support = DurableChain.workflow("Repair", {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit: refunds,
      chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit: refunds }),
      mode: Mode.whileNeedsResponse,
      onToolFailure: { handler: () => Effect.succeed(ToolFailurePolicy.retryWith({ amount: 15 })) }
    })
    const model = ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "refund", params: { amount: 20 } }] }, { text: "Done." }])
    const armed = { on: false }
    const release = Deferred.makeUnsafe<void>()
    const reached = Deferred.makeUnsafe<void>()
    const live = DurableChain.layer(Support).pipe(
      Layer.provideMerge(Layer.mergeAll(model.layer, handlers, heldStore(armed, reached, release), WorkflowEngine.layerMemory))
    )
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "W1" }, { discard: true })
      yield* pendingWhen(Support, id, (calls) => calls.length > 0)
      armed.on = true
      // B checks against wait 1 now, and claims only when released.
      const stale = yield* Effect.forkChild(Effect.flip(DurableChain.decide(Support, id, { c1: Approval.approve })))
      yield* Deferred.await(reached)
      // A approves wait 1; the refund fails; the repair retries with 15, which waits again.
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      yield* pendingWhen(Support, id, (calls) => calls.some((call) => call.wait === 2))
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(stale))._tag).toBe("WaitChanged")
      expect((yield* DurableChain.pending(Support, id)).map((call) => [call.callId, call.wait])).toEqual([["c1", 2]])
      expect(ran).toEqual([20])
      yield* DurableChain.decide(Support, id, { c1: Approval.reject("no") }, { waits: { c1: 2 } })
      expect((yield* Support.execute({ ticket: "W1" }))._tag).toBe("Finished")
      expect(ran).toEqual([20])
    }).pipe(Effect.provide(live))
  }, 20_000)

  it.live("a stale approval checked while an external tool waited for approval, claimed once it waits for its result, answers nothing", () => {
    const Transfer = ExternalTool.mark(Tool.make("transfer", { parameters: Schema.Struct({ to: Schema.String }), success: Schema.String, needsApproval: true }))
    const toolkit = Toolkit.make(Transfer)
    const Payments = supportWorkflow("Payments", toolkit)
    const model = ScriptedModel.make([{ toolCalls: [{ id: "t1", name: "transfer", params: { to: "bob" } }] }, { text: "Sent." }])
    const armed = { on: false }
    const release = Deferred.makeUnsafe<void>()
    const reached = Deferred.makeUnsafe<void>()
    const live = DurableChain.layer(Payments).pipe(
      Layer.provideMerge(Layer.mergeAll(
        model.layer,
        toolkit.toLayer({ transfer: () => Effect.die("an external tool's handler never runs") }),
        heldStore(armed, reached, release),
        WorkflowEngine.layerMemory
      ))
    )
    return Effect.gen(function*() {
      const id = yield* Payments.execute({ ticket: "P1" }, { discard: true })
      yield* pendingWhen(Payments, id, (calls) => calls.length > 0)
      armed.on = true
      const stale = yield* Effect.forkChild(Effect.flip(DurableChain.decide(Payments, id, { t1: Approval.reject("no") })))
      yield* Deferred.await(reached)
      yield* DurableChain.decide(Payments, id, { t1: Approval.approve })
      yield* pendingWhen(Payments, id, (calls) => calls.some((call) => call.kind === "result"))
      yield* Deferred.succeed(release, undefined)
      expect(["CallNotAwaiting", "AlreadyAnswered"]).toContain((yield* Fiber.join(stale))._tag)
      expect((yield* DurableChain.pending(Payments, id)).map((call) => call.kind)).toEqual(["result"])
      yield* DurableChain.supply(Payments, id, { t1: { result: "receipt 1" } })
      const result = yield* Payments.execute({ ticket: "P1" })
      expect(result._tag === "Finished" ? result.document : result._tag).toContain("receipt 1")
    }).pipe(Effect.provide(live))
  }, 20_000)
})

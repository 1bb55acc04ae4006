/**
 * A decide whose wake fails (the engine's `deferredDone` dies on a store
 * error) after its claim committed: the caller gets a typed `NotDelivered`
 * saying the decision is recorded and how to deliver it; nothing is
 * pending, a different decision is refused, and the same decision sent
 * again wakes the run, which runs what was approved.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

describe("a decide whose wake fails", () => {
  it.live("fails with NotDelivered; the decision stays the call's, and sent again it wakes the run", () => {
    let failures = 1
    const engine = Layer.effect(
      WorkflowEngine.WorkflowEngine,
      Effect.map(Effect.service(WorkflowEngine.WorkflowEngine), (inner) => ({
        ...inner,
        deferredDone: (deferred, options) =>
          Effect.suspend(() =>
            failures-- > 0 ? Effect.die(new SqlError({ reason: new UnknownError({ cause: "database is locked" }) })) : inner.deferredDone(deferred, options)
          )
      } as WorkflowEngine.WorkflowEngine["Service"]))
    ).pipe(Layer.provide(WorkflowEngine.layerMemory))
    const ran: Array<string> = []
    const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
    const model = ScriptedModel.make([{ toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }] }, { text: "Done." }])
    const Support = supportWorkflow("Support", toolkit)
    const live = DurableChain.layer(Support).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, engine)))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "F1" }, { discard: true })
      yield* waitingOn(Support, id)
      const failed = yield* Effect.flip(DurableChain.decide(Support, id, { r1: Approval.approve }))
      expect(failed._tag).toBe("NotDelivered")
      expect(failed.message).toContain("are recorded, but the run could not be woken")
      expect(failed.message).toContain("send the same answers again")
      expect(yield* DurableChain.pending(Support, id)).toEqual([])
      const correction = yield* Effect.flip(DurableChain.decide(Support, id, { r1: Approval.reject("on second thought") }))
      expect(correction._tag).toBe("AlreadyAnswered")
      expect(ran).toEqual([])
      yield* DurableChain.decide(Support, id, { r1: Approval.approve })
      const result = yield* Support.execute({ ticket: "F1" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  }, 10_000)
})

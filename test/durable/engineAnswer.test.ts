/**
 * An answer that reaches a run through the engine itself (its
 * `deferredDone`, a public effect/workflow API), not through
 * `DurableChain.decide`, `supply` or `stop`, is not a human's recorded
 * decision: the run checks each answer against the one recorded for the
 * call and ends `DurableRunFailed` (`CorruptRecord`) when they differ, and
 * the tool never runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { canonical } from "../../src/internal/canonicalJson.ts"
import { approvalOf } from "../../src/durable/internal/waiting.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

const setup = () => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
  const model = ScriptedModel.make([{ toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }] }, { text: "Done." }])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

/** Completes call r1's approval through the engine, as no human decided it. */
const throughEngine = (executionId: string, decision: Approval.Decision) =>
  Effect.flatMap(Effect.service(WorkflowEngine.WorkflowEngine), (engine) => {
    const deferred = approvalOf("r1", 1)
    return engine.deferredDone(deferred, { workflowName: "Support", executionId, deferredName: deferred.name, exit: Exit.succeed(decision) })
  })

describe("an answer the engine delivers that no one recorded", () => {
  const cases = [
    { name: "an approval with nothing recorded", recorded: undefined, sent: Approval.approve },
    { name: "an approval where a rejection is recorded", recorded: Approval.reject("no"), sent: Approval.approve },
    { name: "an edit where an approval is recorded", recorded: Approval.approve, sent: Approval.edit({ amount: 5000 }) }
  ] as const
  for (const { name, recorded, sent } of cases) {
    it.effect(`${name}: DurableRunFailed CorruptRecord, and the refund never runs`, () => {
      const { live, ran, Support } = setup()
      return Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "E1" }, { discard: true })
        yield* waitingOn(Support, id)
        if (recorded !== undefined) {
          const store = yield* WaitingCalls.WaitingCalls
          expect(yield* store.claimAll(`Support/${id}`, "approval", [{ callId: "r1", answer: canonical(recorded), wait: 1 }])).toBeUndefined()
        }
        yield* throughEngine(id, sent)
        const error = yield* Effect.flip(Support.execute({ ticket: "E1" }))
        expect(error).toMatchObject({ _tag: "DurableRunFailed", reason: "CorruptRecord" })
        expect(error.message).toContain("the answer the run received for call 'r1' is not the one recorded for it")
        expect(ran).toEqual([])
      }).pipe(Effect.provide(live))
    })
  }

  it.effect("the recorded answer, delivered, runs as decided", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "E2" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* DurableChain.decide(Support, id, { r1: Approval.edit({ amount: 4 }) })
      expect((yield* Support.execute({ ticket: "E2" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 4"])
    }).pipe(Effect.provide(live))
  })
})

/**
 * Two reviewers decide the same calls at the same moment, in opposite
 * orders: one reviewer's decisions are taken whole and the other gets
 * `AlreadyAnswered`, never half of each. The store is driven so that the
 * reviewers' reads and claims alternate (A, B, A, B, …): both find the
 * calls waiting, then claim; claiming one call at a time split the
 * decision under that schedule.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

/** Which reviewer a store operation is made for: A approves, B rejects. */
class Reviewer extends Context.Service<Reviewer, "A" | "B">()("test/Reviewer") {}

const reviewerOf = (answer: string | null | undefined) => answer?.includes("Approve") === true ? "A" : "B"

/**
 * The memory store whose reads of the waiting calls and claims (one at a
 * time or together), made for a reviewer, wait for that reviewer's turn in
 * `order`; a turn nobody takes is skipped after a while.
 */
const alternating = (order: ReadonlyArray<"A" | "B">) => {
  let turn = 0
  const inTurn = <A, E>(operation: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const who = yield* Effect.serviceOption(Reviewer)
      if (Option.isNone(who)) return yield* operation
      for (let spin = 0; spin < 200 && turn < order.length && order[turn] !== who.value; spin++) yield* Effect.yieldNow
      return yield* Effect.ensuring(operation, Effect.sync(() => void turn++))
    })
  return Layer.effect(
    WaitingCalls.WaitingCalls,
    Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) => WaitingCalls.WaitingCalls.of({
      ...store,
      list: (key) => inTurn(store.list(key)),
      claim: (key, callId, answer, wait, kind) => inTurn(store.claim(key, callId, answer, wait, kind)),
      claimAll: (key, kind, claims) => inTurn(store.claimAll(key, kind, claims))
    }))
  ).pipe(Layer.provide(WaitingCalls.layerMemory))
}

const setup = () => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
  const model = ScriptedModel.make([
    { toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }, { id: "r2", name: "refund", params: { amount: 7 } }] },
    { text: "Done." }
  ])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, alternating(["A", "B", "A", "B", "A", "B"]), WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

describe("DurableChain.decide by two reviewers at once", () => {
  it.effect("one reviewer's decisions are taken whole, the other's refused whole", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      let waiting = yield* waitingOn(Support, id)
      for (let turn = 0; turn < 100 && waiting.length < 2; turn++) waiting = yield* Effect.andThen(Effect.yieldNow, DurableChain.pending(Support, id))
      expect(waiting.map((call) => call.callId)).toEqual(["r1", "r2"])
      const [a, b] = yield* Effect.all([
        Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.approve }), Reviewer, "A")),
        Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r2: Approval.reject("no"), r1: Approval.reject("no") }), Reviewer, "B"))
      ], { concurrency: 2 })
      const store = yield* WaitingCalls.WaitingCalls
      const answers = [yield* store.answerOf(`Support/${id}`, "r1"), yield* store.answerOf(`Support/${id}`, "r2")]
      // Exactly one reviewer won, and both calls carry that reviewer's answer.
      expect([Exit.isSuccess(a), Exit.isSuccess(b)].filter(Boolean)).toHaveLength(1)
      const loser = Exit.isSuccess(a) ? b : a
      expect(Exit.isFailure(loser) && loser.cause.reasons[0]?._tag === "Fail" ? loser.cause.reasons[0].error._tag : loser).toBe("AlreadyAnswered")
      const winner = Exit.isSuccess(a) ? "A" : "B"
      expect(answers.map(reviewerOf)).toEqual([winner, winner])
      expect((yield* Support.execute({ ticket: "T1" }))._tag).toBe("Finished")
      expect(ran).toEqual(winner === "A" ? ["refund 5", "refund 7"] : [])
    }).pipe(Effect.provide(live))
  })
})

/**
 * Two reviewers decide the same calls at the same moment, in opposite
 * orders: one reviewer's decisions are taken whole and the other gets
 * `AlreadyAnswered`, never half of each. The store is driven so that the
 * reviewers' reads and claims alternate (A, B, A, B, …): both find the
 * calls waiting, then claim; claiming one call at a time split the
 * decision under that schedule. (decideStopInterleavings.test.ts adds a
 * stop and tries every order.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Approval } from "../../src/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { Caller, scheduled, twoRefunds, waitsForBoth } from "./support/turns.ts"

/** Whose answer a stored text is: reviewer A approves, reviewer B rejects. */
const reviewerOf = (answer: string | null | undefined) => answer?.includes("Approve") === true ? "A" : "B"

describe("DurableChain.decide by two reviewers at once", () => {
  it.effect("one reviewer's decisions are taken whole, the other's refused whole", () => {
    const { live, ran, Support } = twoRefunds(scheduled(["A", "B", "A", "B", "A", "B"]))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      expect(yield* waitsForBoth(Support, id)).toEqual(["r1", "r2"])
      const [a, b] = yield* Effect.all([
        Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.approve }), Caller, "A")),
        Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r2: Approval.reject("no"), r1: Approval.reject("no") }), Caller, "B"))
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

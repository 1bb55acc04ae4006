/**
 * A decide whose process was lost between the claim (written) and the wake
 * (`deferredDone`): nothing is pending, a different decision is refused,
 * and sending the same decision again completes the run. `stop` wakes
 * every call with the answer it holds, so it also ends such a run: the
 * decisions recorded before the stop are applied, and the run stops before
 * its next model call. (Found by an attack: `stop` used to skip calls
 * answered by another, and the run stayed suspended.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Approval } from "../../src/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { canonical } from "../../src/internal/canonicalJson.ts"
import { twoRefunds, waitsForBoth } from "./support/turns.ts"

/** What `decide` leaves when its process dies after the claim: both calls claimed, no deferred completed. */
const lostDecide = (key: string) =>
  Effect.flatMap(Effect.service(WaitingCalls.WaitingCalls), (store) =>
    store.claimAll(key, "approval", [
      { callId: "r1", answer: canonical(Approval.approve), wait: 1 },
      { callId: "r2", answer: canonical(Approval.reject("no")), wait: 1 }
    ]))

const waitsForAll = (Support: ReturnType<typeof twoRefunds>["Support"], id: string) =>
  Effect.map(waitsForBoth(Support, id), (ids) => expect(ids).toEqual(["r1", "r2"]))

describe("a decision claimed but never delivered", () => {
  it.effect("the same decision sent again completes it; a different one is refused", () => {
    const { live, ran, Support } = twoRefunds()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "L1" }, { discard: true })
      yield* waitsForAll(Support, id)
      expect(yield* lostDecide(`Support/${id}`)).toBeUndefined()
      expect(yield* DurableChain.pending(Support, id)).toEqual([])
      const other = yield* Effect.flip(DurableChain.decide(Support, id, { r1: Approval.reject("changed my mind"), r2: Approval.reject("no") }))
      expect(other._tag).toBe("AlreadyAnswered")
      yield* DurableChain.decide(Support, id, { r2: Approval.reject("no"), r1: Approval.approve })
      expect((yield* Support.execute({ ticket: "L1" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  })

  it.live("stop after a decide lost between claim and wake ends the run: the recorded decisions applied, then stopped", () => {
    const { live, ran, Support } = twoRefunds()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "L2" }, { discard: true })
      yield* waitsForAll(Support, id)
      yield* lostDecide(`Support/${id}`)
      // An operator finds the run stuck with nothing pending, and stops it.
      yield* DurableChain.stop(Support, id)
      const fiber = yield* Effect.forkChild(Support.execute({ ticket: "L2" }))
      const ended = yield* Effect.timeoutOption(Fiber.join(fiber), "3 seconds")
      yield* Fiber.interrupt(fiber)
      expect(ended._tag === "Some" ? ended.value._tag === "Paused" ? ended.value.reason : ended.value._tag : "still suspended after stop").toBe("StopRequested")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  }, 10_000)
})

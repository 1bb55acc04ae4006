/**
 * Decide (reviewer A approves both calls), decide (reviewer B
 * rejects both, keys in the other order) and stop, at once, on the memory
 * store, with their store operations forced into given orders (as
 * DurableChain.decideTogether.test.ts drives two reviewers). Each caller's
 * operations wait for that caller's turn; a turn nobody takes is skipped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option } from "effect"
import { Approval } from "../../src/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { Caller, scheduled, twoRefunds, waitsForBoth } from "./support/turns.ts"

type Who = "A" | "B" | "S"

/** Every interleaving of the callers' operation sequences. */
const interleavings = (sequences: ReadonlyArray<ReadonlyArray<Who>>): Array<Array<Who>> => {
  if (sequences.every((s) => s.length === 0)) return [[]]
  return sequences.flatMap((s, n) =>
    s.length === 0 ? [] : interleavings(sequences.map((t, m) => m === n ? t.slice(1) : t)).map((rest) => [s[0] as Who, ...rest]))
}

const tagOf = (exit: Exit.Exit<void, { readonly _tag: string }>) =>
  Exit.isSuccess(exit) ? "Success" : Option.match(Exit.findErrorOption(exit), { onNone: () => "defect", onSome: (error) => error._tag })

const once = (order: ReadonlyArray<Who>, n: number) => {
  const { live, ran, Support } = twoRefunds(scheduled(order))
  return Effect.gen(function*() {
    const ticket = `T${n}`
    const id = yield* Support.execute({ ticket }, { discard: true })
    yield* waitsForBoth(Support, id)
    const [a, b, s] = yield* Effect.all([
      Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.approve }), Caller, "A")),
      Effect.exit(Effect.provideService(DurableChain.decide(Support, id, { r2: Approval.reject("no"), r1: Approval.reject("no") }), Caller, "B")),
      Effect.exit(Effect.provideService(DurableChain.stop(Support, id), Caller, "S"))
    ], { concurrency: 3 })
    const store = yield* WaitingCalls.WaitingCalls
    const answers = [yield* store.answerOf(`Support/${id}`, "r1"), yield* store.answerOf(`Support/${id}`, "r2")]
    const fiber = yield* Effect.forkChild(Support.execute({ ticket }))
    const ended = yield* Effect.timeoutOption(Fiber.join(fiber), "2 seconds")
    return { order: order.join(""), a: tagOf(a), b: tagOf(b), s: tagOf(s), answers, result: ended._tag === "Some" ? ended.value._tag : "never ended", ran }
  }).pipe(Effect.provide(live))
}

describe("decide, decide and stop interleaved", () => {
  it.live("all 420 interleavings end with one whole answer, executed as given", () =>
    Effect.gen(function*() {
      const all = interleavings([["A", "A"], ["B", "B"], ["S", "S", "S", "S"]])
      const sample = all
      for (const [n, order] of sample.entries()) {
        const seen = yield* once(order, n)
        const context = JSON.stringify(seen)
        expect(seen.answers[0], context).toBe(seen.answers[1])
        expect([seen.a, seen.b].filter((tag) => tag === "Success").length, context).toBeLessThanOrEqual(1)
        for (const tag of [seen.a, seen.b]) expect(["Success", "AlreadyAnswered"], context).toContain(tag)
        expect(seen.s, context).toBe("Success")
        const answer = seen.answers[0] ?? ""
        expect(answer, context).not.toBe("")
        expect(seen.ran, context).toEqual(answer.includes("Approve") ? ["refund 5", "refund 7"] : [])
        expect(["Paused", "Finished"], context).toContain(seen.result)
        if (answer.includes("loopworkStop")) expect(seen.result, context).toBe("Paused")
      }
    }), 60_000)
})

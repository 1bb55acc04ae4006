import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { runAll } from "../../../src/internal/tools/runAll.ts"

/** A task: done at once (`0`), after a sleep of that many ms, or interrupting itself (`"quit"`). */
type Task = number | "quit"

/** What a run of `tasks` did, in order: each task's start and end, with the clock's time; and how it ended. */
const timeline = (
  tasks: ReadonlyArray<Task>,
  concurrency: number | "unbounded",
  each: (
    items: ReadonlyArray<number>,
    run: (index: number) => Effect.Effect<string>,
    concurrency: number | "unbounded"
  ) => Effect.Effect<ReadonlyArray<string>>
) =>
  Effect.gen(function*() {
    const events: Array<string> = []
    const zero = yield* Clock.currentTimeMillis
    const now = Effect.map(Clock.currentTimeMillis, (ms) => ms - zero)
    const task = (index: number): Effect.Effect<string> =>
      Effect.gen(function*() {
        events.push(`start ${index} at ${yield* now}`)
        const t = tasks[index]
        if (t === "quit") return yield* Effect.interrupt
        if (t > 0) yield* Effect.sleep(`${t} millis`)
        events.push(`end ${index} at ${yield* now}`)
        return `r${index}`
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => events.push(`interrupted ${index}`))))
    const fiber = yield* Effect.forkChild(each(tasks.map((_, i) => i), task, concurrency))
    yield* TestClock.adjust("1 second")
    const exit = yield* Fiber.await(fiber)
    return { events, exit: Exit.isSuccess(exit) ? exit.value : Exit.hasInterrupts(exit) ? "interrupted" : "failed" }
  })

const forEach = <A, B>(items: ReadonlyArray<A>, run: (item: A) => Effect.Effect<B>, concurrency: number | "unbounded") =>
  Effect.forEach(items, run, { concurrency })

const cases: ReadonlyArray<readonly [string, ReadonlyArray<Task>]> = [
  ["all at once", [0, 0, 0, 0]],
  ["all waiting", [30, 10, 20]],
  ["mixed", [0, 30, 0, 0, 10, 0, 20, 0]],
  ["waiting first, then at once", [10, 0, 0, 5, 0]],
  ["one interrupts itself while others wait", [30, 0, "quit", 10]],
  ["one interrupts itself after others ran", [0, 0, "quit", 0]],
  ["empty", []]
]

describe("runAll", () => {
  for (const concurrency of ["unbounded", 1, 2, 3] as const) {
    for (const [name, tasks] of cases) {
      it.effect(`starts, ends and fails as Effect.forEach does: ${name}, concurrency ${concurrency}`, () =>
        Effect.gen(function*() {
          const ours = yield* timeline(tasks, concurrency, runAll)
          const theirs = yield* timeline(tasks, concurrency, forEach)
          expect(ours).toStrictEqual(theirs)
          if (tasks.length > 0) expect(ours.events.length).toBeGreaterThan(0)
        }))
    }
  }

  it.effect("runs calls that complete at once in one fiber", () =>
    Effect.gen(function*() {
      const fibers = new Set<number>()
      const results = yield* runAll([1, 2, 3, 4], (n) => Effect.withFiber((fiber) => (fibers.add(fiber.id), Effect.succeed(n * 2))), "unbounded")
      expect(results).toEqual([2, 4, 6, 8])
      expect(fibers.size).toBe(1)
    }))
})

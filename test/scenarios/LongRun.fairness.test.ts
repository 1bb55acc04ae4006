/**
 * A long run whose rounds all complete at once (a scripted model, an `Effect.sync` tool) takes no step of
 * effect's runtime per round, so its fiber would never reach its budget of operations and yield: no other
 * fiber, timer or I/O callback would run until it ended. `Mode.loop` lets other fibers run every 64 rounds,
 * unless `Scheduler.PreventSchedulerYield` is on (effect's runtime then never yields either).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Schema, Scheduler } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, StopSignal } from "../../src/index.ts"

const Tick = Tool.make("tick", { parameters: Schema.Struct({}), success: Schema.Number })
const toolkit = Toolkit.make(Tick)

const rounds = 8_000

const longRun = (stop?: StopSignal.StopSignal) => {
  let n = 0
  const handlers = toolkit.toLayer({ tick: () => Effect.sync(() => ++n) })
  const model = ChatModel.scripted([...Array.from({ length: rounds }, () => ({ toolCalls: [{ name: "tick", params: {} }] })), { text: "done" }])
  return Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, maxRuns: rounds + 5, ...(stop === undefined ? {} : { stop }) }).pipe(
    Effect.provide([model.layer, handlers])
  )
}

describe("a long run of rounds that complete at once", () => {
  it.live("another fiber gets to run while it runs", () =>
    Effect.gen(function*() {
      let ticks = 0
      const ticker = yield* Effect.forkChild(Effect.forever(Effect.andThen(Effect.yieldNow, Effect.sync(() => void ticks++))))
      const startedAt = Date.now()
      let atEnd = 0
      yield* Effect.tap(longRun(), () => Effect.sync(() => void (atEnd = ticks)))
      const tookMillis = Date.now() - startedAt
      yield* Fiber.interrupt(ticker)
      expect(tookMillis).toBeGreaterThan(300)
      expect(atEnd).toBeGreaterThan(0)
    }), 120_000)

  it.live("Effect.timeout bounds it", () =>
    Effect.gen(function*() {
      const startedAt = Date.now()
      const exit = yield* Effect.exit(Effect.timeout(longRun(), "50 millis"))
      const tookMillis = Date.now() - startedAt
      expect({ timedOut: Exit.isFailure(exit), within: tookMillis < 1_000 }).toEqual({ timedOut: true, within: true })
    }), 120_000)

  it.live("StopSignal.request from another fiber 20 ms in pauses it", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      yield* Effect.forkChild(Effect.andThen(Effect.sleep("20 millis"), StopSignal.request(stop)))
      const outcome = yield* longRun(stop)
      expect(outcome._tag).toBe("Pause")
    }), 120_000)

  it.live("with Scheduler.PreventSchedulerYield on, it keeps its fiber to the end", () =>
    Effect.gen(function*() {
      let ticks = 0
      const ticker = yield* Effect.forkChild(Effect.forever(Effect.andThen(Effect.yieldNow, Effect.sync(() => void ticks++))))
      let atEnd = -1
      yield* Effect.tap(longRun().pipe(Effect.provideService(Scheduler.PreventSchedulerYield, true)), () => Effect.sync(() => void (atEnd = ticks)))
      yield* Fiber.interrupt(ticker)
      expect(atEnd).toBe(0)
    }), 120_000)
})

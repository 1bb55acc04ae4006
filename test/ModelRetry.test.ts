/**
 * Model retry: a failed model call retried on the run's `retry` schedule, at exact times under
 * `TestClock`; when retries run out the run fails with the chain as it was before the call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode } from "../src/index.ts"
import { makeHandlers, userChain, roles, toolResultsOf, seenByModel, asOk } from "./support/toolFailure.ts"

// -----------------------------------------------------------------------------
// Model retry
// -----------------------------------------------------------------------------

/** Two retries, 1 second apart. */
const twoRetriesOneSecondApart = Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(2)])

describe("model retry", () => {
  it.effect("retries at exactly 1s and 2s; a success after retries continues the loop", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { fail: "overloaded (1)" },
        { fail: "overloaded (2)" },
        { toolCalls: [{ name: "weather", params: { city: "Lisbon" } }] },
        { text: "21 degrees in Lisbon." }
      ])
      const handlers = makeHandlers()
      const start = userChain()
      const fiber = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, retry: twoRetriesOneSecondApart }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("999 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(2)
      yield* TestClock.adjust("999 millis")
      expect(model.calls).toBe(2)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      // the third try succeeds at 2s: the tool runs and the model answers at once
      expect(model.calls).toBe(4)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(outcome.reason).toBe("done")
      expect(Chain.text(outcome.chain)).toBe("21 degrees in Lisbon.")
      expect(handlers.log.weather).toEqual(["Lisbon"])
      // retries are not model runs; every retry sent the same prompt
      expect(outcome.chain.runCount).toBe(2)
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(model.requests[1].prompt).toEqual(model.requests[0].prompt)
      expect(model.requests[2].prompt).toEqual(model.requests[0].prompt)
      expect(model.requests[0].prompt.content).toEqual(start.messages)
      expect(seenByModel(model, 3)).toEqual([
        { id: "call_3_1", name: "weather", isFailure: false, result: { celsius: 21 } }
      ])
    }))

  it.effect("exhausted retries: RunError with the last ModelCallFailed and the chain before the call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Oslo" } }] },
        { fail: "overloaded (1)" },
        { fail: "overloaded (2)" },
        { fail: "overloaded (3)" },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, retry: twoRetriesOneSecondApart })
        .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("1999 millis")
      expect(model.calls).toBe(3)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(4)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("RunError")
      expect(error.reason).toBeInstanceOf(LoopError.ModelCallFailed)
      expect(error.reason.message).toBe("The model call failed: overloaded (3)")
      expect(error.message).toBe("The model call failed: overloaded (3)")
      // the chain as it was before the failed call: no partial assistant message
      expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
      expect(error.chain.runCount).toBe(1)
      expect(error.chain.lastResponse?.toolCalls.map((call) => call.name)).toEqual(["weather"])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([
        { id: "call_1_1", name: "weather", isFailure: false, result: { celsius: 4 } }
      ])
      expect(model.requests[3].prompt.content).toEqual(error.chain.messages)
      // no further attempt later
      yield* TestClock.adjust("1 minute")
      expect(model.calls).toBe(4)
    }))

  it.effect("without retry, a failed model call ends the run at once", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "overloaded" }, { text: "never reached" }])
      const handlers = makeHandlers()
      const start = userChain()
      const error = yield* Chain.run(start, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason.message).toBe("The model call failed: overloaded")
      expect(model.calls).toBe(1)
      expect(error.chain.messages).toEqual(start.messages)
      expect(error.chain.runCount).toBe(0)
    }))
})

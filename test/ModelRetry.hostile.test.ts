/**
 * What a provider's `retry-after` may grant, and a retry schedule from JavaScript that throws:
 * `ModelRetry.schedule` waits for a `retry-after` up to `maxRetryAfter` (5 minutes by default),
 * past `max`; a longer one (an hour, 1e308 seconds, Infinity) is not waited for and the call fails
 * with the provider's error at once; NaN or a negative wait is no wait. A schedule whose
 * predicate throws fails the call with `ModelCallFailed`, not the run with a defect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode, ModelRetry } from "../src/index.ts"

/** A model that fails with `retryAfterMillis` until `failures` calls have failed, then answers. */
const rateLimited = (retryAfterMillis: number, failures = 1) => {
  const state = { calls: 0 }
  const generate = () =>
    Effect.suspend(() =>
      ++state.calls <= failures
        ? Effect.fail(new LoopError.ModelCallFailed({ description: "HTTP 429", cause: undefined, status: 429, retryAfterMillis }))
        : Effect.succeed([{ type: "text", text: "ok" }, { type: "finish", reason: "stop", usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } }])
    )
  const layer = Layer.succeed(ChatModel.ChatModel, { generate, stream: () => Stream.empty } as unknown as ChatModel.ChatModel["Service"])
  return { state, layer }
}

const chain = Chain.make({ user: "hi" })

describe("a provider's retry-after under ModelRetry.schedule", () => {
  it.effect.each<{ readonly name: string; readonly millis: number; readonly options: ModelRetry.Options; readonly waits: number }>([
    { name: "10 s (past max 1 s) is waited for", millis: 10_000, options: { max: "1 second" }, waits: 10_000 },
    { name: "5 minutes, the default ceiling, is waited for", millis: 300_000, options: {}, waits: 300_000 },
    { name: "NaN is no wait (the backoff's 500 ms)", millis: Number.NaN, options: {}, waits: 500 },
    { name: "a negative wait is no wait", millis: -5, options: {}, waits: 500 },
    { name: "2 minutes over a ceiling of 3 minutes is waited for", millis: 120_000, options: { maxRetryAfter: "3 minutes" }, waits: 120_000 }
  ])("$name", ({ millis, options, waits }) =>
    Effect.gen(function*() {
      const model = rateLimited(millis)
      const fiber = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule(options) }).pipe(
        Effect.provide(model.layer),
        Effect.forkChild
      )
      yield* TestClock.adjust(waits - 1)
      expect(model.state.calls).toBe(1)
      yield* TestClock.adjust(1)
      expect(model.state.calls).toBe(2)
      const outcome = yield* Fiber.join(fiber)
      expect(Chain.text(outcome.chain)).toBe("ok")
    }))

  it.effect.each<{ readonly name: string; readonly millis: number; readonly options: ModelRetry.Options }>([
    { name: "an hour", millis: 3_600_000, options: {} },
    { name: "1e308 seconds (Infinity once in millis)", millis: 1e308 * 1000, options: {} },
    { name: "just past a ceiling of 1 minute", millis: 60_001, options: { maxRetryAfter: "1 minute" } }
  ])("$name is not waited for: the call fails at once with the provider's error", ({ millis, options }) =>
    Effect.gen(function*() {
      const model = rateLimited(millis)
      const exit = yield* Effect.exit(
        Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule(options) }).pipe(Effect.provide(model.layer))
      )
      expect(model.state.calls).toBe(1)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error.reason).toMatchObject({ _tag: "ModelCallFailed", status: 429, retryAfterMillis: millis })
    }))

  it.effect("a ceiling that is not a positive duration is refused like the other options", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ maxRetryAfter: "soon" as never }) }).pipe(
          Effect.provide(rateLimited(10).layer)
        )
      )
      expect(Option.getOrThrow(Exit.findErrorOption(exit)).reason).toMatchObject({ _tag: "InvalidInput", field: "ModelRetry.schedule maxRetryAfter" })
    }))
})

describe("a retry schedule from JavaScript that throws", () => {
  it.effect("fails the call with ModelCallFailed naming the schedule, the chain kept, no defect", () =>
    Effect.gen(function*() {
      const model = rateLimited(0, 5)
      const throwing = Schedule.recurs(3).pipe(Schedule.while(() => { throw new Error("predicate broke, api_key=sk-proj-AAAABBBBCCCCDDDDEEEE1234") }))
      const exit = yield* Effect.exit(
        Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: throwing }).pipe(Effect.provide(model.layer))
      )
      if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(error.message).toContain("the retry schedule failed unexpectedly: predicate broke, api_key=[REDACTED]")
      expect(error.chain.messages).toEqual(chain.messages)
      expect(model.state.calls).toBe(1)
    }))
})

describe("ModelRetry.retryAfter reads a provider's wait with care", () => {
  it.each([
    { name: "1500 ms", millis: 1500, expected: Duration.millis(1500) },
    { name: "NaN is no wait", millis: Number.NaN, expected: Duration.zero },
    { name: "a negative wait is no wait", millis: -5, expected: Duration.zero },
    { name: "Infinity stays endless", millis: Number.POSITIVE_INFINITY, expected: Duration.infinity }
  ])("$name", ({ expected, millis }) => {
    const error = new LoopError.ModelCallFailed({ description: "HTTP 429", cause: undefined, retryAfterMillis: millis })
    expect(Duration.equals(ModelRetry.retryAfter(error), expected)).toBe(true)
  })
})

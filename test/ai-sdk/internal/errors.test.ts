/**
 * The AI SDK bridge, failures (src/ai-sdk/internal/errors.ts): `failureOf` (APICallError → status,
 * retryable, retry-after), the `retryAfterMillis` header table, a non-v4 model → `InvalidInput`, the
 * `timeout` option; a prompt the request cannot be built from is a failure that is not retried (network
 * errors still are); `ModelRetry.schedule`: exact attempt times under `TestClock`.
 */
import type {
LanguageModelV4
} from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Stream } from "effect"
import { Prompt } from "effect/ai"
import { TestClock } from "effect/testing"
import { AiSdkModel, ChatModel } from "../../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode, ModelRetry, RunEvent } from "../../../src/index.ts"
import { transcript } from "../../support/transcript.ts"
import { fake, serviceOf, apiError, settle, isDone, request, failureIn } from "../../support/aiSdk.ts"

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

describe("errors", () => {
  const now = Date.parse("2026-11-22T12:00:00Z")
  const headerRows: ReadonlyArray<readonly [string, Record<string, string> | undefined, number | undefined]> = [
    ["no headers", undefined, undefined],
    ["neither header", { "content-type": "application/json" }, undefined],
    ["retry-after-ms", { "retry-after-ms": "1500" }, 1500],
    ["retry-after-ms with a fraction", { "retry-after-ms": "12.5" }, 12.5],
    ["retry-after-ms 0", { "retry-after-ms": "0" }, 0],
    ["retry-after seconds", { "retry-after": "2" }, 2000],
    ["retry-after fractional seconds", { "retry-after": "0.25" }, 250],
    ["both: retry-after-ms wins", { "retry-after-ms": "300", "retry-after": "9" }, 300],
    ["garbage retry-after-ms falls back to retry-after", { "retry-after-ms": "soon", "retry-after": "3" }, 3000],
    ["negative retry-after-ms falls back to retry-after", { "retry-after-ms": "-5", "retry-after": "1" }, 1000],
    ["retry-after HTTP date 5 s ahead", { "retry-after": new Date(now + 5000).toUTCString() }, 5000],
    ["retry-after HTTP date in the past → 0", { "retry-after": new Date(now - 60_000).toUTCString() }, 0],
    ["garbage retry-after", { "retry-after": "whenever" }, undefined],
    ["empty retry-after", { "retry-after": "" }, undefined]
  ]
  it("retryAfterMillis: a table of headers", () => {
    const table = headerRows.map(([name, headers]) => [name, AiSdkModel.retryAfterMillis(headers, now)])
    expect(table).toEqual(headerRows.map(([name, , expected]) => [name, expected]))
  })

  it("failureOf: an APICallError keeps its message, status, retryability and retry-after; anything else is retryable", () => {
    const rateLimited = AiSdkModel.failureOf(apiError(429, { headers: { "retry-after": "2" }, message: "Rate limit reached" }))
    expect([rateLimited.description, rateLimited.status, rateLimited.retryable, rateLimited.retryAfterMillis]).toEqual([
      "Rate limit reached",
      429,
      true,
      2000
    ])
    expect(rateLimited.message).toBe("The model call failed (HTTP 429): Rate limit reached")
    const bad = AiSdkModel.failureOf(apiError(400, { message: "Invalid 'tools[0].name'" }))
    expect([bad.status, bad.retryable, bad.retryAfterMillis]).toEqual([400, false, undefined])
    // an APICallError-like object (another copy of @ai-sdk/provider) is recognised by its name
    const like = AiSdkModel.failureOf({ name: "AI_APICallError", message: "Busy", statusCode: 503, isRetryable: true, responseHeaders: { "retry-after-ms": "40" } })
    expect([like.description, like.status, like.retryable, like.retryAfterMillis]).toEqual(["Busy", 503, true, 40])
    const network = AiSdkModel.failureOf(new TypeError("fetch failed"))
    expect([network.description, network.status, network.retryable]).toEqual(["fetch failed", undefined, true])
    const same = new LoopError.ModelCallFailed({ description: "x", cause: undefined, retryable: false })
    expect(AiSdkModel.failureOf(same)).toBe(same)
  })

  it.effect("a model that is not of specification v2, v3 or v4 is refused with InvalidInput before any call", () =>
    Effect.gen(function*() {
      const v1 = { ...fake([]), specificationVersion: "v1" } as unknown as LanguageModelV4
      const refused = yield* Effect.flip(AiSdkModel.make(v1))
      expect([refused._tag, refused.field, refused.value]).toEqual(["InvalidInput", "model", "v1"])
      expect(refused.message).toContain("specification v2, v3 or v4")
      const missing = yield* Effect.flip(AiSdkModel.make({} as unknown as LanguageModelV4))
      expect([missing._tag, missing.field, missing.value]).toEqual(["InvalidInput", "model", undefined])
      // as a layer: the run fails with the InvalidInput itself
      const run = yield* Effect.flip(
        Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(ChatModel.fromAiSdk(v1)))
      )
      expect(run._tag).toBe("InvalidInput")
    }))

  it.effect("info names the provider and model", () =>
    Effect.gen(function*() {
      expect((yield* serviceOf(fake([]))).info).toEqual({ provider: "fake.chat", model: "fake-1", structuredOutputs: false })
      expect((yield* serviceOf(fake([]), { structuredOutputs: true })).info?.structuredOutputs).toBe(true)
    }))

  it.effect("timeout: a call that does not answer fails after exactly the timeout (retryable) and its request is aborted", () =>
    Effect.gen(function*() {
      const model = fake([{ hang: true }, { hang: true }])
      const service = yield* serviceOf(model, { timeout: "200 millis" })
      for (const call of [service.generate(request("Hi")), Stream.runCollect(service.stream(request("Hi")))]) {
        const fiber = yield* Effect.forkChild(Effect.exit(call as Effect.Effect<unknown, ChatModel.ChatModelError>))
        yield* settle
        yield* TestClock.adjust("199 millis")
        yield* settle
        expect(isDone(fiber)).toBe(false)
        yield* TestClock.adjust("1 millis")
        yield* settle
        expect(isDone(fiber)).toBe(true)
        const error = failureIn(yield* Fiber.join(fiber))
        expect([error.retryable, error.status]).toEqual([true, undefined])
        expect(error.description).toMatch(/^no complete response within 200/)
      }
      expect(model.calls.map((call) => call.abortSignal?.aborted)).toEqual([true, true])
    }))
})

// -----------------------------------------------------------------------------
// A prompt the request cannot be built from
// -----------------------------------------------------------------------------

/** A value nested `depth` levels deep: far past what JSON.stringify's recursion survives. */
const nested = (depth: number): unknown => {
  let value: unknown = "bottom"
  for (let i = 0; i < depth; i++) value = { inner: value }
  return value
}

const cyclic = (): unknown => {
  const value: { self?: unknown } = {}
  value.self = value
  return value
}

/** A conversation whose one tool result is `result` (stored as it is, not through the loop's checks). */
const withToolResult = (result: unknown): ChatModel.GenerateRequest => ({
  prompt: Prompt.fromMessages([
    Prompt.userMessage({ content: [Prompt.textPart({ text: "Look it up" })] }),
    Prompt.assistantMessage({
      content: [Prompt.toolCallPart({ id: "c1", name: "search", params: { query: "x" }, providerExecuted: false })]
    }),
    Prompt.toolMessage({
      content: [Prompt.toolResultPart({ id: "c1", name: "search", isFailure: false, result, providerExecuted: false })]
    })
  ]),
  tools: [],
  toolChoice: "auto"
})

/** generate and stream of `service` for `request`, each as the ModelCallFailed it fails with. */
const bothFailures = (service: ChatModel.ChatModel["Service"], request: ChatModel.GenerateRequest) =>
  Effect.all([
    Effect.exit(service.generate(request)),
    Effect.exit(Stream.runCollect(service.stream(request)))
  ]).pipe(Effect.map((exits) => exits.map((exit) => failureIn(exit as Exit.Exit<unknown, ChatModel.ChatModelError>))))

describe("a prompt the request cannot be built from: a failure that is not retried", () => {
  const unserialisable: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ["a tool result nested 100,000 levels deep", nested(100_000), /\(RangeError: Maximum call stack size exceeded\)/],
    ["a tool result holding a BigInt", { total: 10n }, /\(TypeError: .*BigInt/],
    ["a cyclic tool result", cyclic(), /\(TypeError: .*circular/i]
  ]
  for (const [name, result, error] of unserialisable) {
    it.effect(`${name}: generate and stream fail at once, retryable false, and the provider is never called`, () =>
      Effect.gen(function*() {
        const model = fake([])
        const failures = yield* bothFailures(yield* serviceOf(model), withToolResult(result))
        for (const failure of failures) {
          expect([failure.retryable, failure.status]).toEqual([false, undefined])
          expect(failure.description).toMatch(/^the provider request could not be built from this prompt /)
          expect(failure.description).toMatch(error)
          expect(failure.description).toContain("it is not retried")
        }
        expect(model.calls).toHaveLength(0)
      }))
  }

  const thrown: ReadonlyArray<readonly [string, unknown, boolean]> = [
    ["RangeError: Maximum call stack size exceeded (the provider's JSON.stringify)", new RangeError("Maximum call stack size exceeded"), false],
    ["TypeError: Converting circular structure to JSON", new TypeError("Converting circular structure to JSON"), false],
    ["TypeError: Do not know how to serialize a BigInt", new TypeError("Do not know how to serialize a BigInt"), false],
    ["the AI SDK's InvalidPromptError", Object.assign(new Error("Invalid prompt: messages must not be empty"), { name: "AI_InvalidPromptError" }), false],
    ["the AI SDK's UnsupportedFunctionalityError", Object.assign(new Error("'file part media type video/mp4' functionality not supported."), { name: "AI_UnsupportedFunctionalityError" }), false],
    // still retried: the network
    ["TypeError: fetch failed", new TypeError("fetch failed"), true],
    ["TypeError: terminated", new TypeError("terminated"), true],
    ["a TypeError caused by ECONNRESET", new TypeError("other side closed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }), true],
    ["Error: socket hang up", new Error("socket hang up"), true]
  ]
  it.effect("what doGenerate / doStream rejects with: serialisation errors and refused prompts are not retryable, network errors are", () =>
    Effect.gen(function*() {
      const model = fake(thrown.flatMap(([, error]) => [{ throws: error }, { throws: error }]))
      const service = yield* serviceOf(model)
      const table: Array<readonly [string, boolean | undefined, boolean | undefined]> = []
      for (const [name] of thrown) {
        const [generated, streamed] = yield* bothFailures(service, request("Hi"))
        table.push([name, generated.retryable, streamed.retryable])
      }
      expect(table).toEqual(thrown.map(([name, , retryable]) => [name, retryable, retryable]))
    }))

  it.live("under Chain.run with ModelRetry.schedule: one attempt, and the RunError says what to look for", () =>
    Effect.gen(function*() {
      const model = fake([{ throws: new RangeError("Maximum call stack size exceeded") }, { content: [{ type: "text", text: "never" }] }])
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }).pipe(
          Effect.provide(ChatModel.fromAiSdk(model))
        )
      )
      expect(model.calls).toHaveLength(1)
      if (error._tag !== "RunError") throw new Error(`expected a RunError, got ${error._tag}`)
      expect(failureIn(Exit.fail(error)).retryable).toBe(false)
      expect(error.message).toBe(
        "The model call failed: the provider request could not be built from this prompt (RangeError: Maximum call stack size exceeded); " +
          "it is not retried, since the same prompt fails the same way: look in the chain for tool arguments or results that are nested " +
          "too deeply, cyclic, or hold values JSON cannot represent (a BigInt, a function)"
      )
    }))
})

// -----------------------------------------------------------------------------
// ModelRetry
// -----------------------------------------------------------------------------

const failed = (fields: { readonly retryable?: boolean; readonly status?: number; readonly retryAfterMillis?: number } = {}) =>
  new LoopError.ModelCallFailed({ description: "failed", cause: undefined, ...fields })

interface RetryRow {
  readonly name: string
  readonly options?: ModelRetry.Options
  /** The error of each attempt in turn; past the list, the attempt succeeds. */
  readonly errors: ReadonlyArray<ChatModel.ChatModelError>
  /** The clock (ms) at each attempt. */
  readonly at: ReadonlyArray<number>
  readonly succeeds: boolean
}

const always = (error: ChatModel.ChatModelError, n = 20) => Array.from({ length: n }, () => error)

const retryRows: ReadonlyArray<RetryRow> = [
  { name: "non-retryable (400) stops at once", errors: [failed({ status: 400, retryable: false })], at: [0], succeeds: false },
  {
    name: "a non-retryable failure after a retryable one stops there",
    errors: [failed({ status: 500, retryable: true }), failed({ status: 400, retryable: false }), failed()],
    at: [0, 500],
    succeeds: false
  },
  {
    name: "ScriptExhausted is not retried",
    errors: [new ChatModel.ScriptExhausted({ scripted: 1, request: 2, lastMessage: "user: hi" })],
    at: [0],
    succeeds: false
  },
  { name: "defaults: 500 ms doubling, 3 retries", errors: always(failed()), at: [0, 500, 1500, 3500], succeeds: false },
  { name: "retryable unset counts as retryable", errors: [failed(), failed()], at: [0, 500, 1500], succeeds: true },
  {
    name: "backoff doubles and is capped at max",
    options: { base: "1 second", max: "3 seconds", times: 5 },
    errors: always(failed()),
    at: [0, 1000, 3000, 6000, 9000, 12000],
    succeeds: false
  },
  {
    name: "retry-after wins when longer than the backoff",
    errors: always(failed({ retryAfterMillis: 2000 })),
    at: [0, 2000, 4000, 6000],
    succeeds: false
  },
  {
    name: "the backoff wins when longer than retry-after",
    errors: always(failed({ retryAfterMillis: 700 })),
    at: [0, 700, 1700, 3700],
    succeeds: false
  },
  {
    name: "retry-after beyond max still wins",
    options: { base: "100 millis", max: "1 second" },
    errors: always(failed({ retryAfterMillis: 5000 })),
    at: [0, 5000, 10000, 15000],
    succeeds: false
  },
  { name: "times: 1", options: { times: 1 }, errors: always(failed()), at: [0, 500], succeeds: false },
  { name: "times: 0 never retries", options: { times: 0 }, errors: always(failed()), at: [0], succeeds: false },
  { name: "recovers on the third attempt", errors: [failed(), failed({ status: 503 })], at: [0, 500, 1500], succeeds: true },
  {
    name: "recovers on the last allowed attempt",
    options: { times: 2, base: "250 millis" },
    errors: [failed(), failed()],
    at: [0, 250, 750],
    succeeds: true
  }
]

describe("ModelRetry.schedule (TestClock, exact attempt times)", () => {
  for (const row of retryRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const at: Array<number> = []
        const attempt = Effect.flatMap(Clock.currentTimeMillis, (now) => {
          at.push(now)
          const error = row.errors[at.length - 1]
          return error === undefined ? Effect.succeed("ok") : Effect.fail(error)
        })
        const fiber = yield* Effect.forkChild(Effect.exit(Effect.retry(attempt, ModelRetry.schedule(row.options))))
        yield* TestClock.adjust("1 minute")
        const exit = yield* Fiber.join(fiber)
        expect(at).toEqual(row.at)
        expect(Exit.isSuccess(exit)).toBe(row.succeeds)
        if (!row.succeeds) expect(exit).toEqual(Exit.fail(row.errors[row.at.length - 1]))
      }))
  }

  it.effect("through the bridge: a 429 with retry-after: 2 is retried at exactly 2 s (not at 1999 ms); the run recovers", () =>
    Effect.gen(function*() {
      const model = fake([
        { throws: { name: "AI_APICallError", message: "Rate limited", statusCode: 429, isRetryable: true, responseHeaders: { "retry-after": "2" } } },
        { content: [{ type: "text", text: "Hello after the wait." }] }
      ])
      const fiber = yield* Effect.forkChild(
        Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule() }).pipe(
          Effect.provide(ChatModel.fromAiSdk(model))
        )
      )
      yield* settle
      expect(model.calls).toHaveLength(1)
      yield* TestClock.adjust("1999 millis")
      yield* settle
      expect([model.calls.length, isDone(fiber)]).toEqual([1, false])
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect([model.calls.length, isDone(fiber)]).toEqual([2, true])
      const outcome = yield* Fiber.join(fiber)
      expect(transcript(outcome.chain.messages)).toEqual(["user: Hi", "assistant: Hello after the wait."])
      expect(outcome.chain.runCount).toBe(1)
    }))

  it.effect("through the bridge: a real 400 APICallError is not retried; the RunError keeps the chain as before the call", () =>
    Effect.gen(function*() {
      const model = fake([{ throws: apiError(400, { message: "Invalid value for 'temperature'" }) }])
      const chain = Chain.make({ system: "Be brief.", user: "Hi" })
      const fiber = yield* Effect.forkChild(Effect.flip(
        Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule() }).pipe(Effect.provide(ChatModel.fromAiSdk(model)))
      ))
      yield* settle
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      if (error._tag !== "RunError") throw new Error(`expected a RunError, got ${error._tag}`)
      expect(model.calls).toHaveLength(1)
      const reason = failureIn(Exit.fail(error))
      expect([reason.status, reason.retryable, reason.description]).toEqual([
        400,
        false,
        "Invalid value for 'temperature'"
      ])
      expect(yield* Chain.encode(error.chain)).toEqual(yield* Chain.encode(chain))
    }))

  it.effect("observed retries: each failed attempt is a ModelCallFailed event, numbered, before the retry", () =>
    Effect.gen(function*() {
      const model = fake([
        { throws: apiError(503) },
        { throws: apiError(429, { headers: { "retry-after-ms": "1200" } }) },
        { content: [{ type: "text", text: "Third time lucky." }] }
      ])
      const seen: Array<string> = []
      const observer: RunEvent.Observer = {
        streaming: false,
        emit: (event) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sync(() => {
              if (event._tag === "ModelCallFailed") seen.push(`${now}: attempt ${event.attempt} failed (${event.message})`)
              if (event._tag === "ModelCallStarted") seen.push(`${now}: call ${event.call} started`)
            }))
      }
      const fiber = yield* Effect.forkChild(
        Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule() }).pipe(
          Effect.provide(ChatModel.fromAiSdk(model)),
          Effect.provideService(RunEvent.Observer, observer)
        )
      )
      // each promise must settle before the clock moves on, so the clock is moved to each retry in turn
      yield* settle
      yield* TestClock.adjust("500 millis")
      yield* settle
      yield* TestClock.adjust("1199 millis")
      yield* settle
      expect(model.calls).toHaveLength(2)
      yield* TestClock.adjust("1 millis")
      yield* settle
      const outcome = yield* Fiber.join(fiber)
      expect(Chain.text(outcome.chain)).toBe("Third time lucky.")
      expect(seen).toEqual([
        "0: call 1 started",
        "0: attempt 1 failed (The model call failed (HTTP 503): HTTP 503)",
        "500: call 1 started",
        "500: attempt 2 failed (The model call failed (HTTP 429): HTTP 429)",
        "1700: call 1 started"
      ])
    }))
})

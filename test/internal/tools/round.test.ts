import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, Layer, Schema, Stream } from "effect"
import { AiError, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { compile } from "../../../src/internal/tools/compile.ts"
import { runCall, runCalls } from "../../../src/internal/tools/round.ts"
import type { ToolResult } from "../../../src/ToolCall.ts"

// -----------------------------------------------------------------------------
// tools
// -----------------------------------------------------------------------------

/** Transforming parameters and success schemas: encoded and typed values differ. */
const Parse = Tool.make("parse", {
  parameters: Schema.Struct({ n: Schema.NumberFromString }),
  success: Schema.Struct({ doubled: Schema.NumberFromString, label: Schema.String }),
  failureMode: "return"
})

/** Default failure mode ("error"), transforming success schema. */
const Strict = Tool.make("strict", {
  parameters: Schema.Struct({ n: Schema.Number }),
  success: Schema.NumberFromString
})

/** A failure schema (transforming), failureMode "return"; the handler fails. */
const Risky = Tool.make("risky", {
  parameters: Schema.Struct({ code: Schema.String }),
  success: Schema.String,
  failure: Schema.Struct({ code: Schema.String, retryIn: Schema.NumberFromString }),
  failureMode: "return"
})

/** The handler returns a value that fails the success schema. */
const Liar = Tool.make("liar", {
  success: Schema.Number,
  failureMode: "return"
})

/** The handler dies. */
const Explode = Tool.make("explode", {
  success: Schema.String,
  failureMode: "return"
})

/** The handler fails with an AiErrorReason. */
const Flaky = Tool.make("flaky", {
  success: Schema.String,
  failureMode: "return"
})

/** Reports the tool call id and emits a preliminary result. */
const Progress = Tool.make("progress", {
  success: Schema.Struct({ id: Schema.String, step: Schema.Number }),
  failureMode: "return"
})

/** The handler interrupts itself. */
const Quit = Tool.make("quit", {
  success: Schema.String,
  failureMode: "return"
})

/** Sleeps `ms`, then returns it. */
const Sleepy = Tool.make("sleepy", {
  parameters: Schema.Struct({ ms: Schema.Number }),
  success: Schema.Number
})

const toolkit = Toolkit.make(Parse, Strict, Risky, Liar, Explode, Flaky, Progress, Quit, Sleepy)
const ALL_NAMES = ["parse", "strict", "risky", "liar", "explode", "flaky", "progress", "quit", "sleepy"]

const completed: Array<number> = []

const handlers = toolkit.toLayer({
  parse: ({ n }) => Effect.succeed({ doubled: n * 2, label: `n=${n}` }),
  strict: ({ n }) => Effect.succeed(n + 1),
  risky: ({ code }) => Effect.fail({ code, retryIn: 5 }),
  liar: () => Effect.succeed("not a number" as unknown as number),
  explode: () => Effect.die(new Error("kaboom")),
  flaky: () => Effect.fail(new AiError.UnknownError({ description: "upstream flaked" })),
  progress: (_, context) =>
    Effect.gen(function*() {
      yield* context.preliminary({ id: context.toolCallId ?? "none", step: 1 })
      return { id: context.toolCallId ?? "none", step: 2 }
    }),
  quit: () => Effect.interrupt,
  sleepy: ({ ms }) =>
    Effect.sleep(`${ms} millis`).pipe(
      Effect.as(ms),
      Effect.tap(() => Effect.sync(() => completed.push(ms)))
    )
})

const compiled = compile(toolkit)

/** The handler context, as `Chain.run` would see it. */
const servicesEffect = Effect.context<never>().pipe(Effect.provide(handlers))

interface Final {
  readonly result: unknown
  readonly encodedResult: unknown
  readonly isFailure: boolean
  readonly failureOrigin?: string | undefined
}

/** `Toolkit.handle` with the toolkit's typing erased (for invalid params and unknown names). */
interface ErasedWithHandler {
  readonly handle: (
    name: string,
    params: unknown,
    toolCallId?: string
  ) => Effect.Effect<Stream.Stream<Tool.HandlerResult<Tool.Any>, unknown>, AiError.AiError>
}

const withHandlerEffect = Effect.map(toolkit, (w) => w as unknown as ErasedWithHandler).pipe(
  Effect.provide(handlers)
)

/** Runs `Toolkit.handle` and returns the final (non-preliminary) result. */
const toolkitHandle = (name: string, params: unknown, toolCallId?: string) =>
  Effect.gen(function*() {
    const withHandler = yield* withHandlerEffect
    const stream = yield* withHandler.handle(name, params, toolCallId)
    const results = yield* Stream.runCollect(stream)
    const finals = results.filter((r) => !r.preliminary)
    expect(finals).toHaveLength(1)
    const final = finals[0]
    return {
      result: final.result,
      encodedResult: final.encodedResult,
      isFailure: final.isFailure,
      failureOrigin: final.failureOrigin,
      all: results
    }
  })

const ours = (name: string, params: unknown, id = "call_1") =>
  Effect.flatMap(servicesEffect, (services) => runCall(compiled, { id, name, params }, services))

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

describe("runCall keeps Toolkit.handle's semantics", () => {
  it.effect("success: result and encoded equal Toolkit's result and encodedResult", () =>
    Effect.gen(function*() {
      const mine = yield* ours("parse", { n: "21" }, "c1")
      const theirs: Final = yield* toolkitHandle("parse", { n: "21" }, "c1")
      expect(theirs.isFailure).toBe(false)
      expect(mine).toEqual({
        id: "c1",
        name: "parse",
        isFailure: false,
        result: theirs.result,
        encoded: theirs.encodedResult
      })
      // the schemas really transform: typed and encoded values differ
      expect(mine.result).toEqual({ doubled: 42, label: "n=21" })
      expect(mine.encoded).toEqual({ doubled: "42", label: "n=21" })
      expect(mine.failureOrigin).toBeUndefined()
    }))

  it.effect("success with the default failure mode and a transforming success schema", () =>
    Effect.gen(function*() {
      const mine = yield* ours("strict", { n: 1 })
      const theirs: Final = yield* toolkitHandle("strict", { n: 1 })
      expect(mine.isFailure).toBe(false)
      expect(mine.result).toEqual(theirs.result)
      expect(mine.encoded).toEqual(theirs.encodedResult)
      expect(mine.result).toBe(2)
      expect(mine.encoded).toBe("2")
    }))

  it.effect("a handler failure in 'return' mode: a failed 'handler' result, like Toolkit's", () =>
    Effect.gen(function*() {
      const mine = yield* ours("risky", { code: "E42" }, "r1")
      const theirs: Final = yield* toolkitHandle("risky", { code: "E42" }, "r1")
      expect(theirs.isFailure).toBe(true)
      expect(theirs.failureOrigin).toBe("handler")
      expect(mine.isFailure).toBe(true)
      expect(mine.failureOrigin).toBe("handler")
      expect(mine.id).toBe("r1")
      expect(mine.name).toBe("risky")
    }))

  it.effect("a handler failure in 'return' mode: result and encoded equal Toolkit's", () =>
    Effect.gen(function*() {
      const mine = yield* ours("risky", { code: "E42" }, "r1")
      const theirs: Final = yield* toolkitHandle("risky", { code: "E42" }, "r1")
      expect(mine.result).toEqual(theirs.result)
      expect(mine.encoded).toEqual(theirs.encodedResult)
      expect(mine.result).toEqual({ code: "E42", retryIn: 5 })
      expect(mine.encoded).toEqual({ code: "E42", retryIn: "5" })
    }))

  it.effect("a handler failing with an AiErrorReason: a failed 'handler' result", () =>
    Effect.gen(function*() {
      const mine = yield* ours("flaky", {})
      const theirs: Final = yield* toolkitHandle("flaky", {})
      expect(theirs.isFailure).toBe(true)
      expect(mine.isFailure).toBe(true)
      expect(mine.failureOrigin).toBe("handler")
    }))

  it.effect("a handler failing with an AiErrorReason: wrapped in an AiError with the same reason", () =>
    Effect.gen(function*() {
      const mine = yield* ours("flaky", {})
      const theirs: Final = yield* toolkitHandle("flaky", {})
      expect(AiError.isAiError(mine.result)).toBe(true)
      expect(AiError.isAiError(theirs.result)).toBe(true)
      if (!AiError.isAiError(mine.result) || !AiError.isAiError(theirs.result)) return
      expect(mine.result.reason._tag).toBe("UnknownError")
      expect(mine.result.reason._tag).toBe(theirs.result.reason._tag)
      expect(mine.result.reason.message).toBe(theirs.result.reason.message)
      expect(mine.result.method).toBe(theirs.result.method)
      expect(mine.result.message).toContain("upstream flaked")
      // encoded as an AiError through the tool's failure schema
      const encoded = mine.encoded as { readonly _tag: string; readonly reason: unknown }
      const theirsEncoded = theirs.encodedResult as { readonly _tag: string; readonly reason: unknown }
      expect(encoded._tag).toBe("AiError")
      expect(encoded.reason).toEqual(theirsEncoded.reason)
    }))

  it.effect("invalid params in 'return' mode: both report failure; ours with origin 'parameters' naming the tool", () =>
    Effect.gen(function*() {
      const mine = yield* ours("parse", { n: 5 }, "bad")
      const theirs: Final = yield* toolkitHandle("parse", { n: 5 }, "bad")
      expect(theirs.isFailure).toBe(true)
      expect(theirs.failureOrigin).toBe("parameters")
      expect(mine.isFailure).toBe(true)
      expect(mine.failureOrigin).toBe("parameters")
      expect(mine.id).toBe("bad")
      expect(String(mine.encoded)).toContain("'parse'")
      expect(String(mine.encoded)).toContain("Invalid arguments")
      // what is wrong is part of the message
      expect(String(mine.encoded)).toMatch(/string/i)
    }))

  it.effect("invalid params with the default 'error' mode: Toolkit fails, ours still returns a failed result", () =>
    Effect.gen(function*() {
      const mine = yield* ours("strict", { n: "not a number" })
      expect(mine.isFailure).toBe(true)
      expect(mine.failureOrigin).toBe("parameters")
      expect(String(mine.encoded)).toContain("'strict'")
      const theirs = yield* Effect.flip(toolkitHandle("strict", { n: "not a number" }))
      expect(AiError.isAiError(theirs)).toBe(true)
      if (AiError.isAiError(theirs)) expect(theirs.reason._tag).toBe("ToolParameterValidationError")
    }))

  it.effect("unknown tool: ours is a failed 'unknown-tool' result listing the tools; Toolkit fails with ToolNotFoundError", () =>
    Effect.gen(function*() {
      const mine = yield* ours("nope", { x: 1 }, "u1")
      expect(mine).toMatchObject({ id: "u1", name: "nope", isFailure: true, failureOrigin: "unknown-tool" })
      const message = String(mine.encoded)
      expect(message).toContain("'nope'")
      for (const name of ALL_NAMES) expect(message).toContain(name)
      expect(mine.result).toBe(message)

      const theirs = yield* Effect.flip(toolkitHandle("nope", { x: 1 }))
      expect(AiError.isAiError(theirs)).toBe(true)
      if (!AiError.isAiError(theirs)) return
      expect(theirs.reason._tag).toBe("ToolNotFoundError")
    }))

  it.effect("an unknown tool in an empty toolkit says there are none", () =>
    Effect.gen(function*() {
      const result = yield* runCall(compile(Toolkit.make()), { id: "x", name: "anything", params: {} }, yield* servicesEffect)
      expect(result.failureOrigin).toBe("unknown-tool")
      expect(String(result.encoded)).toContain("(none)")
    }))

  it.effect("a tool name inherited from Object.prototype is an unknown tool", () =>
    Effect.gen(function*() {
      const result = yield* ours("toString", {})
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("unknown-tool")
    }))

  it.effect("a result that fails the success schema: ours is a failed 'result' result; Toolkit's stream fails", () =>
    Effect.gen(function*() {
      const mine = yield* ours("liar", {})
      expect(mine.isFailure).toBe(true)
      expect(mine.failureOrigin).toBe("result")
      expect(mine.result).toBe("not a number")
      expect(String(mine.encoded)).toContain("'liar'")
      expect(String(mine.encoded)).toContain("success schema")

      const theirs = yield* Effect.flip(toolkitHandle("liar", {}))
      expect(AiError.isAiError(theirs)).toBe(true)
      if (AiError.isAiError(theirs)) expect(theirs.reason._tag).toBe("ToolResultEncodingError")
    }))

  it.effect("a handler that dies: a failed result, not a defect", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(ours("explode", {}))
      expect(Exit.isSuccess(exit)).toBe(true)
      if (!Exit.isSuccess(exit)) return
      const result = exit.value
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("handler")
      expect(String(result.encoded)).toContain("'explode'")
    }))

  it.effect("a handler that dies: the message says what the defect was", () =>
    Effect.gen(function*() {
      const result = yield* ours("explode", {})
      expect(String(result.encoded)).toContain("kaboom")
      expect(Cause.isCause(result.result)).toBe(false)
    }))

  it.effect("a missing handler: a failed result naming the tool", () =>
    Effect.gen(function*() {
      // handlers for `parse` only: the other tools have no handler in this context
      const partial = Toolkit.make(Parse)
      const services = yield* Effect.context<never>().pipe(
        Effect.provide(partial.toLayer({ parse: ({ n }) => Effect.succeed({ doubled: n, label: "partial" }) }))
      )
      const present = yield* runCall(compiled, { id: "p", name: "parse", params: { n: "1" } }, services)
      expect(present.isFailure).toBe(false)
      expect(present.result).toEqual({ doubled: 1, label: "partial" })

      const missing = yield* runCall(compiled, { id: "m", name: "risky", params: { code: "x" } }, services)
      expect(missing.isFailure).toBe(true)
      expect(missing.id).toBe("m")
      expect(missing.failureOrigin).toBe("handler")
      expect(String(missing.encoded)).toContain("'risky'")
      expect(String(missing.encoded)).toContain("no handler")
    }))

  it.effect("the handler gets the tool call id; preliminary results are dropped and the final one kept", () =>
    Effect.gen(function*() {
      const mine = yield* ours("progress", {}, "p-7")
      const theirs = yield* toolkitHandle("progress", {}, "p-7")
      expect(theirs.all.some((r) => r.preliminary)).toBe(true)
      expect(mine.isFailure).toBe(false)
      expect(mine.result).toEqual({ id: "p-7", step: 2 })
      expect(mine.result).toEqual(theirs.result)
      expect(mine.encoded).toEqual(theirs.encodedResult)
    }))

  it.effect("the handler runs with the services its layer was built with", () =>
    Effect.gen(function*() {
      class Greeting extends Context.Service<Greeting, { readonly word: string }>()("test/Greeting") {}
      const Greet = Tool.make("greet", {
        parameters: Schema.Struct({ name: Schema.String }),
        success: Schema.String,
        dependencies: [Greeting]
      })
      const greetToolkit = Toolkit.make(Greet)
      const greetHandlers = greetToolkit.toLayer({
        greet: ({ name }) => Effect.map(Effect.service(Greeting), (greeting) => `${greeting.word}, ${name}`)
      }).pipe(Layer.provide(Layer.succeed(Greeting, { word: "Hello" })))
      // Greeting itself is not in this context: only the handler (which captured it) is
      const services = yield* Effect.context<never>().pipe(Effect.provide(greetHandlers))
      const mine = yield* runCall(compile(greetToolkit), { id: "g", name: "greet", params: { name: "Ada" } }, services)
      expect(mine).toEqual({ id: "g", name: "greet", isFailure: false, result: "Hello, Ada", encoded: "Hello, Ada" })

      // Toolkit.handle's type asks for Greeting too; at run time it also uses the captured services
      const withHandler = (yield* Effect.provide(greetToolkit, greetHandlers)) as unknown as ErasedWithHandler
      const theirs = yield* withHandler.handle("greet", { name: "Ada" }).pipe(Effect.flatMap(Stream.runCollect))
      expect(theirs.at(-1)?.result).toBe(mine.result)
    }))

  it.effect("interrupting a running call interrupts it (no failed result is produced)", () =>
    Effect.gen(function*() {
      const services = yield* servicesEffect
      const fiber = yield* Effect.forkChild(runCall(compiled, { id: "s", name: "sleepy", params: { ms: 1000 } }, services))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Cause.hasInterruptsOnly(exit.cause)).toBe(true)
    }))

  it.effect("a handler that interrupts itself: the interruption propagates (no failed result)", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(ours("quit", {}))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Cause.hasInterruptsOnly(exit.cause)).toBe(true)
    }))

  it("compile is cached per toolkit", () => {
    expect(compile(toolkit)).toBe(compiled)
    expect(compiled.tools.map((tool) => tool.name)).toEqual(ALL_NAMES)
    expect(compiled.available).toBe(ALL_NAMES.join(", "))
  })
})

describe("a handler that returns a completed effect", () => {
  /** The same handlers, each returning its effect unevaluated (no Exit): run in a fiber as any handler. */
  const deferred = toolkit.toLayer({
    parse: ({ n }) => Effect.suspend(() => Effect.succeed({ doubled: n * 2, label: `n=${n}` })),
    strict: ({ n }) => Effect.suspend(() => Effect.succeed(n + 1)),
    risky: ({ code }) => Effect.suspend(() => Effect.fail({ code, retryIn: 5 })),
    liar: () => Effect.suspend(() => Effect.succeed("not a number" as unknown as number)),
    explode: () => Effect.suspend(() => Effect.die(new Error("kaboom"))),
    flaky: () => Effect.suspend(() => Effect.fail(new AiError.UnknownError({ description: "upstream flaked" }))),
    progress: () => Effect.die(new Error("not called")),
    quit: () => Effect.die(new Error("not called")),
    sleepy: () => Effect.die(new Error("not called"))
  })
  const calls = [
    { id: "a", name: "parse", params: { n: "2" } },
    { id: "b", name: "strict", params: { n: 1 } },
    { id: "c", name: "risky", params: { code: "E1" } },
    { id: "d", name: "liar", params: {} },
    { id: "e", name: "explode", params: {} },
    { id: "f", name: "flaky", params: {} }
  ]

  it.effect("settles, in a round, as the same effect run in a fiber does", () =>
    Effect.gen(function*() {
      const now = yield* runCalls(compiled, calls, "unbounded").pipe(Effect.provide(handlers))
      const run = yield* runCalls(compiled, calls, "unbounded").pipe(Effect.provide(deferred))
      expect(now).toHaveLength(calls.length)
      expect(now).toStrictEqual(run)
    }))
})

describe("runCalls", () => {
  it.effect("returns results in call order with 'unbounded' concurrency even when earlier calls sleep longer", () =>
    Effect.gen(function*() {
      completed.length = 0
      const calls = [
        { id: "a", name: "sleepy", params: { ms: 30 } },
        { id: "b", name: "sleepy", params: { ms: 10 } },
        { id: "c", name: "nope", params: {} },
        { id: "d", name: "sleepy", params: { ms: 20 } }
      ]
      const fiber = yield* Effect.forkChild(runCalls(compiled, calls, "unbounded").pipe(Effect.provide(handlers)))
      yield* Effect.yieldNow
      yield* TestClock.adjust("29 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      // concurrent: all done after the longest sleep (30 ms), not the sum (60 ms)
      yield* TestClock.adjust("1 millis")
      const exit = fiber.pollUnsafe()
      expect(exit !== undefined && Exit.isSuccess(exit)).toBe(true)
      const results: ReadonlyArray<ToolResult> = yield* Fiber.join(fiber)
      expect(completed).toEqual([10, 20, 30])
      expect(results.map((r) => r.id)).toEqual(["a", "b", "c", "d"])
      expect(results.map((r) => r.result)).toEqual([30, 10, results[2].result, 20])
      expect(results[2].failureOrigin).toBe("unknown-tool")
    }))

  it.effect("concurrency 1 runs the calls one after another, still in call order", () =>
    Effect.gen(function*() {
      completed.length = 0
      const calls = [
        { id: "a", name: "sleepy", params: { ms: 30 } },
        { id: "b", name: "sleepy", params: { ms: 10 } }
      ]
      const fiber = yield* Effect.forkChild(runCalls(compiled, calls, 1).pipe(Effect.provide(handlers)))
      yield* Effect.yieldNow
      yield* TestClock.adjust("39 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const results = yield* Fiber.join(fiber)
      expect(completed).toEqual([30, 10])
      expect(results.map((r) => [r.id, r.result])).toEqual([["a", 30], ["b", 10]])
    }))

  it.effect("a single call and an empty round", () =>
    Effect.gen(function*() {
      const one = yield* runCalls(compiled, [{ id: "x", name: "parse", params: { n: "2" } }], "unbounded").pipe(
        Effect.provide(handlers)
      )
      expect(one).toHaveLength(1)
      expect(one[0]).toMatchObject({ id: "x", isFailure: false, result: { doubled: 4, label: "n=2" } })
      const none = yield* runCalls(compiled, [], "unbounded").pipe(Effect.provide(handlers))
      expect(none).toEqual([])
    }))
})

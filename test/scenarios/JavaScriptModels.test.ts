/**
 * A model or a tool handler written in JavaScript, outside the types: a handler that returns
 * no Effect (an async function) fails its own call; a model whose `generate` returns no Effect,
 * fails with a plain `Error`, or answers with something that is not a list of response parts
 * ends the run with `ModelCallFailed`; a finish part without usage is read as no usage. None of
 * them dies, and none escapes `Effect.exit` (helper-39's probes). A model whose `info` getter
 * throws is a model without info: traced, structured and ensemble runs go on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, ModelRetry, type RunEvent, StructuredOutput } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { recording } from "../support/recordingTracer.ts"
import * as AiSdk from "../../src/ai-sdk/index.ts"

/**
 * `effect`'s exit as a caller observes it with `Effect.exit`. A non-Effect met by the runtime
 * kills the fiber past `Effect.exit`; `runPromise` then rejects, reported here as an escape.
 */
const observe = async <A, E>(effect: Effect.Effect<A, E>): Promise<Exit.Exit<A, E> | "escaped"> => {
  try {
    return await Effect.runPromise(Effect.exit(effect))
  } catch {
    return "escaped"
  }
}

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)

/** A ChatModel service written in JavaScript. */
const custom = (generate: () => unknown, stream: () => unknown = () => Stream.empty) =>
  Layer.succeed(ChatModel.ChatModel, { generate, stream } as unknown as ChatModel.ChatModel["Service"])

describe("a tool handler that returns no Effect fails its own call; the run goes on", () => {
  it.each([
    { name: "an async function", handler: async () => "x", says: "the handler returned a Promise, not an Effect" },
    { name: "null", handler: () => null, says: "the handler returned no Effect" }
  ])("$name", async ({ handler, says }) => {
    const model = ChatModel.scripted([{ toolCalls: [{ name: "echo", params: { q: "a" } }] }, { text: "done" }])
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, toolkit.toLayer({ echo: handler as never })])
      )
    )
    if (exit === "escaped" || Exit.isFailure(exit)) throw new Error(`the run did not succeed: ${exit === "escaped" ? exit : Cause.pretty(exit.cause)}`)
    const [result] = exit.value.chain.lastToolResults
    expect(result).toMatchObject({ id: "call_1_1", isFailure: true, failureOrigin: "handler" })
    expect(String(result.encoded)).toContain(says)
    expect(model.calls).toBe(2)
  })
})

describe("a JavaScript model's broken answer ends the run with ModelCallFailed", () => {
  it.each([
    { name: "generate returns a Promise", generate: async () => [], says: "returned a Promise that is not an Effect" },
    { name: "generate returns null", generate: () => null, says: "returned something that is not an Effect" },
    { name: "generate fails with a plain Error", generate: () => Effect.fail(new Error("HTTP 500")), says: "HTTP 500" },
    { name: "generate dies", generate: () => Effect.die(new Error("boom")), says: "boom" },
    { name: "it answers null", generate: () => Effect.succeed(null), says: "the model answered with null, not a list of response parts" },
    { name: "it answers a string", generate: () => Effect.succeed("hello"), says: "string, not a list of response parts" },
    { name: "it answers [null]", generate: () => Effect.succeed([null]), says: "part 1 is not a response part" },
    { name: "it answers later with [{}]", generate: () => Effect.as(Effect.yieldNow, [{}]), says: "part 1 is not a response part" }
  ])("$name", async ({ generate, says }) => {
    const chain = Chain.make({ user: "hi" })
    const exit = await observe(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(custom(generate))))
    if (exit === "escaped") throw new Error("escaped Effect.exit")
    if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Option.getOrThrow(Exit.findErrorOption(exit))
    expect(error.reason._tag).toBe("ModelCallFailed")
    expect(error.message).toContain(says)
    expect(error.chain.messages).toEqual(chain.messages)
  })
})

describe("a finish part without usable usage is read as no usage", () => {
  it.each([
    { name: "usage null", usage: null },
    { name: "usage a string", usage: "lots" },
    { name: "token counts null", usage: { inputTokens: null, outputTokens: { total: -1 } } }
  ])("$name: Chain.stream finishes, its event reports no usage", async ({ usage }) => {
    const parts = [{ type: "text-delta", id: "t", delta: "hi" }, { type: "finish", reason: "stop", usage }]
    const events: Array<RunEvent.RunEvent> = []
    const exit = await observe(
      Stream.runForEach(Chain.stream(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }), (event) =>
        Effect.sync(() => events.push(event))).pipe(
          Effect.provide(custom(() => Effect.succeed(parts), () => Stream.fromIterable(parts)))
        )
    )
    if (exit === "escaped" || Exit.isFailure(exit)) throw new Error(`the stream failed: ${exit === "escaped" ? exit : Cause.pretty(exit.cause)}`)
    const finished = events.find((event) => event._tag === "ModelCallFinished")
    expect(finished).toMatchObject({ _tag: "ModelCallFinished", finishReason: "stop", usage: {} })
  })
})

describe("a model whose info getter throws is a model without info", () => {
  const answering = () => {
    const service = {
      generate: () => Effect.succeed([{ type: "text", text: "{\"ok\":true}" }]),
      stream: () => Stream.empty,
      get info(): ChatModel.ModelInfo {
        throw new Error("no info today")
      }
    }
    return Layer.succeed(ChatModel.ChatModel, service as unknown as ChatModel.ChatModel["Service"])
  }

  it.effect("a traced run finishes", () =>
    Effect.gen(function*() {
      const traced = recording()
      const outcome = yield* Chain.run(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(answering()),
        Effect.withTracer(traced.tracer)
      )
      expect(Chain.text(outcome.chain)).toBe("{\"ok\":true}")
    }))

  it.effect("a structured run with the auto strategy finishes", () =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "hi" }), {
        mode: Mode.whileNeedsResponse,
        output: StructuredOutput.make(Schema.Struct({ ok: Schema.Boolean }), { strategy: "auto" })
      }).pipe(Effect.provide(answering()))
      expect(outcome._tag === "Ok" && outcome.output).toEqual({ ok: true })
    }))

  it.effect("an ensemble task finishes", () =>
    Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      const output = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(answering()))
      expect(output.raw).toBe("{\"ok\":true}")
    }))
})

describe("a failure from outside loopwork (helper-41)", () => {
  /** A model that fails with `error` on its first `failures` calls, then answers. */
  const failing = (error: unknown, failures = 1) => {
    const state = { calls: 0 }
    const layer = custom(() => Effect.suspend(() => ++state.calls <= failures ? Effect.fail(error) : Effect.succeed([{ type: "text", text: "ok" }])))
    return { state, layer }
  }
  const retry = ModelRetry.schedule({ base: "1 millis" })

  it.effect.each([
    { name: "a plain Error (an HTTP 401 will not pass)", error: new Error("HTTP 401 Unauthorized"), status: undefined, says: "HTTP 401 Unauthorized" },
    { name: "a look-alike ModelCallFailed saying retryable: false", error: { _tag: "ModelCallFailed", description: "unauthorized", status: 401, retryable: false }, status: 401, says: "unauthorized" },
    { name: "a plain object", error: { code: 7 }, status: undefined, says: "{\"code\":7}" }
  ])("$name: not retried, its status kept", ({ error, says, status }) =>
    Effect.gen(function*() {
      const model = failing(error)
      const failure = yield* Effect.flip(Chain.run(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse, retry }).pipe(Effect.provide(model.layer)))
      expect(model.state.calls).toBe(1)
      expect(failure.reason).toMatchObject({ _tag: "ModelCallFailed", retryable: false })
      expect((failure.reason as { status?: number }).status).toBe(status)
      expect(failure.message).toContain(says)
    }))

  it.live("a look-alike that says it may be retried is retried", () =>
    Effect.gen(function*() {
      const model = failing({ _tag: "ModelCallFailed", description: "overloaded", status: 503, retryable: true })
      const outcome = yield* Chain.run(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse, retry }).pipe(Effect.provide(model.layer))
      expect(model.state.calls).toBe(2)
      expect(Chain.text(outcome.chain)).toBe("ok")
    }))
})

describe("an answer whose parts throw when read (helper-41)", () => {
  const throwingParams = () => [{ type: "tool-call", id: "c1", name: "echo", providerExecuted: false, get params(): unknown { throw new Error("params getter boom") } }]
  const throwingUsage = () => [{ type: "text", text: "hi" }, { type: "finish", reason: "stop", get usage(): unknown { throw new Error("usage getter boom") } }]

  it.each<{ readonly name: string; readonly parts: () => ReadonlyArray<unknown>; readonly streamed: boolean }>([
    { name: "tool-call params, Chain.run", parts: throwingParams, streamed: false },
    { name: "tool-call params, Chain.stream with a retry", parts: throwingParams, streamed: true },
    { name: "finish usage, Chain.run", parts: throwingUsage, streamed: false },
    { name: "finish usage, Chain.stream with a retry", parts: throwingUsage, streamed: true }
  ])("$name: ModelCallFailed saying the answer cannot be read, not blaming the schedule", async ({ parts, streamed }) => {
    const layer = custom(() => Effect.succeed(parts()), () => Stream.fromIterable(parts()))
    const options = { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }
    const chain = Chain.make({ user: "hi", toolkit })
    const run = streamed ? Stream.runDrain(Chain.stream(chain, options)) : Chain.run(chain, options)
    const exit = await observe(run.pipe(Effect.provide([layer, toolkit.toLayer({ echo: () => Effect.succeed("x") })])) as Effect.Effect<unknown, unknown>)
    if (exit === "escaped" || Exit.isSuccess(exit)) throw new Error(`expected a typed failure, got ${exit === "escaped" ? exit : "a success"}`)
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Option.getOrThrow(Exit.findErrorOption(exit)) as { message: string; reason: { _tag: string } }
    expect(error.reason._tag).toBe("ModelCallFailed")
    expect(error.message).toContain("the model's answer cannot be read")
    expect(error.message).toContain("getter boom")
    expect(error.message).not.toContain("retry schedule")
  })
})

describe("an answer behind a Proxy (helper-42)", () => {
  const answer = [{ type: "text", text: "hi" }]
  const trapped = () => new Proxy(Effect.succeed(answer), { getPrototypeOf() { throw new Error("no prototype for you") } })
  const revokedEffect = () => {
    const { proxy, revoke } = Proxy.revocable(Effect.succeed(answer), {})
    revoke()
    return proxy
  }

  it("a complete answer whose prototype cannot be read is run as any other Effect", async () => {
    const exit = await observe(Chain.run(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(custom(trapped))))
    if (exit === "escaped" || Exit.isFailure(exit)) throw new Error(`the run did not succeed: ${exit === "escaped" ? exit : Cause.pretty(exit.cause)}`)
    expect(Chain.text(exit.value.chain)).toBe("hi")
  })

  it.each([
    { name: "a revoked proxy from generate", generate: revokedEffect, stream: () => Stream.empty, streamed: false, says: "revoked" },
    { name: "a stream that is not a Stream", generate: () => Effect.succeed(answer), stream: () => "not a stream", streamed: true, says: "the model's stream returned something that is not a Stream" }
  ])("$name: ModelCallFailed, no defect", async ({ generate, says, stream, streamed }) => {
    const chain = Chain.make({ user: "hi" })
    const run = streamed
      ? Stream.runDrain(Chain.stream(chain, { mode: Mode.whileNeedsResponse }))
      : Chain.run(chain, { mode: Mode.whileNeedsResponse })
    const exit = await observe(run.pipe(Effect.provide(custom(generate, stream))) as Effect.Effect<unknown, unknown>)
    if (exit === "escaped" || Exit.isSuccess(exit)) throw new Error(`expected a typed failure, got ${exit === "escaped" ? exit : "a success"}`)
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Option.getOrThrow(Exit.findErrorOption(exit)) as { message: string; reason: { _tag: string } }
    expect(error.reason._tag).toBe("ModelCallFailed")
    expect(error.message).toContain(says)
  })
})

describe("an AI SDK provider whose whole response cannot be read", () => {
  const provider = (result: unknown) => ({
    specificationVersion: "v4",
    provider: "hostile",
    modelId: "m",
    supportedUrls: {},
    doGenerate: async () => result,
    doStream: async () => { throw new Error("not used") }
  })

  it.each([
    { name: "finishReason null", result: { content: [], finishReason: null, usage: {}, warnings: [] } },
    { name: "content null", result: { content: null, finishReason: { unified: "stop", raw: "stop" }, usage: {}, warnings: [] } },
    { name: "no result at all", result: null }
  ])("$name: the model's generate fails with ModelCallFailed, no defect", async ({ result }) => {
    const program = Effect.flatMap(Effect.service(ChatModel.ChatModel), (model) =>
      model.generate({ prompt: Prompt.make("hi"), tools: [], toolChoice: "auto" }))
    const exit = await observe(program.pipe(Effect.provide(AiSdk.ChatModel.fromAiSdk(provider(result) as never))) as Effect.Effect<unknown, unknown>)
    if (exit === "escaped" || Exit.isSuccess(exit)) throw new Error(`expected a typed failure, got ${exit === "escaped" ? exit : "a success"}`)
    expect(Cause.hasDies(exit.cause)).toBe(false)
    expect(Option.getOrThrow(Exit.findErrorOption(exit))).toMatchObject({ _tag: "ModelCallFailed", retryable: false })
  })
})

/**
 * JavaScript callers outside the types (helper-39's probes): a `Mode.loop` body that returns no
 * Effect or no Outcome, a handler failing with a revoked proxy, an Outcome that holds no chain or
 * no failure, options whose reads throw, an agent's model layer that fails to build and
 * `DurableChain.workflow` without options each give a typed failure (a Schema.TaggedError), never
 * a thrown TypeError, a defect, or a fiber that dies past `Effect.exit`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, ExternalTool, LoopError, Mode, ModelRetry, Outcome, Step } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableChain } from "../../src/durable/index.ts"

/**
 * The exit of `effect`, observed with `Effect.exit` inside the program (as a caller would).
 * A non-Effect met by the runtime kills the fiber past `Effect.exit`: `runPromise` then
 * rejects, which is reported here as an "escaped" defect.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const observe = async (effect: Effect.Effect<unknown, unknown, any>) => {
  try {
    return await Effect.runPromise(Effect.exit(effect as Effect.Effect<unknown, unknown, never>))
  } catch (escaped) {
    return Exit.die(new Error(`escaped Effect.exit: ${String(escaped)}`))
  }
}

/** Asserts a typed failure (no defect) tagged `tag`, whose reason (if any) is tagged `reason`. */
const expectTyped = (exit: Exit.Exit<unknown, unknown>, tag: string, reason?: string) => {
  if (Exit.isSuccess(exit)) return expect.unreachable("expected a typed failure, got a success")
  expect(Cause.hasDies(exit.cause), `defect: ${Cause.hasDies(exit.cause) ? String(Cause.squash(exit.cause)) : ""}`).toBe(false)
  const error = Cause.squash(exit.cause) as { _tag?: string; reason?: { _tag?: string } }
  expect(error?._tag).toBe(tag)
  if (reason !== undefined) expect(error.reason?._tag).toBe(reason)
}

/** Asserts no defect at all (a success, or a typed failure). */
const expectNoDefect = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isFailure(exit)) {
    expect(Cause.hasDies(exit.cause), `defect: ${Cause.hasDies(exit.cause) ? String(Cause.squash(exit.cause)) : ""}`).toBe(false)
  }
}

const revoked = () => {
  const revocable = Proxy.revocable({}, {})
  revocable.revoke()
  return revocable.proxy
}

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const kit = Toolkit.make(Echo)
const toolChain = Chain.make({ user: "hi", toolkit: kit })
const oneToolCall = () => ChatModel.scripted([{ toolCalls: [{ name: "echo", params: { q: "a" } }] }, { text: "done" }]).layer
const M = Mode.whileNeedsResponse

// -----------------------------------------------------------------------------
// 1. A Mode.loop body that breaks its contract
// -----------------------------------------------------------------------------

describe("a Mode.loop body from JavaScript", () => {
  it("Mode.loop with a body that returns null: RunError(InvalidInput)", async () => {
    const mode = ((chain: Chain.Chain) => Mode.loop(chain, (() => null) as never)) as unknown as Mode.Mode
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("Mode.loop with a body whose Effect succeeds with null: RunError(InvalidInput)", async () => {
    const mode = ((chain: Chain.Chain) => Mode.loop(chain, (() => Effect.succeed(null)) as never)) as unknown as Mode.Mode
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError", "InvalidInput")
    const error = Cause.squash((exit as Exit.Failure<unknown, unknown>).cause) as { message: string; reason: { field: string } }
    expect(error.reason.field).toBe("Mode.loop body")
    expect(error.message).toContain("(it succeeded with something that is not an Outcome)")
  })
})

// -----------------------------------------------------------------------------
// 2. A handler failing with a value that cannot be read
// -----------------------------------------------------------------------------

describe("a tool handler's failure", () => {
  it("a tool handler failing with a revoked Proxy: the call fails, the run goes on", async () => {
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    const exit = await observe(
      Chain.run(toolChain, { mode: M }).pipe(
        Effect.provide([oneToolCall(), kit.toLayer({ echo: (() => Effect.fail(revocable.proxy)) as never })])
      )
    )
    expectNoDefect(exit)
    if (Exit.isFailure(exit)) return expect.unreachable("the run failed")
    const [result] = (exit.value as Outcome.Final).chain.lastToolResults
    expect(result.isFailure).toBe(true)
    expect(String(result.encoded)).toContain("the handler failed with a value that cannot be read")
  })
})

// -----------------------------------------------------------------------------
// 3. Outcomes built by JavaScript modes and policies around a value that is not a chain
// -----------------------------------------------------------------------------

describe("an Outcome that holds no chain", () => {
  it("a mode succeeding with Outcome.Ok(null, 'done'): RunError(InvalidInput)", async () => {
    const mode = (() => Effect.succeed(new Outcome.Ok(null as never, "done"))) as unknown as Mode.Mode
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("a mode succeeding with Outcome.Continue(null): RunError", async () => {
    const mode = (() => Effect.succeed(new Outcome.Continue(null as never))) as unknown as Mode.Mode
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError")
  })

  it("an onMaxRuns handler answering Outcome.Ok(null, 'done'): RunError(PolicyFailed)", async () => {
    const exit = await observe(
      Chain.run(toolChain, {
        mode: M,
        maxRuns: 1,
        onMaxRuns: (() => Effect.succeed(new Outcome.Ok(null as never, "done"))) as never
      }).pipe(Effect.provide([oneToolCall(), kit.toLayer({ echo: () => Effect.succeed("x") })]))
    )
    expectTyped(exit, "RunError", "PolicyFailed")
  })
})

describe("an Error outcome that holds no failure with a _tag and a message", () => {
  it.each([
    { name: "a string", error: "oops", shows: "oops" },
    { name: "an Error without a _tag", error: new Error("disk full, api_key=sk-proj-AAAABBBBCCCCDDDDEEEE1234"), shows: "disk full, api_key=[REDACTED]" },
    { name: "null", error: null, shows: "null" },
    { name: "a revoked proxy", error: revoked(), shows: "cannot be shown" }
  ])("$name: RunError(StepFailed) whose message says what to give instead", async ({ error, shows }) => {
    const chain = Chain.make({ user: "hi" })
    const mode = ((c: Chain.Chain) => Effect.succeed(new Outcome.Error(c, error as never))) as unknown as Mode.Mode
    const exit = await observe(Chain.run(chain, { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "RunError", "StepFailed")
    const failure = Cause.squash((exit as Exit.Failure<unknown, unknown>).cause) as { message: string; reason: { failure: { _tag: string } } }
    expect(failure.reason.failure._tag).toBe("UntaggedFailure")
    expect(failure.message).toContain(shows)
    expect(failure.message).toContain("give Outcome.Error a Schema.TaggedError")
  })
})

// -----------------------------------------------------------------------------
// 4. Options objects whose reads throw (a getter, a Proxy from JavaScript)
// -----------------------------------------------------------------------------


describe("options whose reads throw", () => {
  it("Chain.run with an option getter that throws: RunError(InvalidInput)", async () => {
    const options = { mode: M, get maxRuns(): number { throw new Error("boom") } }
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("Chain.run with revoked-Proxy options: RunError(InvalidInput)", async () => {
    const exit = await observe(
      Chain.run(Chain.make({ user: "hi" }), revoked() as never).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
    )
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("Chain.stream with a bufferSize getter that throws does not throw; the stream fails with RunError", async () => {
    const options = { mode: M, get bufferSize(): number { throw new Error("boom") } }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let stream: Stream.Stream<unknown, unknown, any> | undefined
    expect(() => { stream = Chain.stream(Chain.make({ user: "hi" }), options) }).not.toThrow()
    const exit = await observe(Stream.runDrain(stream!).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("Chain.make with a getter that throws does not throw; run reports InvalidInput", async () => {
    let chain: Chain.Chain | undefined
    expect(() => { chain = Chain.make({ get user(): string { throw new Error("boom") } }) }).not.toThrow()
    const exit = await observe(Chain.run(chain!, { mode: M }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("Chain.encode with revoked-Proxy options does not throw; fails with ChainCodecError", async () => {
    let effect: Effect.Effect<unknown, unknown> | undefined
    expect(() => { effect = Chain.encode(Chain.make({ user: "hi" }), revoked() as never) }).not.toThrow()
    expectTyped(await observe(effect!), "ChainCodecError")
  })

  it("Chain.decode with revoked-Proxy options: ChainCodecError", async () => {
    const document = await Effect.runPromise(Chain.encode(Chain.make({ user: "hi" })))
    expectTyped(await observe(Chain.decode(document, revoked() as never)), "ChainCodecError")
  })

  it("Ensemble.stream with a bufferSize that cannot be turned into text: ValidationError", async () => {
    const program = Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      return yield* Stream.runDrain(Ensemble.stream(ensemble, {}, { bufferSize: Object.create(null) }))
    })
    expectTyped(await observe(program.pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))), "ValidationError")
  })

  it("Ensemble.run given a revoked Proxy: ValidationError", async () => {
    expectTyped(
      await observe(Ensemble.run(revoked() as never, {}).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))),
      "ValidationError"
    )
  })
})

// -----------------------------------------------------------------------------
// 5. Ensemble: an agent's own model layer that fails to build
// -----------------------------------------------------------------------------

describe("an agent's llm layer that fails to build", () => {
  it("Ensemble.run fails with an EnsembleError naming the task, not the layer's raw error", async () => {
    const program = Effect.gen(function*() {
      const llm = Layer.effect(ChatModel.ChatModel, Effect.fail(new Error("OPENAI_API_KEY is not set")))
      const agent = yield* Agent.make({ role: "Writer", goal: "Write", llm: llm as never })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      return yield* Ensemble.run(ensemble, {})
    })
    const model = ChatModel.scripted([{ text: "ok" }])
    const exit = await observe(program.pipe(Effect.provide(model.layer)))
    expectTyped(exit, "TaskExecutionError")
    const error = Cause.squash((exit as Exit.Failure<unknown, unknown>).cause) as { agentRole: string; message: string }
    expect(error.agentRole).toBe("Writer")
    expect(error.message).toContain("the agent's model layer (llm) failed to build: OPENAI_API_KEY is not set")
    expect(model.calls).toBe(0)
  })

  it("a layer that dies fails the same way", async () => {
    const program = Effect.gen(function*() {
      const llm = Layer.effect(ChatModel.ChatModel, Effect.die(new Error("no network")))
      const agent = yield* Agent.make({ role: "Writer", goal: "Write", llm: llm as never })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      return yield* Ensemble.run(ensemble, {})
    })
    const exit = await observe(program.pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "TaskExecutionError")
    expect(String(Cause.squash((exit as Exit.Failure<unknown, unknown>).cause))).toContain("no network")
  })
})

// -----------------------------------------------------------------------------
// 6. DurableChain.workflow from JavaScript
// -----------------------------------------------------------------------------

describe("DurableChain.workflow given bad options", () => {
  const thrown = (f: () => unknown): unknown => {
    try {
      f()
    } catch (error) {
      return error
    }
    return undefined
  }

  it("options undefined: InvalidInput, not a TypeError", () => {
    const error = thrown(() => DurableChain.workflow("w", undefined as never))
    expect(error).not.toBeInstanceOf(TypeError)
    expect((error as { _tag?: string })?._tag).toBe("InvalidInput")
  })

  it.each([
    { name: "no input", options: { toolkit: kit, chain: () => toolChain, idempotencyKey: (): string => "k", mode: M }, field: "input" },
    { name: "a toolkit getter that throws", options: { input: Schema.Struct({}), get toolkit(): never { throw new Error("boom") }, chain: () => toolChain, idempotencyKey: (): string => "k", mode: M }, field: "options" },
    { name: "a revoked proxy", options: revoked(), field: "options" }
  ])("$name: InvalidInput on $field", ({ field, options }) => {
    const error = thrown(() => DurableChain.workflow("w", options as never))
    expect(error).toBeInstanceOf(LoopError.InvalidInput)
    expect((error as LoopError.InvalidInput).field).toBe(field)
  })

  it("no toolkit: InvalidInput, not a TypeError reading 'tools'", () => {
    const error = thrown(() =>
      DurableChain.workflow("w", {
        input: Schema.Struct({ q: Schema.String }),
        chain: ({ q }: { q: string }) => Chain.make({ user: q }),
        mode: M
      } as never)
    )
    expect(error).not.toBeInstanceOf(TypeError)
    expect((error as { _tag?: string })?._tag).toBe("InvalidInput")
  })
})

// -----------------------------------------------------------------------------
// 7. What helper-41 found still getting through
// -----------------------------------------------------------------------------

describe("values whose reads throw, further in (helper-41)", () => {
  const trapping = () => new Proxy({}, { has() { throw new Error("trap has") }, ownKeys() { throw new Error("trap ownKeys") } })

  it.each([
    { name: "fails with", handler: () => Effect.fail(trapping()) },
    { name: "succeeds with", handler: () => Effect.succeed(trapping()) }
  ])("a handler that $name a Proxy whose traps throw: the call fails, the run goes on", async ({ handler }) => {
    const exit = await observe(
      Chain.run(toolChain, { mode: M }).pipe(Effect.provide([oneToolCall(), kit.toLayer({ echo: handler as never })]))
    )
    expectNoDefect(exit)
    if (Exit.isFailure(exit)) return expect.unreachable("the run failed")
    const [result] = (exit.value as Outcome.Final).chain.lastToolResults
    expect(result.isFailure).toBe(true)
  })

  it("a revoked proxy as the chain: pending throws InvalidInput, encode fails, run fails, all typed", async () => {
    const chain = revoked() as Chain.Chain
    expect(() => Approval.pending(chain)).toThrow(LoopError.InvalidInput)
    expect(() => ExternalTool.pending(chain)).toThrow(LoopError.InvalidInput)
    let encoding: Effect.Effect<unknown, unknown> | undefined
    expect(() => { encoding = Chain.encode(chain) }).not.toThrow()
    expectTyped(await observe(encoding!), "ChainCodecError")
    expectTyped(await observe(Chain.run(chain, { mode: M }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))), "RunError", "InvalidInput")
    expectTyped(await observe(Approval.decide(chain, {})), "InvalidInput")
  })

  it("ModelRetry.schedule with an option getter that throws: the run fails with InvalidInput", async () => {
    const retry = ModelRetry.schedule({ get times(): number { throw new Error("boom") } })
    const exit = await observe(Chain.run(Chain.make({ user: "hi" }), { mode: M, retry }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "RunError", "InvalidInput")
  })

  it("a Step.make function that throws a 1 MB message: the message is cut short", async () => {
    const mode = ((c: Chain.Chain) => Step.start(c).pipe(Step.make(() => { throw new Error("x".repeat(1_000_000)) }))) as Mode.Mode
    const exit = await observe(Chain.run(Chain.make({ user: "hi" }), { mode }).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    expectTyped(exit, "RunError", "InvalidInput")
    expect((Cause.squash((exit as Exit.Failure<unknown, unknown>).cause) as Error).message.length).toBeLessThan(1_000)
  })
})

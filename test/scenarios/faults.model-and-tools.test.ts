/**
 * Fault injection into the model and the tools. Every timing goes through
 * `TestClock` (`it.effect`): runs are forked, the clock is moved, and the
 * moment things happen is read from the clock, so delays are checked exactly.
 *
 * Model:
 * - a property over random scripts with a model that fails (a `{ fail }`
 *   reply, an `Effect.fail`, or a hang cut by its own timeout) at a random turn
 *   a random number of times, with a random `retry` schedule: the run recovers
 *   exactly when the failures are no more than the retries, each retry comes
 *   exactly the schedule's delay after the failure, a recovered run ends as if
 *   nothing failed, and an exhausted one fails with `ModelCallFailed` (the last
 *   failure) and the chain exactly as it was before the failing call;
 * - the final-answer call of `onMaxRuns` is retried by the same schedule;
 * - a model that dies (or throws) must not lose the chain either.
 *
 * Tools:
 * - handler defects (a throw in the handler, a throw inside an Effect,
 *   `Effect.die`) are fed back, or with `onToolFailure.handler: "fail"` end the
 *   run with `ToolCallFailed` and a complete round;
 * - a handler that never ends is cut by its tool's `ToolTimeout` or by the
 *   run's `toolTimeout` after exactly that time, its finalizers run, and the
 *   round's other calls finish normally;
 * - a property over handlers that fail on every n-th invocation: every call
 *   gets exactly one result, and each failure reaches the model with its text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, type Duration, Effect, Exit, Fiber, Ref, Schedule, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { Prompt } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode, ToolTimeout } from "../../src/index.ts"

// -----------------------------------------------------------------------------
// helpers
// -----------------------------------------------------------------------------

/** Every tool call has exactly one result, in the message right after it, in call order. */
const providerValid = (chain: Chain.Chain): boolean =>
  chain.pendingToolCalls.length === 0 && chain.roundResults.length === 0 &&
  chain.messages.every((message: Prompt.Message, index) => {
    if (message.role === "tool") return chain.messages[index - 1]?.role === "assistant"
    if (message.role !== "assistant") return true
    const calls = message.content.flatMap((part) => part.type === "tool-call" ? [part.id] : [])
    if (calls.length === 0) return true
    const next = chain.messages[index + 1]
    if (next?.role !== "tool") return false
    const results = next.content.flatMap((part) => part.type === "tool-result" ? [part.id] : [])
    return JSON.stringify(results) === JSON.stringify(calls)
  })

/** The results of the tool message `index` messages from the end (-1: the last message). */
const resultsAt = (messages: ReadonlyArray<Prompt.Message>, index: number) => {
  const message = messages.at(index)
  if (message?.role !== "tool") return []
  return message.content.flatMap((part) =>
    part.type === "tool-result" ? [{ id: part.id, name: part.name, isFailure: part.isFailure, result: part.result }] : []
  )
}

const now = Clock.currentTimeMillis

const isDone = <A, E>(fiber: Fiber.Fiber<A, E>): boolean => fiber.pollUnsafe() !== undefined

/**
 * Moves the clock to exactly `millis` after the start, checking the fiber is still running 1 ms before,
 * then joins it (as an Exit). With `millis` 0 the fiber must end without the clock moving.
 */
const endsAt = <A, E>(fiber: Fiber.Fiber<A, E>, millis: number) =>
  Effect.gen(function*() {
    if (millis > 0) {
      yield* TestClock.adjust(millis - 1)
      expect(isDone(fiber), `still running at ${millis - 1} ms`).toBe(false)
      yield* TestClock.adjust(1)
    }
    yield* Effect.yieldNow
    expect(isDone(fiber), `ended at ${millis} ms`).toBe(true)
    return yield* Effect.exit(Fiber.join(fiber))
  })

// -----------------------------------------------------------------------------
// model faults
// -----------------------------------------------------------------------------

const Plain = Tool.make("plain", { parameters: Schema.Struct({ x: Schema.Number }), success: Schema.String })
const plainToolkit = Toolkit.make(Plain)
const plainHandlers = plainToolkit.toLayer({ plain: ({ x }) => Effect.succeed(`plain ${x}`) })

const ModelFault = Schema.Struct({
  /** Turns with tool calls (each calls `plain` this many times) before the final answer. */
  turns: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 2 }))).check(Schema.isMaxLength(3)),
  /** The turn that fails (clamped to the final-answer turn). */
  failAt: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 })),
  /** How many attempts in a row fail at that turn. */
  failures: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
  /** Retries of the schedule (0: no `retry` option). */
  retries: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 })),
  delaySeconds: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
  fault: Schema.Literals(["fail-reply", "effect-fail", "hang"])
})
type ModelFault = typeof ModelFault.Type

/** The model's own timeout for a hanging call (the loop has no model timeout; the provider's is simulated). */
const hangTimeout = 30_000

interface Attempt {
  readonly turn: number
  readonly at: number
}

/**
 * A model following the script (turn t = assistant messages so far), failing `failures` times in a row at
 * turn `at` when `fault` is given; it records every attempt with the clock's time ("throw" throws from
 * the turn function itself, before any Effect, so that attempt is not recorded).
 */
const faultyModel = (
  turns: ReadonlyArray<number>,
  fault?: { readonly at: number; readonly failures: number; readonly kind: ModelFault["fault"] | "die" | "throw" }
) => {
  const attempts: Array<Attempt> = []
  const tries = new Map<number, number>()
  const model = ChatModel.scripted([(request) => {
    const turn = request.prompt.content.filter((message) => message.role === "assistant").length
    const n = (tries.get(turn) ?? 0) + 1
    tries.set(turn, n)
    const failing = fault !== undefined && turn === fault.at && n <= fault.failures
    if (failing && fault.kind === "throw") throw new Error(`model threw ${n}`)
    return Effect.gen(function*() {
      attempts.push({ turn, at: yield* now })
      if (failing) {
        switch (fault.kind) {
          case "fail-reply":
            return { fail: `outage ${n}` }
          case "effect-fail":
            return yield* new LoopError.ModelCallFailed({ description: `outage ${n}`, cause: undefined })
          case "hang":
            return yield* Effect.never.pipe(Effect.timeoutOrElse({
              duration: hangTimeout,
              orElse: () => Effect.fail(new LoopError.ModelCallFailed({ description: `no answer ${n}`, cause: undefined }))
            }))
          default:
            return yield* Effect.die(new Error(`model crashed ${n}`))
        }
      }
      const calls = turns[turn] ?? 0
      return calls === 0
        ? { text: `answer ${turn}` }
        : { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `t${turn}_${i}`, name: "plain", params: { x: i } })) }
    })
  }], { repeat: true })
  return { model, attempts }
}

const startPlain = () => Chain.make({ user: "go", toolkit: plainToolkit })

/** The chain of an uninterrupted run just before model call `k` (after the tools of turn k-1). */
const chainBeforeCall = (turns: ReadonlyArray<number>, k: number) =>
  k === 0
    ? Effect.succeed(startPlain() as Chain.Chain)
    : Chain.run(startPlain(), { mode: Mode.whileNeedsResponse, maxRuns: k, onMaxRuns: "stop" }).pipe(
      Effect.map((outcome) => outcome.chain),
      Effect.provide([faultyModel(turns).model.layer, plainHandlers])
    )

const runs = 1000

describe("model faults", () => {
  it.effect.prop(
    "at a random turn: recovers iff failures ≤ retries, with the exact retry delays; exhausted retries keep the chain before the call",
    { scenario: ModelFault },
    ({ scenario }) =>
      Effect.gen(function*() {
        const turns = scenario.turns
        const k = Math.min(scenario.failAt, turns.length)
        const hang = scenario.fault === "hang" ? hangTimeout : 0
        const delay = scenario.delaySeconds * 1000

        // the uninterrupted run
        const clean = faultyModel(turns)
        const straight = yield* Chain.run(startPlain(), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([clean.model.layer, plainHandlers])
        )

        const faulty = faultyModel(turns, { at: k, failures: scenario.failures, kind: scenario.fault })
        const retry = scenario.retries === 0
          ? undefined
          : Schedule.spaced(`${scenario.delaySeconds} seconds`).pipe(Schedule.upTo({ times: scenario.retries }))
        const fiber = yield* Effect.forkChild(
          Chain.run(startPlain(), { mode: Mode.whileNeedsResponse, ...(retry === undefined ? {} : { retry }) }).pipe(
            Effect.provide([faulty.model.layer, plainHandlers])
          )
        )

        const recovers = scenario.failures <= scenario.retries
        const failedAttempts = recovers ? scenario.failures : scenario.retries + 1
        // attempt j at turn k starts when attempt j-1 has failed (after `hang`) plus the schedule's delay
        const atTurnK = Array.from(
          { length: recovers ? failedAttempts + 1 : failedAttempts },
          (_, j) => ({ turn: k, at: j * (hang + delay) })
        )
        const end = recovers ? scenario.failures * (hang + delay) : failedAttempts * hang + scenario.retries * delay
        const exit = yield* endsAt(fiber, end)

        // every attempt, in order, at its exact time: turns before k at 0, the retries of k, the turns after at the end
        const lastTurn = recovers ? straight.chain.runCount - 1 : k
        expect(faulty.attempts).toEqual([
          ...Array.from({ length: k }, (_, turn) => ({ turn, at: 0 })),
          ...atTurnK,
          ...Array.from({ length: Math.max(lastTurn - k, 0) }, (_, i) => ({ turn: k + 1 + i, at: end }))
        ])

        if (recovers) {
          expect(Exit.isSuccess(exit)).toBe(true)
          if (!Exit.isSuccess(exit)) return
          expect({ tag: exit.value._tag, reason: exit.value._tag === "Ok" ? exit.value.reason : "" }).toEqual({ tag: "Ok", reason: "done" })
          expect(yield* Chain.encode(exit.value.chain)).toEqual(yield* Chain.encode(straight.chain))
          return
        }
        expect(Exit.isFailure(exit)).toBe(true)
        if (!Exit.isFailure(exit)) return
        const error = Cause.findErrorOption(exit.cause)
        expect(error._tag).toBe("Some")
        if (error._tag !== "Some") return
        expect(error.value.reason).toBeInstanceOf(LoopError.ModelCallFailed)
        expect((error.value.reason as LoopError.ModelCallFailed).description).toBe(
          scenario.fault === "hang" ? `no answer ${failedAttempts}` : `outage ${failedAttempts}`
        )
        // exactly the chain before the failing call: what the model was sent, and what a run stopped there keeps
        expect(error.value.chain.messages).toEqual(clean.model.requests[k]?.prompt.content)
        expect(yield* Chain.encode(error.value.chain)).toEqual(yield* Chain.encode(yield* chainBeforeCall(turns, k)))
        expect(providerValid(error.value.chain)).toBe(true)
      }),
    { arbitrary: { runs } }
  )

  it.effect("the final-answer call is retried by the same schedule; when it gives up, the chain is the one before that call", () =>
    Effect.gen(function*() {
      const turns = [1]
      for (const failures of [1, 2]) {
        // turn 1 is the final-answer call (maxRuns 1); it fails `failures` times, the schedule retries once after 2s
        const { attempts, model } = faultyModel(turns, { at: 1, failures, kind: "fail-reply" })
        const t0 = yield* now
        const fiber = yield* Effect.forkChild(
          Chain.run(startPlain(), {
            mode: Mode.whileNeedsResponse,
            maxRuns: 1,
            onMaxRuns: "final-answer",
            retry: Schedule.spaced("2 seconds").pipe(Schedule.upTo({ times: 1 }))
          }).pipe(Effect.provide([model.layer, plainHandlers]))
        )
        const exit = yield* endsAt(fiber, 2000)
        expect(attempts).toEqual([{ turn: 0, at: t0 }, { turn: 1, at: t0 }, { turn: 1, at: t0 + 2000 }])
        expect(model.requests.map((request) => request.toolChoice)).toEqual(["auto", "none", "none"])
        if (failures === 1) {
          expect(Exit.isSuccess(exit)).toBe(true)
          if (Exit.isSuccess(exit)) {
            expect(exit.value._tag === "Ok" && exit.value.reason).toBe("final-answer")
            expect(exit.value._tag === "Ok" && exit.value.extra).toBe("answer 1")
          }
        } else {
          const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
          expect(error?._tag).toBe("Some")
          if (error?._tag !== "Some") return
          expect(error.value.reason).toEqual(new LoopError.ModelCallFailed({ description: "outage 2", cause: undefined }))
          // before that call: no final-answer instruction, one model call, the round of turn 0 complete
          expect(error.value.chain.runCount).toBe(1)
          expect(error.value.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
          expect(providerValid(error.value.chain)).toBe(true)
        }
      }
    }))

  // RunError promises "the chain at the point of failure, so nothing is lost", and a step "never fails:
  // model and tool failures become Error outcomes carrying the chain". A model that dies is such a failure.
  for (const kind of ["die", "throw"] as const) {
    it.effect(`a model that ${kind === "die" ? "dies (Effect.die)" : "throws (from its turn function)"} at turn 1: a typed RunError with the chain before the call, not a defect`, () =>
      Effect.gen(function*() {
        const turns = [2]
        const { model } = faultyModel(turns, { at: 1, failures: 1, kind })
        const exit = yield* Effect.exit(
          Chain.run(startPlain(), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, plainHandlers]))
        )
        expect(Exit.isFailure(exit)).toBe(true)
        if (!Exit.isFailure(exit)) return
        expect(Cause.hasDies(exit.cause), "the run died: the chain is lost").toBe(false)
        const error = Cause.findErrorOption(exit.cause)
        expect(error._tag).toBe("Some")
        if (error._tag !== "Some") return
        expect(error.value.reason._tag).toBe("ModelCallFailed")
        expect(error.value.reason.message).toContain(kind === "die" ? "model crashed 1" : "model threw 1")
        expect(yield* Chain.encode(error.value.chain)).toEqual(yield* Chain.encode(yield* chainBeforeCall(turns, 1)))
      }))
  }
})

// -----------------------------------------------------------------------------
// tool faults
// -----------------------------------------------------------------------------

describe("tool handler defects", () => {
  const Crash = Tool.make("crash", { parameters: Schema.Struct({}), success: Schema.String })
  const toolkit = Toolkit.make(Crash, Plain)
  const styles = {
    "throws in the handler function": () => {
      throw new Error("kaput")
    },
    "throws inside an Effect": () =>
      Effect.sync((): string => {
        throw new Error("kaput")
      }),
    "dies (Effect.die)": () => Effect.die(new Error("kaput"))
  }
  for (const [style, crash] of Object.entries(styles)) {
    const handlers = toolkit.toLayer({ crash, plain: ({ x }) => Effect.succeed(`plain ${x}`) })
    const script = () =>
      ChatModel.scripted([
        { toolCalls: [{ id: "c1", name: "plain", params: { x: 1 } }, { id: "c2", name: "crash", params: {} }] },
        { text: "noted" }
      ])

    it.effect(`a handler that ${style}: fed back by default, naming the tool and the defect`, () =>
      Effect.gen(function*() {
        const model = script()
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, handlers])
        )
        expect(outcome._tag === "Ok" && outcome.reason).toBe("done")
        const seen = resultsAt(model.requests[1].prompt.content, -1)
        expect(seen.map(({ id, isFailure, name }) => ({ id, name, isFailure }))).toEqual([
          { id: "c1", name: "plain", isFailure: false },
          { id: "c2", name: "crash", isFailure: true }
        ])
        expect(seen[1].result).toEqual(expect.stringContaining("crash"))
        expect(seen[1].result).toEqual(expect.stringContaining("kaput"))
        expect(providerValid(outcome.chain)).toBe(true)
      }))

    it.effect(`a handler that ${style}, policy "fail": ToolCallFailed after the round completes`, () =>
      Effect.gen(function*() {
        const model = script()
        const exit = yield* Effect.exit(
          Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } })
            .pipe(Effect.provide([model.layer, handlers]))
        )
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause), "the run died: the chain is lost").toBe(false)
        const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
        expect(error?._tag).toBe("Some")
        if (error?._tag !== "Some") return
        expect(error.value.reason).toMatchObject({ _tag: "ToolCallFailed", kind: "handler", callId: "c2", tool: "crash" })
        expect(resultsAt(error.value.chain.messages, -1).map(({ id, isFailure }) => ({ id, isFailure }))).toEqual([
          { id: "c1", isFailure: false },
          { id: "c2", isFailure: true }
        ])
        expect(providerValid(error.value.chain)).toBe(true)
        expect(model.calls).toBe(1)
      }))
  }
})

describe("tool timeouts", () => {
  /** Handlers that never end (with a scoped finalizer and an interrupt hook), and one that takes 1s. */
  const timeoutTools = (annotated: Duration.Input) => {
    const Hang = Tool.make("hang", { parameters: Schema.Struct({}), success: Schema.String })
      .annotate(ToolTimeout.Annotation, annotated)
    const HangDefault = Tool.make("hang_default", { parameters: Schema.Struct({}), success: Schema.String })
    const Slow = Tool.make("slow", { parameters: Schema.Struct({}), success: Schema.String })
    return Toolkit.make(Hang, HangDefault, Slow)
  }
  const handlersFor = (toolkit: ReturnType<typeof timeoutTools>, log: Ref.Ref<ReadonlyArray<string>>) => {
    const note = (what: string) => Effect.flatMap(now, (at) => Ref.update(log, (entries) => [...entries, `${what} at ${at}`]))
    return toolkit.toLayer({
      hang: () =>
        Effect.scoped(Effect.gen(function*() {
          yield* Effect.addFinalizer(() => note("hang finalized"))
          return yield* Effect.never
        })),
      hang_default: () => Effect.never.pipe(Effect.onInterrupt(() => note("hang_default interrupted"))),
      slow: () => Effect.as(Effect.andThen(Effect.sleep("1 second"), note("slow done")), "slow done")
    })
  }
  const calls = [
    { id: "a", name: "hang", params: {} },
    { id: "b", name: "slow", params: {} },
    { id: "c", name: "hang_default", params: {} }
  ]

  const cases: ReadonlyArray<{
    readonly toolTimeout: Duration.Input
    readonly annotated: Duration.Input
    readonly hangAt: number
    readonly defaultAt: number
    readonly concurrency: 1 | "unbounded"
  }> = [
    // the tool's own timeout wins over the run's default, whether it is shorter or longer
    { toolTimeout: "5 seconds", annotated: "2 seconds", hangAt: 2000, defaultAt: 5000, concurrency: "unbounded" },
    { toolTimeout: "1500 millis", annotated: "2 seconds", hangAt: 2000, defaultAt: 1500, concurrency: "unbounded" },
    // one at a time: 2s, then 1s, then 5s
    { toolTimeout: "5 seconds", annotated: "2 seconds", hangAt: 2000, defaultAt: 8000, concurrency: 1 }
  ]
  for (const c of cases) {
    const end = Math.max(c.hangAt, c.defaultAt, c.concurrency === 1 ? 3000 : 1000)
    const slowAt = c.concurrency === 1 ? 3000 : 1000
    const label = `ToolTimeout ${c.annotated}, toolTimeout ${c.toolTimeout}, concurrency ${c.concurrency}`

    it.effect(`${label}: each hang times out at exactly its timeout, finalizers run, the slow call is unaffected`, () =>
      Effect.gen(function*() {
        const log = yield* Ref.make<ReadonlyArray<string>>([])
        const toolkit = timeoutTools(c.annotated)
        let answeredAt = -1
        const model = ChatModel.scripted([
          { toolCalls: calls },
          () => Effect.map(now, (at) => ({ text: `answered at ${(answeredAt = at)}` }))
        ])
        const fiber = yield* Effect.forkChild(
          Chain.run(Chain.make({ user: "go", toolkit }), {
            mode: Mode.whileNeedsResponse,
            toolTimeout: c.toolTimeout,
            concurrency: c.concurrency
          }).pipe(Effect.provide([model.layer, handlersFor(toolkit, log)]))
        )
        const exit = yield* endsAt(fiber, end)
        expect([...(yield* Ref.get(log))].sort()).toEqual([
          `hang finalized at ${c.hangAt}`,
          `hang_default interrupted at ${c.defaultAt}`,
          `slow done at ${slowAt}`
        ].sort())
        expect(answeredAt).toBe(end)
        expect(Exit.isSuccess(exit)).toBe(true)
        if (!Exit.isSuccess(exit)) return
        const seconds = (ms: number) => ms === 1500 ? "1s 500ms" : `${ms / 1000}s`
        expect(resultsAt(model.requests[1].prompt.content, -1)).toEqual([
          { id: "a", name: "hang", isFailure: true, result: `Tool 'hang' timed out after ${seconds(2000)}` },
          { id: "b", name: "slow", isFailure: false, result: "slow done" },
          {
            id: "c",
            name: "hang_default",
            isFailure: true,
            result: `Tool 'hang_default' timed out after ${seconds(c.concurrency === 1 ? 5000 : c.defaultAt)}`
          }
        ])
        expect(providerValid(exit.value.chain)).toBe(true)
      }))

    it.effect(`${label}, onToolFailure.timeout "fail": ToolCallFailed for the first timed-out call, after the whole round`, () =>
      Effect.gen(function*() {
        const log = yield* Ref.make<ReadonlyArray<string>>([])
        const toolkit = timeoutTools(c.annotated)
        const model = ChatModel.scripted([{ toolCalls: calls }])
        const fiber = yield* Effect.forkChild(
          Chain.run(Chain.make({ user: "go", toolkit }), {
            mode: Mode.whileNeedsResponse,
            toolTimeout: c.toolTimeout,
            concurrency: c.concurrency,
            onToolFailure: { timeout: "fail" }
          }).pipe(Effect.provide([model.layer, handlersFor(toolkit, log)]))
        )
        const exit = yield* endsAt(fiber, end)
        expect(yield* Ref.get(log)).toHaveLength(3)
        const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
        expect(error?._tag).toBe("Some")
        if (error?._tag !== "Some") return
        expect(error.value.reason).toMatchObject({ _tag: "ToolCallFailed", kind: "timeout", callId: "a", tool: "hang" })
        expect(resultsAt(error.value.chain.messages, -1).map(({ id, isFailure }) => ({ id, isFailure }))).toEqual([
          { id: "a", isFailure: true },
          { id: "b", isFailure: false },
          { id: "c", isFailure: true }
        ])
        expect(providerValid(error.value.chain)).toBe(true)
        expect(model.calls).toBe(1)
      }))
  }
})

describe("intermittent tool failures", () => {
  const Flaky = Tool.make("flaky", { parameters: Schema.Struct({ x: Schema.Number }), success: Schema.String, failure: Schema.String })
  const toolkit = Toolkit.make(Flaky)
  const Intermittent = Schema.Struct({
    /** Calls to `flaky` per turn, then a plain answer. */
    turns: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 }))).check(Schema.isMaxLength(4)),
    /** The handler fails on every n-th invocation. */
    every: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
    style: Schema.Literals(["fail", "die", "throw-in-effect"]),
    concurrency: Schema.Literals([1, "unbounded"])
  })

  it.effect.prop(
    "a handler failing on every n-th invocation: one result per call, each failure fed back with its text",
    { scenario: Intermittent },
    ({ scenario }) =>
      Effect.gen(function*() {
        let invocations = 0
        const broke = (n: number) => `flaky broke on invocation ${n}`
        const handlers = toolkit.toLayer({
          flaky: () =>
            Effect.suspend(() => {
              const n = ++invocations
              if (n % scenario.every !== 0) return Effect.succeed(`flaky ok ${n}`)
              switch (scenario.style) {
                case "fail":
                  return Effect.fail(broke(n))
                case "die":
                  return Effect.die(new Error(broke(n)))
                case "throw-in-effect":
                  return Effect.sync((): string => {
                    throw new Error(broke(n))
                  })
              }
            })
        })
        const model = ChatModel.scripted([(request) => {
          const turn = request.prompt.content.filter((message) => message.role === "assistant").length
          const calls = scenario.turns[turn] ?? 0
          return calls === 0
            ? { text: "done" }
            : { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `t${turn}_${i}`, name: "flaky", params: { x: i } })) }
        }], { repeat: true })

        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), {
          mode: Mode.whileNeedsResponse,
          concurrency: scenario.concurrency,
          maxFailures: 100
        }).pipe(Effect.provide([model.layer, handlers]))

        const total = scenario.turns.reduce((a, b) => a + b, 0)
        expect(outcome._tag === "Ok" && outcome.reason).toBe("done")
        expect(invocations).toBe(total)
        expect(providerValid(outcome.chain)).toBe(true)
        expect(model.calls).toBe(scenario.turns.length + 1)

        // what the model saw after each round: that round's results, in call order
        const seen = scenario.turns.flatMap((calls, turn) => {
          const results = resultsAt(model.requests[turn + 1].prompt.content, -1)
          expect(results.map((result) => result.id)).toEqual(Array.from({ length: calls }, (_, i) => `t${turn}_${i}`))
          return results
        })
        // each invocation answered exactly once; failures exactly on every n-th, fed back with their text
        const numbers = seen.map((result) => {
          const text = String(result.result)
          const n = Number(/(\d+)$/.exec(text)?.[1])
          if (n % scenario.every === 0) {
            expect(result.isFailure).toBe(true)
            if (scenario.style === "fail") expect(text).toBe(broke(n))
            else expect(text).toBe(`Tool 'flaky' failed unexpectedly: ${broke(n)}`)
          } else {
            expect({ isFailure: result.isFailure, text }).toEqual({ isFailure: false, text: `flaky ok ${n}` })
          }
          return n
        })
        expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
      }),
    { arbitrary: { runs } }
  )
})

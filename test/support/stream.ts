/**
 * Fixtures of the event tests (test/scenarios/Stream.test.ts, test/RunEvent.test.ts): tools with
 * exact durations under `TestClock`, and helpers that collect a run's events and read them as rows
 * (timings left out where a row must not depend on them).
 */
import { expect } from "@effect/vitest"
import { Effect, Fiber, Result, Schema, Stream } from "effect"
import { Response, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import {
type Chain,
DirectReturn,
ExternalTool,
type LoopError,
Mode,RunEvent
} from "../../src/index.ts"

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

export const Lookup = Tool.make("lookup", {
  parameters: Schema.Struct({ q: Schema.String, ms: Schema.Number }),
  success: Schema.String
})
export const Fails = Tool.make("fails", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failure: Schema.String })
export const Direct = Tool.make("direct", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
export const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
export const Fetch = ExternalTool.mark(Tool.make("fetch", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.String }))

export const basicToolkit = Toolkit.make(Lookup, Fails, Direct)
export const approvalToolkit = Toolkit.make(Lookup, Transfer)
export const externalToolkit = Toolkit.merge(Toolkit.make(Lookup), Toolkit.make(Fetch))

/** Handlers for every local tool, and what the `lookup` calls did (started, still running, finalized, completed). */
export const makeHandlers = () => {
  const state = { started: 0, running: 0, finalized: 0, completed: 0 }
  const fibers: Array<Fiber.Fiber<unknown, unknown>> = []
  const layer = Toolkit.make(Lookup, Fails, Direct, Transfer).toLayer({
    lookup: ({ ms, q }) =>
      Effect.gen(function*() {
        fibers.push(yield* Effect.fiber)
        state.started++
        state.running++
        yield* Effect.sleep(ms)
        state.completed++
        return `found ${q}`
      }).pipe(Effect.ensuring(Effect.sync(() => {
        state.running--
        state.finalized++
      }))),
    fails: ({ q }) => Effect.fail(`no ${q}`),
    direct: ({ q }) => DirectReturn.final(`answer ${q}`),
    transfer: ({ amount, to }) => Effect.succeed(`sent ${amount} to ${to}`)
  })
  return { state, fibers, layer }
}

export const lookup = (q: string, ms: number, id?: string) => ({ name: "lookup", params: { q, ms }, ...(id === undefined ? {} : { id }) })

// -----------------------------------------------------------------------------
// Reading events
// -----------------------------------------------------------------------------

export type Event = RunEvent.RunEvent

/** One readable line per event: its tag and key fields. */
export const row = (event: Event): string => {
  switch (event._tag) {
    case "RunStarted":
      return `RunStarted messages=${event.messages} runCount=${event.runCount}`
    case "ModelCallStarted":
      return `ModelCallStarted #${event.call} messages=${event.messages} tools=[${event.tools.join(",")}]`
    case "TextDelta":
      return `TextDelta #${event.call} ${JSON.stringify(event.delta)}`
    case "ModelCallFinished":
      return `ModelCallFinished #${event.call} ${event.finishReason} ${JSON.stringify(event.text)} calls=[${
        event.toolCalls.map((call) => `${call.name}#${call.id}`).join(",")
      }] usage=${JSON.stringify(event.usage)} ${event.durationMillis}ms`
    case "ModelCallFailed":
      return `ModelCallFailed #${event.call} attempt=${event.attempt} ${event.error}: ${event.message} ${event.durationMillis}ms`
    case "ToolCallStarted":
      return `ToolCallStarted ${event.name}#${event.id} ${JSON.stringify(event.params)}`
    case "ToolCallFinished":
      return `ToolCallFinished ${event.name}#${event.id} ${event.status} ${
        "result" in event ? JSON.stringify(event.result) : "(no result)"
      } ${event.durationMillis}ms`
    case "RunPaused":
      return `RunPaused ${event.reason._tag}${
        "calls" in event.reason ? ` [${event.reason.calls.map((call) => `${call.name}#${call.id}`).join(",")}]` : ""
      }`
    case "RunFinished":
      return `RunFinished ${event.reason} ${JSON.stringify(event.text)}`
    case "RunFailed":
      return `RunFailed ${event.error}: ${event.message}`
  }
}

/**
 * The rows of a watched run that asks `ask_expert` once (`{ q: "?" }`), gets
 * `result`, then answers "It is 42." in three deltas: only the run's own
 * events, whatever the tool does inside.
 */
export const askExpertRows = (result: string): ReadonlyArray<string> => [
  "RunStarted messages=1 runCount=0",
  "ModelCallStarted #1 messages=1 tools=[ask_expert]",
  `ModelCallFinished #1 tool-calls "" calls=[ask_expert#call_1_1] usage={} 0ms`,
  `ToolCallStarted ask_expert#call_1_1 {"q":"?"}`,
  `ToolCallFinished ask_expert#call_1_1 succeeded ${JSON.stringify(result)} 0ms`,
  "ModelCallStarted #2 messages=3 tools=[ask_expert]",
  `TextDelta #2 "It "`,
  `TextDelta #2 "is "`,
  `TextDelta #2 "42."`,
  `ModelCallFinished #2 stop "It is 42." calls=[] usage={} 0ms`,
  `RunFinished done "It is 42."`
]

export const encodeEvent = Schema.encodeSync(RunEvent.RunEvent)
export const decodeEvent = Schema.decodeUnknownSync(RunEvent.RunEvent)

/** Every event sent as JSON text and read back is the event itself. */
export const expectJsonRoundTrip = (events: ReadonlyArray<Event>) => {
  for (const event of events) {
    expect(decodeEvent(JSON.parse(JSON.stringify(encodeEvent(event))))).toEqual(event)
  }
}

/** Per model call, the text deltas joined are the finished call's text. */
export const expectDeltasJoinToText = (events: ReadonlyArray<Event>) => {
  const joined = new Map<number, string>()
  for (const event of events) {
    if (event._tag === "ModelCallStarted") joined.set(event.call, "")
    if (event._tag === "TextDelta") joined.set(event.call, (joined.get(event.call) ?? "") + event.delta)
    if (event._tag === "ModelCallFinished") expect(joined.get(event.call)).toBe(event.text)
  }
}

/**
 * Moves TestClock on in small steps until `fiber` is done (at most an hour):
 * sleeps that start late, behind a slow consumer, still fire at their time.
 */
export const untilDone = (fiber: Fiber.Fiber<unknown, unknown>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let step = 0; step < 36_000 && fiber.pollUnsafe() === undefined; step++) yield* TestClock.adjust("100 millis")
    expect(fiber.pollUnsafe()).toBeDefined()
  })

export interface Drained {
  readonly events: ReadonlyArray<Event>
  readonly result: Result.Result<void, LoopError.RunError>
}

/**
 * Consumes a run's stream to its end, with TestClock driving latencies and
 * tool durations; checks every event survives JSON and every call's deltas
 * join to its text.
 */
export const drain = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>): Effect.Effect<Drained, never, R> =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const fiber = yield* Effect.forkChild(
      Effect.result(Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))))
    )
    yield* untilDone(fiber)
    const result = yield* Fiber.join(fiber)
    expectJsonRoundTrip(events)
    expectDeltasJoinToText(events)
    return { events, result }
  })

/** The events of a stream that ends normally. */
export const events = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>): Effect.Effect<ReadonlyArray<Event>, never, R> =>
  Effect.map(drain(stream), (drained) => {
    if (Result.isFailure(drained.result)) throw new Error(`the stream failed: ${drained.result.failure.message}`)
    return drained.events
  })

/** The run's error, when the stream failed. */
export const failureOf = (drained: Drained): LoopError.RunError => {
  if (Result.isSuccess(drained.result)) throw new Error("expected the stream to fail")
  return drained.result.failure
}

export const last = (events: ReadonlyArray<Event>): Event => events[events.length - 1]

/** The chain document of the terminal event. */
export const documentOf = (event: Event): unknown => {
  if (event._tag === "RunFinished" || event._tag === "RunPaused" || event._tag === "RunFailed") return event.chain
  throw new Error(`not a terminal event: ${event._tag}`)
}

/** Runs `effect` to its end under TestClock. */
export const settled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    yield* untilDone(fiber)
    return yield* Fiber.join(fiber)
  })

export const whileNeeds = { mode: Mode.whileNeedsResponse }

export const finish = (reason: Response.FinishReason): Response.AnyPart =>
  Response.makePart("finish", {
    reason,
    usage: new Response.Usage({
      inputTokens: { uncached: undefined, total: 4, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: undefined, reasoning: undefined }
    }),
    response: undefined
  })

/** The result the chain's first tool message fed back to the model. */
export const toolResult = (chain: Chain.Chain): unknown => {
  for (const message of chain.messages) {
    if (message.role !== "tool") continue
    for (const part of message.content) if (part.type === "tool-result") return part.result
  }
  return undefined
}

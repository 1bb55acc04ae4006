/**
 * `Chain.stream` and `RunEvent.Observer`: the exact events of a run, as a
 * table per scenario (text only, concurrent tool rounds with exact durations
 * under TestClock, approval and external pauses that resume, a failing model,
 * retries, failed tools, direct return, max-runs final answer); events as
 * JSON; interruption through the stream; observers that fail; backpressure;
 * and chains that do not depend on being observed or streamed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Result, Schema, Stream } from "effect"
import { Response, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  ExternalTool,
  type LoopError,
  Mode,
  ModelRetry,
  type Outcome,
  RunEvent
} from "../src/index.ts"

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

const Lookup = Tool.make("lookup", {
  parameters: Schema.Struct({ q: Schema.String, ms: Schema.Number }),
  success: Schema.String
})
const Fails = Tool.make("fails", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failure: Schema.String })
const Direct = Tool.make("direct", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Fetch = ExternalTool.mark(Tool.make("fetch", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.String }))

const basicToolkit = Toolkit.make(Lookup, Fails, Direct)
const approvalToolkit = Toolkit.make(Lookup, Transfer)
const externalToolkit = Toolkit.merge(Toolkit.make(Lookup), Toolkit.make(Fetch))

/** Handlers for every local tool, and what the `lookup` calls did (started, still running, finalized, completed). */
const makeHandlers = () => {
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

const lookup = (q: string, ms: number, id?: string) => ({ name: "lookup", params: { q, ms }, ...(id === undefined ? {} : { id }) })

// -----------------------------------------------------------------------------
// Reading events
// -----------------------------------------------------------------------------

type Event = RunEvent.RunEvent

/** One readable line per event: its tag and key fields. */
const row = (event: Event): string => {
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

const encodeEvent = Schema.encodeSync(RunEvent.RunEvent)
const decodeEvent = Schema.decodeUnknownSync(RunEvent.RunEvent)

/** Every event sent as JSON text and read back is the event itself. */
const expectJsonRoundTrip = (events: ReadonlyArray<Event>) => {
  for (const event of events) {
    expect(decodeEvent(JSON.parse(JSON.stringify(encodeEvent(event))))).toEqual(event)
  }
}

/** Per model call, the text deltas joined are the finished call's text. */
const expectDeltasJoinToText = (events: ReadonlyArray<Event>) => {
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
const untilDone = (fiber: Fiber.Fiber<unknown, unknown>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let step = 0; step < 36_000 && fiber.pollUnsafe() === undefined; step++) yield* TestClock.adjust("100 millis")
    expect(fiber.pollUnsafe()).toBeDefined()
  })

interface Drained {
  readonly events: ReadonlyArray<Event>
  readonly result: Result.Result<void, LoopError.RunError>
}

/**
 * Consumes a run's stream to its end, with TestClock driving latencies and
 * tool durations; checks every event survives JSON and every call's deltas
 * join to its text.
 */
const drain = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>): Effect.Effect<Drained, never, R> =>
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
const events = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>): Effect.Effect<ReadonlyArray<Event>, never, R> =>
  Effect.map(drain(stream), (drained) => {
    if (Result.isFailure(drained.result)) throw new Error(`the stream failed: ${drained.result.failure.message}`)
    return drained.events
  })

/** The run's error, when the stream failed. */
const failureOf = (drained: Drained): LoopError.RunError => {
  if (Result.isSuccess(drained.result)) throw new Error("expected the stream to fail")
  return drained.result.failure
}

const last = (events: ReadonlyArray<Event>): Event => events[events.length - 1]

/** The chain document of the terminal event. */
const documentOf = (event: Event): unknown => {
  if (event._tag === "RunFinished" || event._tag === "RunPaused" || event._tag === "RunFailed") return event.chain
  throw new Error(`not a terminal event: ${event._tag}`)
}

/** Runs `effect` to its end under TestClock. */
const settled = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    yield* untilDone(fiber)
    return yield* Fiber.join(fiber)
  })

const whileNeeds = { mode: Mode.whileNeedsResponse }

// -----------------------------------------------------------------------------
// Exact sequences
// -----------------------------------------------------------------------------

describe("Chain.stream: the exact events of a run", () => {
  it.effect("a text-only answer: started, the call with its deltas, finished with the chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Hello there, friend.", latency: "120 millis", usage: { inputTokens: 9, outputTokens: 4 } }])
      const chain = Chain.make({ system: "Be brief.", user: "Hi" })
      const seen = yield* events(Chain.stream(chain, whileNeeds)).pipe(Effect.provide(model.layer))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=2 runCount=0",
        "ModelCallStarted #1 messages=2 tools=[]",
        `TextDelta #1 "Hello "`,
        `TextDelta #1 "there, "`,
        `TextDelta #1 "friend."`,
        `ModelCallFinished #1 stop "Hello there, friend." calls=[] usage={"inputTokens":9,"outputTokens":4} 120ms`,
        `RunFinished done "Hello there, friend."`
      ])
      const outcome = yield* settled(Chain.run(chain, whileNeeds).pipe(Effect.provide(model.layer)))
      expect(documentOf(last(seen))).toEqual(yield* Chain.encode(outcome.chain))
    }))

  it.effect("two tool rounds of two concurrent calls: calls finish in completion order, durations exact", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([
        { text: "Looking.", toolCalls: [lookup("a", 300), lookup("b", 100)], latency: "50 millis" },
        { toolCalls: [lookup("c", 20), lookup("d", 70)], latency: "30 millis" },
        { text: "a, b, c and d.", latency: "10 millis" }
      ])
      const chain = Chain.make({ user: "Find four things", toolkit: basicToolkit })
      const seen = yield* events(Chain.stream(chain, { ...whileNeeds, concurrency: 2 })).pipe(
        Effect.provide([model.layer, handlers.layer])
      )
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "Looking."`,
        `ModelCallFinished #1 tool-calls "Looking." calls=[lookup#call_1_1,lookup#call_1_2] usage={} 50ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":300}`,
        `ToolCallStarted lookup#call_1_2 {"q":"b","ms":100}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found b" 100ms`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 300ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,fails,direct]",
        `ModelCallFinished #2 tool-calls "" calls=[lookup#call_2_1,lookup#call_2_2] usage={} 30ms`,
        `ToolCallStarted lookup#call_2_1 {"q":"c","ms":20}`,
        `ToolCallStarted lookup#call_2_2 {"q":"d","ms":70}`,
        `ToolCallFinished lookup#call_2_1 succeeded "found c" 20ms`,
        `ToolCallFinished lookup#call_2_2 succeeded "found d" 70ms`,
        "ModelCallStarted #3 messages=5 tools=[lookup,fails,direct]",
        `TextDelta #3 "a, "`,
        `TextDelta #3 "b, "`,
        `TextDelta #3 "c "`,
        `TextDelta #3 "and "`,
        `TextDelta #3 "d."`,
        `ModelCallFinished #3 stop "a, b, c and d." calls=[] usage={} 10ms`,
        `RunFinished done "a, b, c and d."`
      ])
      expect(handlers.state).toEqual({ started: 4, running: 0, finalized: 4, completed: 4 })
    }))

  it.effect("concurrency 1: each call starts after the previous one finished", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 300), lookup("b", 100)] }, { text: "ok" }])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, concurrency: 1 })
      ).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(seen.filter((event) => event._tag.startsWith("ToolCall")).map(row)).toEqual([
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":300}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 300ms`,
        `ToolCallStarted lookup#call_1_2 {"q":"b","ms":100}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found b" 100ms`
      ])
    }))

  it.effect("an approval pause: RunPaused with the waiting calls and a document that decodes and resumes like Chain.run", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { text: "Checking first.", toolCalls: [lookup("balance", 40), { name: "transfer", params: { to: "Bob", amount: 300 } }] },
        { text: "Sent." }
      ]
      const options = { ...whileNeeds, maxRuns: 5 }
      const start = Chain.make({ user: "Pay Bob 300", toolkit: approvalToolkit })

      // streamed, resumed from the event's document after a JSON round trip
      const streamedModel = ChatModel.scripted(turns)
      const streamed = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, options))
        const paused = yield* Chain.decode(JSON.parse(JSON.stringify(documentOf(last(first)))), { toolkit: approvalToolkit })
        const approved = yield* Approval.decide(paused, { call_1_2: Approval.approve })
        const second = yield* events(Chain.stream(approved, options))
        return { first, second }
      }).pipe(Effect.provide([streamedModel.layer, makeHandlers().layer]))

      expect(streamed.first.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,transfer]",
        `TextDelta #1 "Checking "`,
        `TextDelta #1 "first."`,
        `ModelCallFinished #1 tool-calls "Checking first." calls=[lookup#call_1_1,transfer#call_1_2] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"balance","ms":40}`,
        `ToolCallStarted transfer#call_1_2 {"to":"Bob","amount":300}`,
        "ToolCallFinished transfer#call_1_2 awaiting-approval (no result) 0ms",
        `ToolCallFinished lookup#call_1_1 succeeded "found balance" 40ms`,
        "RunPaused ApprovalPending [transfer#call_1_2]"
      ])
      const pausedEvent = last(streamed.first)
      expect(pausedEvent._tag === "RunPaused" && pausedEvent.reason).toEqual({
        _tag: "ApprovalPending",
        calls: [{ id: "call_1_2", name: "transfer", params: { to: "Bob", amount: 300 } }]
      })
      // the resumed run goes on counting model calls; the call that waited runs now, the other is not run again
      expect(streamed.second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_2 {"to":"Bob","amount":300}`,
        `ToolCallFinished transfer#call_1_2 succeeded "sent 300 to Bob" 0ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,transfer]",
        `TextDelta #2 "Sent."`,
        `ModelCallFinished #2 stop "Sent." calls=[] usage={} 0ms`,
        `RunFinished done "Sent."`
      ])

      // the same with Chain.run
      const runModel = ChatModel.scripted(turns)
      const ran = yield* Effect.gen(function*() {
        const first = yield* Chain.run(start, options)
        expect(first._tag).toBe("Pause")
        expect(documentOf(pausedEvent)).toEqual(yield* Chain.encode(first.chain))
        const approved = yield* Approval.decide(first.chain, { call_1_2: Approval.approve })
        return yield* Chain.run(approved, options)
      }).pipe(settled, Effect.provide([runModel.layer, makeHandlers().layer]))
      expect(ran._tag === "Ok" && ran.reason).toBe("done")
      expect(documentOf(last(streamed.second))).toEqual(yield* Chain.encode(ran.chain))
    }))

  it.effect("resumed with only one of two waiting calls decided: the other is not reported again, the run pauses again", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { to: "A", amount: 1 } }, { name: "transfer", params: { to: "B", amount: 2 } }] },
        { text: "Both sent." }
      ])
      const start = Chain.make({ user: "Pay A and B", toolkit: approvalToolkit })
      const [first, second, third] = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, whileNeeds))
        const paused = yield* Chain.decode(documentOf(last(first)), { toolkit: approvalToolkit })
        const second = yield* events(Chain.stream(yield* Approval.decide(paused, { call_1_1: Approval.approve }), whileNeeds))
        const again = yield* Chain.decode(documentOf(last(second)), { toolkit: approvalToolkit })
        const third = yield* events(Chain.stream(yield* Approval.decide(again, { call_1_2: Approval.reject("No.") }), whileNeeds))
        return [first, second, third]
      }).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      expect(first.filter((event) => event._tag === "ToolCallFinished").map(row)).toEqual([
        "ToolCallFinished transfer#call_1_1 awaiting-approval (no result) 0ms",
        "ToolCallFinished transfer#call_1_2 awaiting-approval (no result) 0ms"
      ])
      expect(second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_1 {"to":"A","amount":1}`,
        `ToolCallFinished transfer#call_1_1 succeeded "sent 1 to A" 0ms`,
        "RunPaused ApprovalPending [transfer#call_1_2]"
      ])
      // a rejected call does not run: the model is sent the reviewer's message as a (non-error) result
      expect(third.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_2 {"to":"B","amount":2}`,
        `ToolCallFinished transfer#call_1_2 rejected "No." 0ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,transfer]",
        `TextDelta #2 "Both "`,
        `TextDelta #2 "sent."`,
        `ModelCallFinished #2 stop "Both sent." calls=[] usage={} 0ms`,
        `RunFinished done "Both sent."`
      ])
    }))

  it.effect("an external pause: the call waits without a result; supplied, the run ends as Chain.run does", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { toolCalls: [{ name: "fetch", params: { url: "https://a.example" } }, lookup("x", 5)] },
        { text: "The page says hi." }
      ]
      const start = Chain.make({ user: "Read the page", toolkit: externalToolkit })
      const resume = (chain: Chain.Chain) => ExternalTool.supply(chain, { call_1_1: { result: "hi" } })

      const streamedModel = ChatModel.scripted(turns)
      const streamed = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, whileNeeds))
        const paused = yield* Chain.decode(documentOf(last(first)), { toolkit: externalToolkit })
        const second = yield* events(Chain.stream(yield* resume(paused), whileNeeds))
        return { first, second }
      }).pipe(Effect.provide([streamedModel.layer, makeHandlers().layer]))
      expect(streamed.first.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fetch]",
        `ModelCallFinished #1 tool-calls "" calls=[fetch#call_1_1,lookup#call_1_2] usage={} 0ms`,
        `ToolCallStarted fetch#call_1_1 {"url":"https://a.example"}`,
        "ToolCallFinished fetch#call_1_1 awaiting-result (no result) 0ms",
        `ToolCallStarted lookup#call_1_2 {"q":"x","ms":5}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found x" 5ms`,
        "RunPaused ExternalPending [fetch#call_1_1]"
      ])
      // a supplied result is not a tool call the loop runs: no tool events, the model is called next
      expect(streamed.second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        "ModelCallStarted #2 messages=3 tools=[lookup,fetch]",
        `TextDelta #2 "The "`,
        `TextDelta #2 "page "`,
        `TextDelta #2 "says "`,
        `TextDelta #2 "hi."`,
        `ModelCallFinished #2 stop "The page says hi." calls=[] usage={} 0ms`,
        `RunFinished done "The page says hi."`
      ])

      const runModel = ChatModel.scripted(turns)
      const ran = yield* Effect.gen(function*() {
        const first = yield* Chain.run(start, whileNeeds)
        return yield* Chain.run(yield* resume(first.chain), whileNeeds)
      }).pipe(settled, Effect.provide([runModel.layer, makeHandlers().layer]))
      expect(documentOf(last(streamed.second))).toEqual(yield* Chain.encode(ran.chain))
    }))

  it.effect("a failing model: ModelCallFailed, RunFailed with the chain, then the stream fails with Chain.run's RunError", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { toolCalls: [lookup("a", 10)] },
        { fail: "overloaded", latency: "2 seconds" }
      ]
      const start = Chain.make({ user: "go", toolkit: basicToolkit })
      const drained = yield* drain(Chain.stream(start, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer])
      )
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `ModelCallFinished #1 tool-calls "" calls=[lookup#call_1_1] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":10}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 10ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,fails,direct]",
        "ModelCallFailed #2 attempt=1 ModelCallFailed: The model call failed: overloaded 2000ms",
        "RunFailed ModelCallFailed: The model call failed: overloaded"
      ])
      const streamError = failureOf(drained)
      const runError = yield* settled(Effect.flip(
        Chain.run(start, whileNeeds).pipe(Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer]))
      ))
      expect(streamError._tag).toBe("RunError")
      expect(streamError.reason._tag).toBe("ModelCallFailed")
      expect(streamError.reason).toEqual(runError.reason)
      expect(streamError.message).toBe(runError.message)
      // the chain is intact: the tool round is kept, the failed call left no trace
      expect(streamError.chain.runCount).toBe(1)
      expect(streamError.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
      const document = yield* Chain.encode(streamError.chain)
      expect(document).toEqual(yield* Chain.encode(runError.chain))
      expect(documentOf(last(drained.events))).toEqual(document)
    }))

  it.effect("invalid options: RunStarted, RunFailed with InvalidInput, no model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never" }])
      const drained = yield* drain(Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, maxRuns: 0 })).pipe(
        Effect.provide(model.layer)
      )
      expect(drained.events.map((event) => event._tag)).toEqual(["RunStarted", "RunFailed"])
      expect(failureOf(drained).reason._tag).toBe("InvalidInput")
      expect(model.calls).toBe(0)
    }))

  it.effect("retries: a ModelCallFailed per failed attempt, numbered, then the same call finishes", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { fail: "busy", latency: "10 millis" },
        { fail: "still busy", latency: "20 millis" },
        { text: "Got it.", latency: "30 millis" }
      ])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 3, base: "100 millis" }) })
      ).pipe(Effect.provide(model.layer))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: busy 10ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=2 ModelCallFailed: The model call failed: still busy 20ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Got "`,
        `TextDelta #1 "it."`,
        `ModelCallFinished #1 stop "Got it." calls=[] usage={} 30ms`,
        `RunFinished done "Got it."`
      ])
    }))

  it.effect("retries given up: the last attempt's failure, then RunFailed", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "busy" }, { fail: "busy again" }, { text: "too late" }])
      const drained = yield* drain(
        Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 1, base: "100 millis" }) })
      ).pipe(Effect.provide(model.layer))
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: busy 0ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=2 ModelCallFailed: The model call failed: busy again 0ms",
        "RunFailed ModelCallFailed: The model call failed: busy again"
      ])
      expect(failureOf(drained).message).toBe("The model call failed: busy again")
      expect(model.calls).toBe(2)
    }))

  it.effect("failed tools: status failed with the text the model is sent", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "fails", params: { q: "x" } }, { name: "nope", params: {} }, { name: "lookup", params: { q: 1 } }] },
        { text: "Sorry." }
      ])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, makeHandlers().layer])
      )
      const finished = seen.filter((event) => event._tag === "ToolCallFinished")
      expect(finished.map((event) => [event.id, event.name, event.status])).toEqual([
        ["call_1_1", "fails", "failed"],
        ["call_1_2", "nope", "failed"],
        ["call_1_3", "lookup", "failed"]
      ])
      expect(finished[0]._tag === "ToolCallFinished" && finished[0].result).toBe("no x")
      expect(finished[1]._tag === "ToolCallFinished" && finished[1].result).toBe(
        "Tool 'nope' not found. Available tools: lookup, fails, direct"
      )
      const invalid = finished[2]._tag === "ToolCallFinished" ? String(finished[2].result) : ""
      expect(invalid).toMatch(/^Invalid arguments for tool 'lookup': /)
      // what the event says is what the model was sent
      const sent = model.requests[1].prompt.content[2]
      expect(sent.role === "tool" && sent.content.map((part) => part.type === "tool-result" ? part.result : undefined)).toEqual(
        finished.map((event) => event._tag === "ToolCallFinished" ? event.result : undefined)
      )
    }))

  it.effect("direct return: the tool's result ends the run, no further model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "One moment.", toolCalls: [{ name: "direct", params: { q: "faq" } }] }, { text: "never" }])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, makeHandlers().layer])
      )
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "One "`,
        `TextDelta #1 "moment."`,
        `ModelCallFinished #1 tool-calls "One moment." calls=[direct#call_1_1] usage={} 0ms`,
        `ToolCallStarted direct#call_1_1 {"q":"faq"}`,
        `ToolCallFinished direct#call_1_1 succeeded "answer faq" 0ms`,
        `RunFinished direct-return "One moment."`
      ])
      expect(model.calls).toBe(1)
    }))

  it.effect("max runs with final-answer: the extra call is a numbered call like any other", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 1)] }, { text: "Best guess." }])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, maxRuns: 1, onMaxRuns: "final-answer" })
      ).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `ModelCallFinished #1 tool-calls "" calls=[lookup#call_1_1] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":1}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 1ms`,
        // the instruction to answer now is the 4th message
        "ModelCallStarted #2 messages=4 tools=[lookup,fails,direct]",
        `TextDelta #2 "Best "`,
        `TextDelta #2 "guess."`,
        `ModelCallFinished #2 stop "Best guess." calls=[] usage={} 0ms`,
        `RunFinished final-answer "Best guess."`
      ])
      expect(model.requests[1].toolChoice).toBe("none")
    }))
})

describe("Chain.stream: edges", () => {
  it.effect("a model stream that fails midway: its deltas, ModelCallFailed; the retry starts the call over", () =>
    Effect.gen(function*() {
      const attempts = { count: 0 }
      const modelLayer = Layer.succeed(ChatModel.ChatModel, ChatModel.ChatModel.of({
        generate: () => Effect.die("not used"),
        stream: () =>
          Stream.suspend(() => {
            const attempt = ++attempts.count
            const head = Stream.fromIterable<Response.AnyPart>([
              Response.makePart("text-start", { id: "t" }),
              Response.makePart("text-delta", { id: "t", delta: attempt === 1 ? "Hel" : "Hello" })
            ])
            return attempt === 1
              ? Stream.concat(head, Stream.die(new Error("connection reset")))
              : Stream.concat(
                head,
                Stream.fromIterable<Response.AnyPart>([Response.makePart("text-end", { id: "t" }), finish("stop")])
              )
          })
      }))
      const drained = yield* drain(
        Chain.stream(Chain.make({ user: "hi" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 1, base: "1 second" }) })
      ).pipe(Effect.provide(modelLayer))
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Hel"`,
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: the model failed unexpectedly: connection reset 0ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Hello"`,
        `ModelCallFinished #1 stop "Hello" calls=[] usage={"inputTokens":4,"outputTokens":2} 0ms`,
        `RunFinished done "Hello"`
      ])
      const final = last(drained.events)
      expect(final._tag === "RunFinished" && (final.chain as { readonly runCount: number }).runCount).toBe(1)
    }))

  it.effect("a tool that runs a chain of its own (a sub-agent): the outer stream is still one run's events", () =>
    Effect.gen(function*() {
      const Ask = Tool.make("ask_expert", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
      const expertToolkit = Toolkit.make(Ask)
      const expert = ChatModel.scripted([{ text: "expert says 42" }])
      const expertHandlers = expertToolkit.toLayer({
        ask_expert: ({ q }) =>
          Chain.run(Chain.make({ user: q }), whileNeeds).pipe(
            Effect.map((outcome) => Chain.text(outcome.chain)),
            Effect.orDie,
            Effect.provide(expert.layer)
          )
      })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "?" } }] }, { text: "It is 42." }])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, expertHandlers])
      )
      // the sub-agent's run is the tool's business: its RunStarted/RunFinished and its call #1 must not
      // look like this run's (a consumer stops at the first RunFinished and numbers calls by `call`)
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[ask_expert]",
        `ModelCallFinished #1 tool-calls "" calls=[ask_expert#call_1_1] usage={} 0ms`,
        `ToolCallStarted ask_expert#call_1_1 {"q":"?"}`,
        `ToolCallFinished ask_expert#call_1_1 succeeded "expert says 42" 0ms`,
        "ModelCallStarted #2 messages=3 tools=[ask_expert]",
        `TextDelta #2 "It "`,
        `TextDelta #2 "is "`,
        `TextDelta #2 "42."`,
        `ModelCallFinished #2 stop "It is 42." calls=[] usage={} 0ms`,
        `RunFinished done "It is 42."`
      ])
    }))

  for (const bufferSize of [-1, 1.5, Number.NaN]) {
    it.effect(`bufferSize ${bufferSize}: fails with InvalidInput naming bufferSize, before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "never" }])
        const drained = yield* drain(Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, bufferSize })).pipe(
          Effect.provide(model.layer)
        )
        const error = failureOf(drained)
        expect(error.reason._tag).toBe("InvalidInput")
        expect(error.message).toContain("bufferSize")
        expect(model.calls).toBe(0)
      }))
  }
})

// -----------------------------------------------------------------------------
// Events as data
// -----------------------------------------------------------------------------

describe("events as data", () => {
  it.effect("every kind of event encodes to JSON and decodes back equal", () =>
    Effect.gen(function*() {
      const all: Array<Event> = []
      const collect = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>) =>
        Effect.map(drain(stream), (drained) => all.push(...drained.events))
      const handlers = makeHandlers()
      yield* collect(Chain.stream(
        Chain.make({ user: "go", toolkit: basicToolkit }),
        { ...whileNeeds, retry: ModelRetry.schedule({ times: 1 }) }
      )).pipe(Effect.provide([
        ChatModel.scripted([
          { fail: "busy" },
          { text: "ok ", toolCalls: [lookup("a", 5), { name: "fails", params: { q: "b" } }], usage: { inputTokens: 3, outputTokens: 2 } },
          { text: "done" }
        ]).layer,
        handlers.layer
      ]))
      yield* collect(Chain.stream(Chain.make({ user: "go", toolkit: approvalToolkit }), whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted([{ toolCalls: [{ name: "transfer", params: { to: "A", amount: 1 } }] }]).layer, handlers.layer])
      )
      yield* collect(Chain.stream(Chain.make({ user: "go" }), whileNeeds)).pipe(
        Effect.provide(ChatModel.scripted([{ fail: "down" }]).layer)
      )
      expect(new Set(all.map((event) => event._tag))).toEqual(
        new Set([
          "RunStarted",
          "ModelCallStarted",
          "TextDelta",
          "ModelCallFinished",
          "ModelCallFailed",
          "ToolCallStarted",
          "ToolCallFinished",
          "RunPaused",
          "RunFinished",
          "RunFailed"
        ])
      )
      for (const event of all) {
        const json = JSON.stringify(encodeEvent(event))
        expect(decodeEvent(JSON.parse(json))).toEqual(event)
      }
      // the documents in terminal events are Chain.encode documents
      for (const event of all) {
        if (event._tag === "RunFinished" || event._tag === "RunPaused" || event._tag === "RunFailed") {
          const json = JSON.stringify(event.chain)
          const decoded: Chain.Chain = event._tag === "RunPaused"
            ? yield* Chain.decode(json, { toolkit: approvalToolkit })
            : yield* Chain.decode(json, { toolkit: basicToolkit })
          expect(yield* Chain.encode(decoded)).toEqual(event.chain)
        }
      }
    }))

  it.effect("call numbers go on after a resume: a stopped run resumed from its document continues at runCount + 1", () =>
    Effect.gen(function*() {
      const turns = [{ toolCalls: [lookup("a", 1)] }, { toolCalls: [lookup("b", 1)] }, { text: "end" }]
      const model = ChatModel.scripted(turns)
      const handlers = makeHandlers()
      const first = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, maxRuns: 1, onMaxRuns: "stop" }))
        .pipe(Effect.provide([model.layer, handlers.layer]))
      const stopped = last(first)
      expect(row(stopped)).toBe(`RunFinished max-runs ""`)
      const resumed = addUser(yield* Chain.decode(documentOf(stopped), { toolkit: basicToolkit }))
      const second = yield* events(Chain.stream(resumed, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(turns.slice(1)).layer, handlers.layer])
      )
      expect(second[0]).toEqual({ _tag: "RunStarted", messages: 4, runCount: 1 })
      expect(calls(first)).toEqual([1])
      expect(calls(second)).toEqual([2, 3])
      // every model event of a call carries its number
      expect(
        second.flatMap((event) => "call" in event ? [`${event._tag} ${event.call}`] : [])
      ).toEqual(["ModelCallStarted 2", "ModelCallFinished 2", "ModelCallStarted 3", "TextDelta 3", "ModelCallFinished 3"])
    }))
})

const addUser = Chain.addUser("and then?")
const calls = (events: ReadonlyArray<Event>) => events.flatMap((event) => event._tag === "ModelCallFinished" ? [event.call] : [])

// -----------------------------------------------------------------------------
// Interruption
// -----------------------------------------------------------------------------

describe("interrupting the stream interrupts the run", () => {
  it.effect("a consumer that stops early (takeUntil the first finished tool): the running tool is finalized, nothing else runs", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("slow", 5_000), lookup("quick", 10)] }, { text: "never" }])
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(
          Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds).pipe(
            Stream.takeUntil((event) => event._tag === "ToolCallFinished")
          )
        ).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      yield* TestClock.adjust("100 millis")
      const taken = yield* Fiber.join(fiber)
      expect(taken.map((event) => event._tag)).toEqual([
        "RunStarted",
        "ModelCallStarted",
        "ModelCallFinished",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallFinished"
      ])
      // the slow call was running when the consumer stopped: it was interrupted, its finalizer ran
      expect(handlers.state).toEqual({ started: 2, running: 0, finalized: 2, completed: 1 })
      expect(handlers.fibers.map((f) => f.pollUnsafe() !== undefined)).toEqual([true, true])
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(1)
      expect(model.calls).toBe(1)
    }))

  it.effect("Stream.take(3): the run stops; a tool it got to is interrupted, none completes, the model is not called again", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ text: "I will look it up", toolCalls: [lookup("a", 10)], latency: "1 second" }, { text: "never" }])
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds).pipe(Stream.take(3))).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      yield* TestClock.adjust("2 seconds")
      const taken = yield* Fiber.join(fiber)
      expect(taken.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "I "`
      ])
      // the run may be ahead of the consumer (by the buffer): whatever it started was interrupted
      expect(handlers.state.running).toBe(0)
      expect(handlers.state.finalized).toBe(handlers.state.started)
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(0)
      expect(model.calls).toBe(1)
    }))

  it.effect("interrupting the consuming fiber mid tool call: finalizers run, the handler's fiber is done, no model call follows", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 1_000), lookup("b", 3_000)] }, { text: "never" }])
      const seen: Array<Event> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(
          Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds),
          (event) => Effect.sync(() => seen.push(event))
        ).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      yield* TestClock.adjust("1500 millis")
      expect(handlers.state).toEqual({ started: 2, running: 1, finalized: 1, completed: 1 })
      yield* Fiber.interrupt(fiber)
      expect(handlers.state).toEqual({ started: 2, running: 0, finalized: 2, completed: 1 })
      expect(handlers.fibers.every((f) => f.pollUnsafe() !== undefined)).toBe(true)
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(1)
      expect(model.calls).toBe(1)
      // no terminal event: the run neither finished nor failed
      expect(seen.map((event) => event._tag)).not.toContain("RunFinished")
      expect(seen.map((event) => event._tag)).not.toContain("RunFailed")
    }))
})

// -----------------------------------------------------------------------------
// Observers
// -----------------------------------------------------------------------------

/** A run with tools, text, a failed call and usage: enough to exercise every event of a finished run. */
const observedTurns: ReadonlyArray<ChatModel.ScriptedTurn> = [
  { text: "Let me check two things.", toolCalls: [lookup("a", 30), lookup("b", 10)], usage: { inputTokens: 10, outputTokens: 5 } },
  { toolCalls: [{ name: "fails", params: { q: "c" } }, { name: "nope", params: {} }] },
  { text: "Here is what I found: a and b.", usage: { inputTokens: 30, outputTokens: 9 } }
]
const observedStart = Chain.make({ system: "Research.", user: "go", toolkit: basicToolkit })

interface Summary {
  readonly tag: string
  readonly detail: string
  readonly document: unknown
}

const summarize = <R>(outcome: Effect.Effect<Outcome.Final, LoopError.RunError, R>): Effect.Effect<Summary, never, R> =>
  Effect.matchEffect(outcome, {
    onSuccess: (final) =>
      Effect.map(Chain.encode(final.chain), (document) => ({
        tag: final._tag,
        detail: final._tag === "Ok" ? final.reason : final.reason._tag,
        document
      })).pipe(Effect.orDie),
    onFailure: (error) =>
      Effect.map(Chain.encode(error.chain), (document) => ({ tag: "Error", detail: error.reason._tag, document })).pipe(Effect.orDie)
  })

const runObserved = (observer: RunEvent.Observer | undefined, turns = observedTurns) =>
  Effect.gen(function*() {
    const run = Chain.run(observedStart, whileNeeds)
    const observed = observer === undefined ? run : Effect.provideService(run, RunEvent.Observer, observer)
    return yield* settled(summarize(observed))
  }).pipe(Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer]))

describe("RunEvent.Observer", () => {
  const failing: ReadonlyArray<readonly [string, (event: Event) => Effect.Effect<void>]> = [
    ["dies", () => Effect.die(new Error("observer died"))],
    ["throws instead of returning an Effect", () => {
      throw new Error("observer threw")
    }],
    // a careless caller's observer with a typed failure (the type says it cannot fail)
    ["fails", () => Effect.fail("observer failed") as unknown as Effect.Effect<void>],
    ["fails only on the terminal event", (event) => event._tag === "RunFinished" ? Effect.die("late") : Effect.void]
  ]

  for (const [name, emit] of failing) {
    for (const streaming of [false, true]) {
      it.effect(`an observer that ${name} (streaming ${streaming}) does not change the run's result`, () =>
        Effect.gen(function*() {
          let received = 0
          const counted = (event: Event) => Effect.suspend(() => (received++, emit(event)))
          const plain = yield* runObserved(undefined)
          const observed = yield* runObserved({ emit: counted, streaming })
          expect(observed).toEqual(plain)
          expect(plain.tag).toBe("Ok")
          // it was called for every event, not dropped after its first failure
          expect(received).toBeGreaterThan(10)
        }))
    }
  }

  it.effect("an observer whose emit fails does not change a failing run's error", () =>
    Effect.gen(function*() {
      const turns = [...observedTurns.slice(0, 1), { fail: "down" }]
      const plain = yield* runObserved(undefined, turns)
      const observed = yield* runObserved({ emit: () => Effect.die("observer died"), streaming: true }, turns)
      expect(plain.detail).toBe("ModelCallFailed")
      expect(observed).toEqual(plain)
    }))

  it.effect("an observer receives the events Chain.stream yields; without streaming, the same minus the text deltas", () =>
    Effect.gen(function*() {
      const received = (streaming: boolean) =>
        Effect.gen(function*() {
          const seen: Array<Event> = []
          yield* runObserved({ emit: (event) => Effect.sync(() => seen.push(event)), streaming })
          return seen
        })
      const streamed = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      expect(yield* received(true)).toEqual(streamed)
      const unstreamed = yield* received(false)
      expect(unstreamed).toEqual(streamed.filter((event) => event._tag !== "TextDelta"))
      expect(streamed.some((event) => event._tag === "TextDelta")).toBe(true)
    }))

  it.effect("an observed run, streamed or not, ends with the same chain as the default run", () =>
    Effect.gen(function*() {
      const plain = yield* runObserved(undefined)
      const streamed = yield* runObserved({ emit: () => Effect.void, streaming: true })
      const unstreamed = yield* runObserved({ emit: () => Effect.void, streaming: false })
      const viaStream = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      expect(streamed).toEqual(plain)
      expect(unstreamed).toEqual(plain)
      expect(documentOf(last(viaStream))).toEqual(plain.document)
      expect(plain.detail).toBe("done")
    }))

  it.effect("a model whose stream has reasoning, several text blocks and tool-argument deltas: the same chain as generate's", () =>
    Effect.gen(function*() {
      const whole = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("reasoning", { text: "I should look it up." }),
            Response.makePart("text", { text: "Looking " }),
            Response.makePart("text", { text: "it up." }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            finish("tool-calls")
          ]
          : [Response.makePart("text", { text: "Found a." }), finish("stop")]
      const streamedParts = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("reasoning-start", { id: "r" }),
            Response.makePart("reasoning-delta", { id: "r", delta: "I should " }),
            Response.makePart("reasoning-delta", { id: "r", delta: "look it up." }),
            Response.makePart("reasoning-end", { id: "r" }),
            Response.makePart("text-start", { id: "t1" }),
            Response.makePart("text-delta", { id: "t1", delta: "Looking " }),
            Response.makePart("text-end", { id: "t1" }),
            Response.makePart("text-start", { id: "t2" }),
            Response.makePart("text-delta", { id: "t2", delta: "it " }),
            Response.makePart("text-delta", { id: "t2", delta: "up." }),
            Response.makePart("text-end", { id: "t2" }),
            Response.makePart("tool-params-start", { id: "c1", name: "lookup", providerExecuted: false }),
            Response.makePart("tool-params-delta", { id: "c1", delta: "{\"q\":\"a\",\"ms\":5}" }),
            Response.makePart("tool-params-end", { id: "c1" }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            finish("tool-calls")
          ]
          : [
            Response.makePart("text-start", { id: "t" }),
            Response.makePart("text-delta", { id: "t", delta: "Found " }),
            Response.makePart("text-delta", { id: "t", delta: "a." }),
            Response.makePart("text-end", { id: "t" }),
            finish("stop")
          ]
      const { plain, seen } = yield* generatedAndStreamed(partsModel(whole, streamedParts))
      expect(plain.detail).toBe("done")
      expect(documentOf(last(seen))).toEqual(plain.document)
      expect(seen.filter((event) => event._tag === "ModelCallFinished").map((event) => event._tag === "ModelCallFinished" && event.text))
        .toEqual(["Looking it up.", "Found a."])
    }))

  it.effect("a model stream that reuses a block id once the block has ended: no text is lost, the same chain as generate's", () =>
    Effect.gen(function*() {
      // ids identify a block only while it is open (as in the AI SDK's stream protocol)
      const whole = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("text", { text: "Let me check. " }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            Response.makePart("text", { text: "Checking now." }),
            finish("tool-calls")
          ]
          : [Response.makePart("text", { text: "Found a." }), finish("stop")]
      const streamedParts = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Let me check. " }),
            Response.makePart("text-end", { id: "0" }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Checking now." }),
            Response.makePart("text-end", { id: "0" }),
            finish("tool-calls")
          ]
          : [
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Found a." }),
            Response.makePart("text-end", { id: "0" }),
            finish("stop")
          ]
      const { plain, seen } = yield* generatedAndStreamed(partsModel(whole, streamedParts))
      expect(seen.filter((event) => event._tag === "ModelCallFinished").map((event) => event._tag === "ModelCallFinished" && event.text))
        .toEqual(["Let me check. Checking now.", "Found a."])
      expect(documentOf(last(seen))).toEqual(plain.document)
    }))
})

/** A model answering turn n with `whole(n)` from generate, and `streamed(n)` from stream. */
const partsModel = (
  whole: (turn: number) => ReadonlyArray<Response.AnyPart>,
  streamed: (turn: number) => ReadonlyArray<Response.AnyPart>
): Layer.Layer<ChatModel.ChatModel> =>
  Layer.sync(ChatModel.ChatModel, () => {
    let generated = 0
    let streamedTurns = 0
    return ChatModel.ChatModel.of({
      generate: () => Effect.sync(() => whole(generated++)),
      stream: () => Stream.suspend(() => Stream.fromIterable(streamed(streamedTurns++)))
    })
  })

/** The same run with Chain.run (generate) and Chain.stream (stream). */
const generatedAndStreamed = (modelLayer: Layer.Layer<ChatModel.ChatModel>) =>
  Effect.gen(function*() {
    const start = Chain.make({ user: "go", toolkit: basicToolkit })
    const plain = yield* settled(summarize(Chain.run(start, whileNeeds))).pipe(
      Effect.provide([modelLayer, makeHandlers().layer])
    )
    const seen = yield* events(Chain.stream(start, whileNeeds)).pipe(Effect.provide([modelLayer, makeHandlers().layer]))
    return { plain, seen }
  })

const finish = (reason: Response.FinishReason): Response.AnyPart =>
  Response.makePart("finish", {
    reason,
    usage: new Response.Usage({
      inputTokens: { uncached: undefined, total: 4, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: undefined, reasoning: undefined }
    }),
    response: undefined
  })

// -----------------------------------------------------------------------------
// Backpressure
// -----------------------------------------------------------------------------

/** An event without its duration (for comparing runs whose clocks differ). */
const untimed = (event: Event): unknown => {
  if ("durationMillis" in event) {
    const { durationMillis: _durationMillis, ...rest } = event
    return rest
  }
  return event
}

describe("a slow consumer", () => {
  // One tool call at a time, so the run's order of events does not depend on scheduling.
  const sequential = { ...whileNeeds, concurrency: 1 }
  const fastEvents = events(Chain.stream(observedStart, sequential)).pipe(
    Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
  )

  it.effect("with bufferSize 1, a consumer that yields on every event still gets every event, in order", () =>
    Effect.gen(function*() {
      const fast = yield* fastEvents
      const slow = yield* events(
        Chain.stream(observedStart, { ...sequential, bufferSize: 1 }).pipe(
          Stream.tap(() => Effect.repeat(Effect.yieldNow, { times: 20 }))
        )
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      expect(slow.map(untimed)).toEqual(fast.map(untimed))
      expect(slow.length).toBeGreaterThan(20)
    }))

  it.effect("with bufferSize 1, a consumer that takes a second per event: every event in order, the same chain", () =>
    Effect.gen(function*() {
      const fast = yield* fastEvents
      const slow = yield* events(
        Chain.stream(observedStart, { ...sequential, bufferSize: 1 }).pipe(Stream.tap(() => Effect.sleep("1 second")))
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      expect(slow.map(untimed)).toEqual(fast.map(untimed))
      expect(documentOf(last(slow))).toEqual(documentOf(last(fast)))
    }))

  it.effect("with unbounded concurrency and bufferSize 1, each call's events keep their order and none is lost", () =>
    Effect.gen(function*() {
      const fast = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      const slow = yield* events(
        Chain.stream(observedStart, { ...whileNeeds, bufferSize: 1 }).pipe(Stream.tap(() => Effect.sleep("1 second")))
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      const key = (event: Event) => JSON.stringify(untimed(event))
      expect(slow.map(key).sort()).toEqual(fast.map(key).sort())
      const perCall = (events: ReadonlyArray<Event>) =>
        events.flatMap((event) => "id" in event ? [`${event.id} ${event._tag}`] : "call" in event ? [`#${event.call} ${key(event)}`] : [])
      for (const id of ["call_1_1", "call_1_2", "call_2_1", "call_2_2"]) {
        expect(perCall(slow).filter((line) => line.startsWith(id))).toEqual([`${id} ToolCallStarted`, `${id} ToolCallFinished`])
      }
      expect(perCall(slow).filter((line) => line.startsWith("#"))).toEqual(perCall(fast).filter((line) => line.startsWith("#")))
      expect(slow[0]._tag).toBe("RunStarted")
      expect(last(slow)._tag).toBe("RunFinished")
    }))

  it.effect("a duration measures the model call or the tool, not the time spent waiting for a slow consumer", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [lookup("a", 30), lookup("b", 10)], latency: "200 millis" },
        { toolCalls: [lookup("c", 70)], latency: "50 millis" },
        { text: "done" }
      ])
      const slow = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, bufferSize: 1 }).pipe(
          Stream.tap(() => Effect.sleep("1 second"))
        )
      ).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      const durations = slow.flatMap((event) =>
        event._tag === "ToolCallFinished" ? [`${event.id} ${event.durationMillis}ms`]
        : event._tag === "ModelCallFinished" && event.text === "" ? [`#${event.call} ${event.durationMillis}ms`]
        : []
      )
      expect(durations.sort()).toEqual(["#1 200ms", "#2 50ms", "call_1_1 30ms", "call_1_2 10ms", "call_2_1 70ms"])
    }))
})

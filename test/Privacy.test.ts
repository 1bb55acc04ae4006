/**
 * `Privacy.OmitContent`: with it on, a run's events carry no tool arguments,
 * tool results, model text or text deltas and no chain documents (a
 * `ChainSummary` instead), for finished, paused and failed runs, under
 * `Chain.stream` and with an observer of one's own; the events are still
 * valid Schema data. The run itself is unchanged. With it off (the default),
 * the same run reports its content, so each check can fail.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, Mode, RunEvent } from "../src/index.ts"
import * as Privacy from "../src/Privacy.ts"

// -----------------------------------------------------------------------------
// A run full of personal data
// -----------------------------------------------------------------------------

/** Strings that must not appear in any event when content is omitted. */
const personal = ["Jane Roe", "DE89370400440532013000", "1,204.50", "balance of Jane", "Paris"]

const Account = Tool.make("account", {
  parameters: Schema.Struct({ holder: Schema.String, iban: Schema.String }),
  success: Schema.Struct({ balance: Schema.String }),
  failure: Schema.String
})
const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const toolkit = Toolkit.make(Account, Transfer)
const handlers = toolkit.toLayer({
  account: () => Effect.succeed({ balance: "1,204.50" }),
  transfer: ({ amount, to }) => Effect.succeed(`sent ${amount} to ${to}`)
})

const accountCall = { name: "account", params: { holder: "Jane Roe", iban: "DE89370400440532013000" } }
const finished = () =>
  ChatModel.scripted([
    { text: "Looking up the balance of Jane.", toolCalls: [accountCall], usage: { inputTokens: 20, outputTokens: 9 } },
    { text: "Jane Roe has 1,204.50 EUR.", usage: { inputTokens: 40, outputTokens: 7 } }
  ])
const question = () => Chain.make({ user: "What is the balance of Jane Roe (DE89370400440532013000)?", toolkit })
const whileNeeds = { mode: Mode.whileNeedsResponse }

const encodeEvent = Schema.encodeSync(RunEvent.RunEvent)
const decodeEvent = Schema.decodeUnknownSync(RunEvent.RunEvent)

/** The events as the JSON a consumer would forward. */
const json = (events: ReadonlyArray<RunEvent.RunEvent>): string => JSON.stringify(events.map((event) => encodeEvent(event)))

const leaks = (events: ReadonlyArray<RunEvent.RunEvent>): ReadonlyArray<string> => {
  const text = json(events)
  return personal.filter((value) => text.includes(value))
}

const collect = <E, R>(stream: Stream.Stream<RunEvent.RunEvent, E, R>) =>
  Effect.gen(function*() {
    const events: Array<RunEvent.RunEvent> = []
    yield* Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))).pipe(Effect.ignore)
    return events
  })

// -----------------------------------------------------------------------------
// Tests
// -----------------------------------------------------------------------------

describe("Privacy.OmitContent: events without content", () => {
  it.effect("a finished run under Chain.stream: no params, results, text or deltas, and a chain summary", () =>
    Effect.gen(function*() {
      const events = yield* collect(Chain.stream(question(), whileNeeds)).pipe(
        Effect.provide(Layer.mergeAll(finished().layer, handlers, Privacy.layerOmitContent))
      )
      expect(events).toEqual([
        { _tag: "RunStarted", messages: 1, runCount: 0 },
        { _tag: "ModelCallStarted", call: 1, messages: 1, tools: ["account", "transfer"] },
        {
          _tag: "ModelCallFinished",
          call: 1,
          finishReason: "tool-calls",
          usage: { inputTokens: 20, outputTokens: 9 },
          text: "",
          toolCalls: [{ id: "call_1_1", name: "account" }],
          durationMillis: 0
        },
        { _tag: "ToolCallStarted", id: "call_1_1", name: "account" },
        { _tag: "ToolCallFinished", id: "call_1_1", name: "account", status: "succeeded", durationMillis: 0 },
        { _tag: "ModelCallStarted", call: 2, messages: 3, tools: ["account", "transfer"] },
        {
          _tag: "ModelCallFinished",
          call: 2,
          finishReason: "stop",
          usage: { inputTokens: 40, outputTokens: 7 },
          text: "",
          toolCalls: [],
          durationMillis: 0
        },
        { _tag: "RunFinished", reason: "done", text: "", chain: { _tag: "ChainSummary", messages: 4, runCount: 2 } }
      ])
      expect(leaks(events)).toEqual([])
      // still valid events: each survives JSON and decodes to itself
      for (const event of events) expect(decodeEvent(JSON.parse(JSON.stringify(encodeEvent(event))))).toEqual(event)
      const last = events.at(-1)
      expect(last?._tag === "RunFinished" && Schema.is(RunEvent.ChainSummary)(last.chain)).toBe(true)
    }))

  it.effect("the same run with the setting off (the default) reports every piece of content", () =>
    Effect.gen(function*() {
      const events = yield* collect(Chain.stream(question(), whileNeeds)).pipe(Effect.provide([finished().layer, handlers]))
      expect(leaks(events)).toEqual(personal.filter((value) => value !== "Paris"))
      expect(events.some((event) => event._tag === "TextDelta")).toBe(true)
    }))

  it.effect("the run itself is unchanged: Chain.run ends with the same chain either way", () =>
    Effect.gen(function*() {
      const plain = yield* Chain.run(question(), whileNeeds).pipe(Effect.provide([finished().layer, handlers]))
      const omitted = yield* Chain.run(question(), whileNeeds).pipe(
        Effect.provide(Layer.mergeAll(finished().layer, handlers, Privacy.layerOmitContent))
      )
      expect(yield* Chain.encode(omitted.chain)).toEqual(yield* Chain.encode(plain.chain))
      expect(Chain.text(omitted.chain)).toBe("Jane Roe has 1,204.50 EUR.")
    }))

  it.effect("a paused run: the waiting calls keep ids and names, their params are null, and the chain is a summary", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { to: "Paris office of Jane Roe", amount: 1204.5 } }] },
        { text: "Sent." }
      ])
      const events = yield* collect(Chain.stream(Chain.make({ user: "Pay the rent", toolkit }), whileNeeds)).pipe(
        Effect.provide(Layer.mergeAll(model.layer, handlers, Privacy.layerOmitContent))
      )
      expect(events.at(-1)).toEqual({
        _tag: "RunPaused",
        reason: { _tag: "ApprovalPending", calls: [{ id: "call_1_1", name: "transfer", params: null }] },
        chain: { _tag: "ChainSummary", messages: 2, runCount: 1 }
      })
      expect(leaks(events)).toEqual([])
      // the chain to resume comes from Chain.run's Pause outcome, which is unchanged
      const paused = yield* Chain.run(Chain.make({ user: "Pay the rent", toolkit }), whileNeeds).pipe(
        Effect.provide(Layer.mergeAll(ChatModel.scripted([{ toolCalls: [{ name: "transfer", params: { to: "Paris", amount: 1 } }] }]).layer, handlers, Privacy.layerOmitContent))
      )
      expect(paused._tag === "Pause" && Approval.pending(paused.chain).map((call) => call.params)).toEqual([{ to: "Paris", amount: 1 }])
    }))

  it.effect("a failed run: the error's tag and message stay, the chain is a summary", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [accountCall] }, { fail: "the provider is down" }])
      const events = yield* collect(Chain.stream(question(), whileNeeds)).pipe(
        Effect.provide(Layer.mergeAll(model.layer, handlers, Privacy.layerOmitContent))
      )
      expect(events.at(-1)).toEqual({
        _tag: "RunFailed",
        error: "ModelCallFailed",
        message: "The model call failed: the provider is down",
        chain: { _tag: "ChainSummary", messages: 3, runCount: 1 }
      })
      expect(leaks(events)).toEqual([])
    }))

  it.effect("Privacy.omitContent does the same for a run with an observer of one's own", () =>
    Effect.gen(function*() {
      const seen: Array<RunEvent.RunEvent> = []
      const observer: RunEvent.Observer = { emit: (event) => Effect.sync(() => seen.push(event)), streaming: true }
      yield* Chain.run(question(), whileNeeds).pipe(
        Effect.provideService(RunEvent.Observer, observer),
        Privacy.omitContent,
        Effect.provide([finished().layer, handlers])
      )
      expect(seen.map((event) => event._tag)).toEqual([
        "RunStarted",
        "ModelCallStarted",
        "ModelCallFinished",
        "ToolCallStarted",
        "ToolCallFinished",
        "ModelCallStarted",
        "ModelCallFinished",
        "RunFinished"
      ])
      expect(leaks(seen)).toEqual([])
    }))

  it.effect("spans carry names, ids, statuses and token counts, no content", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      yield* Chain.run(question(), whileNeeds).pipe(
        Effect.provide(Layer.mergeAll(finished().layer, handlers, Privacy.layerOmitContent)),
        Effect.withTracer(tracer)
      )
      expect(spans.map((span) => span.name)).toEqual(["invoke_agent", "chat scripted", "execute_tool account", "chat scripted"])
      const written = JSON.stringify(spans.map((span) => [span.name, Object.fromEntries(span.attributes), span.events]))
      expect(personal.filter((value) => written.includes(value))).toEqual([])
    }))
})

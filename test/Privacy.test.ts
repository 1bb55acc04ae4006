/**
 * `Privacy.OmitContent`: with it on, a run's events carry no tool arguments,
 * tool results, model text or text deltas and no chain documents (a
 * `ChainSummary` instead), for finished, paused and failed runs, under
 * `Chain.stream` and with an observer of one's own; the events are still
 * valid Schema data. Failure messages of events and spans say what failed
 * (tag, tool and kind, HTTP status), not what the failure quoted, while the
 * caller still gets the real `RunError`. The run itself is unchanged. With
 * it off (the default), the same run reports its content, so each check can
 * fail. A `chat` span never records a `ModelCallFailed`'s `cause`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema, Stream, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, LoopError, Mode, RunEvent } from "../src/index.ts"
import * as Privacy from "../src/Privacy.ts"
import { recording } from "./support/recordingTracer.ts"

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

/** A tool whose failure quotes what it was asked, and a run whose policy fails on it. */
const LookupCustomer = Tool.make("lookup_customer", {
  parameters: Schema.Struct({ iban: Schema.String }),
  success: Schema.String,
  failure: Schema.String
})
const lookupToolkit = Toolkit.make(LookupCustomer)
const lookupHandlers = lookupToolkit.toLayer({
  lookup_customer: ({ iban }) => Effect.fail(`no customer Jane Roe with IBAN ${iban}`)
})
const lookupModel = () => ChatModel.scripted([{ toolCalls: [{ name: "lookup_customer", params: { iban: "DE89370400440532013000" } }] }])
const lookupQuestion = () => Chain.make({ user: "Look up my account", toolkit: lookupToolkit })
const failFast = { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" as const } }

/** A provider that refuses the request with a 400 quoting the prompt. */
const refusingModel = Layer.succeed(
  ChatModel.ChatModel,
  ChatModel.ChatModel.of({
    info: { provider: "test", model: "refusing" },
    generate: () =>
      Effect.fail(
        new LoopError.ModelCallFailed({
          description: "Invalid prompt: 'the balance of Jane Roe (DE89370400440532013000)'",
          status: 400,
          retryable: false,
          cause: undefined
        })
      ),
    stream: () =>
      Stream.fail(
        new LoopError.ModelCallFailed({
          description: "Invalid prompt: 'the balance of Jane Roe (DE89370400440532013000)'",
          status: 400,
          retryable: false,
          cause: undefined
        })
      )
  })
)

const omitted = (omit: boolean) => <A, E, R>(effect: Effect.Effect<A, E, R>) => omit ? Privacy.omitContent(effect) : effect


const ended = (span: Tracer.NativeSpan): "success" | "failure" | "open" =>
  span.status._tag === "Started" ? "open" : Exit.isSuccess(span.status.exit) ? "success" : "failure"

/**
 * What effect/observability's OTLP exporter writes of `spans`: name,
 * attributes and events, and for a failed span its status message and each
 * exception's type, message and stack (with the cause chain).
 */
const exported = (spans: ReadonlyArray<Tracer.NativeSpan>): string =>
  JSON.stringify(spans.map((span) => ({
    name: span.name,
    attributes: Object.fromEntries(span.attributes),
    events: span.events,
    exceptions: span.status._tag === "Ended" && Exit.isFailure(span.status.exit)
      ? Cause.prettyErrors(span.status.exit.cause, { includeCauseInStack: true }).map((error) => [error.name, error.message, error.stack])
      : []
  })))

/** A run failing on its tool, then one failing on its model, traced; with or without the setting. */
const failedRuns = (omit: boolean) =>
  Effect.gen(function*() {
    const traced = recording()
    const toolFailure = yield* Effect.flip(Chain.run(lookupQuestion(), failFast)).pipe(
      Effect.provide([lookupModel().layer, lookupHandlers]),
      omitted(omit),
      Effect.withTracer(traced.tracer)
    )
    const modelFailure = yield* Effect.flip(Chain.run(Chain.make({ user: "Hi" }), whileNeeds)).pipe(
      Effect.provide(refusingModel),
      omitted(omit),
      Effect.withTracer(traced.tracer)
    )
    return { spans: traced.spans, written: exported(traced.spans), errors: [toolFailure, modelFailure] }
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

  it.effect("a failed run: the error's tag stays, its message is content-free, the chain is a summary", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [accountCall] }, { fail: "the provider refused 'balance of Jane Roe'" }])
      const events = yield* collect(Chain.stream(question(), whileNeeds)).pipe(
        Effect.provide(Layer.mergeAll(model.layer, handlers, Privacy.layerOmitContent))
      )
      expect(events.find((event) => event._tag === "ModelCallFailed")).toMatchObject({
        error: "ModelCallFailed",
        message: "The model call failed: details omitted (Privacy.OmitContent)"
      })
      expect(events.at(-1)).toEqual({
        _tag: "RunFailed",
        error: "ModelCallFailed",
        message: "The model call failed: details omitted (Privacy.OmitContent)",
        chain: { _tag: "ChainSummary", messages: 3, runCount: 1 }
      })
      expect(leaks(events)).toEqual([])
    }))

  it.effect("a failed tool call: RunFailed names the tool and the failure's kind, not the failure's text; the caller gets the real RunError", () =>
    Effect.gen(function*() {
      const run = (omit: boolean) =>
        Effect.gen(function*() {
          const events: Array<RunEvent.RunEvent> = []
          const error = yield* Stream.runForEach(Chain.stream(lookupQuestion(), failFast), (event) => Effect.sync(() => events.push(event))).pipe(
            Effect.flip,
            Effect.provide([lookupModel().layer, lookupHandlers]),
            omitted(omit)
          )
          return { events, error }
        })
      const { error, events } = yield* run(true)
      expect(events.at(-1)).toEqual({
        _tag: "RunFailed",
        error: "ToolCallFailed",
        message: "Tool 'lookup_customer' failed (handler): details omitted (Privacy.OmitContent)",
        chain: { _tag: "ChainSummary", messages: 3, runCount: 1 }
      })
      expect(leaks(events)).toEqual([])
      // the RunError is the run's own: its message and chain are unchanged
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("ToolCallFailed")
      expect(error.message).toContain("no customer Jane Roe with IBAN DE89370400440532013000")
      // with the setting off, the same event carries the failure's text
      const plain = yield* run(false)
      const last = plain.events.at(-1)
      expect(last?._tag === "RunFailed" && last.message).toContain("no customer Jane Roe")
    }))

  it.effect("a failed model call: the ModelCallFailed event keeps the HTTP status, not the provider's text", () =>
    Effect.gen(function*() {
      const events = yield* collect(Chain.stream(Chain.make({ user: "Hi" }), whileNeeds)).pipe(
        Effect.provide(Layer.merge(refusingModel, Privacy.layerOmitContent))
      )
      expect(events.filter((event) => event._tag === "ModelCallFailed" || event._tag === "RunFailed").map((event) =>
        [event._tag, event.message]
      )).toEqual([
        ["ModelCallFailed", "The model call failed (HTTP 400): details omitted (Privacy.OmitContent)"],
        ["RunFailed", "The model call failed (HTTP 400): details omitted (Privacy.OmitContent)"]
      ])
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

  it.effect("spans carry names, ids, statuses and token counts, no content: a finished run, a failed tool call, a failed model call", () =>
    Effect.gen(function*() {
      const traced = recording()
      yield* Chain.run(question(), whileNeeds).pipe(
        Effect.provide(Layer.mergeAll(finished().layer, handlers, Privacy.layerOmitContent)),
        Effect.withTracer(traced.tracer)
      )
      expect(traced.spans.map((span) => span.name)).toEqual(["invoke_agent", "chat scripted", "execute_tool account", "chat scripted"])
      expect(personal.filter((value) => exported(traced.spans).includes(value))).toEqual([])

      const failed = yield* failedRuns(true)
      expect(personal.filter((value) => failed.written.includes(value))).toEqual([])
      // the failure still shows: status error, its type, a content-free message
      expect(failed.spans.map((span) => [span.name, ended(span), span.attributes.get("error.type")])).toEqual([
        ["invoke_agent", "failure", "ToolCallFailed"],
        ["chat scripted", "success", undefined],
        ["execute_tool lookup_customer", "failure", "handler"],
        ["invoke_agent", "failure", "ModelCallFailed"],
        ["chat refusing", "failure", "ModelCallFailed"]
      ])
      expect(failed.written).toContain("Tool 'lookup_customer' failed (handler): details omitted (Privacy.OmitContent)")
      expect(failed.written).toContain("The model call failed (HTTP 400): details omitted (Privacy.OmitContent)")
      // the callers got the real errors
      expect(failed.errors.map((error) => error.message.includes("Jane Roe"))).toEqual([true, true])
    }))

  it.effect("the same failed runs with the setting off: their spans carry the failures' text (the check above can fail)", () =>
    Effect.gen(function*() {
      const failed = yield* failedRuns(false)
      expect(personal.filter((value) => failed.written.includes(value))).toEqual(["Jane Roe", "DE89370400440532013000", "balance of Jane"])
    }))
})

describe("Privacy.OmitContent: a run that dies", () => {
  it.effect("its span records a content-free defect with error.type; the caller gets the defect itself", () =>
    Effect.gen(function*() {
      const dying: Mode.Mode = () => Effect.die(new Error("lost the record of Jane Roe"))
      const run = (omit: boolean) =>
        Effect.gen(function*() {
          const traced = recording()
          const exit = yield* Effect.exit(Chain.run(Chain.make({ user: "Hi" }), { mode: dying }).pipe(omitted(omit), Effect.withTracer(traced.tracer)))
          return { exit, spans: traced.spans }
        })
      const { exit, spans } = yield* run(true)
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toEqual(new Error("lost the record of Jane Roe"))
      expect(spans.map((span) => [span.name, ended(span), span.attributes.get("error.type")])).toEqual([
        ["invoke_agent", "failure", "Defect"]
      ])
      expect(exported(spans)).not.toContain("Jane Roe")
      expect(exported(spans)).toContain("An unexpected error: details omitted (Privacy.OmitContent)")
      // with the setting off, the span records the defect's text
      expect(exported((yield* run(false)).spans)).toContain("lost the record of Jane Roe")
    }))
})

describe("spans and secrets", () => {
  it.effect("a chat span never records a ModelCallFailed's cause (the provider's error, which may hold the request)", () =>
    Effect.gen(function*() {
      const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const model = Layer.succeed(
        ChatModel.ChatModel,
        ChatModel.ChatModel.of({
          generate: () =>
            Effect.fail(
              new LoopError.ModelCallFailed({
                description: "unauthorized",
                status: 401,
                cause: new Error(`401 for request {"headers": {"Authorization": "Bearer ${key}"}, "messages": ["Jane Roe"]}`)
              })
            ),
          stream: () => Stream.die("not used")
        })
      )
      const traced = recording()
      const error = yield* Effect.flip(Chain.run(Chain.make({ user: "Hi" }), whileNeeds).pipe(
        Effect.provide(model),
        Effect.withTracer(traced.tracer)
      ))
      const written = exported(traced.spans)
      expect(written).toContain("The model call failed (HTTP 401): unauthorized")
      expect(written).not.toContain(key)
      expect(written).not.toContain("Jane Roe")
      // the run still fails with the provider's error as the cause
      expect(error.reason._tag === "ModelCallFailed" && String((error.reason as LoopError.ModelCallFailed).cause)).toContain(key)
    }))
})

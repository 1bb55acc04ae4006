/**
 * A tool name the model invents is the model's text (helper-33's probe):
 * with `Privacy.omitContent`, no event, span or failure message shows it —
 * they show that a call was made to a tool the toolkit does not have — while
 * the names of the toolkit's own tools are shown as before. Without
 * `omitContent`, the name is shown as the model wrote it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema, Stream, type Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, RunEvent } from "../src/index.ts"
import { recording } from "./support/recordingTracer.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)
const invented = "Jane_Doe_1961-07-14"
const encode = Schema.encodeSync(RunEvent.RunEvent)

/** A span as an exporter would send it: name, attributes, events and the failure's messages. */
const exported = (span: Tracer.NativeSpan) => ({
  name: span.name,
  attributes: Object.fromEntries(span.attributes),
  events: span.events,
  failures: span.status._tag === "Ended" && Exit.isFailure(span.status.exit) ? Cause.prettyErrors(span.status.exit.cause).map((e) => e.message) : []
})

/** The events (JSON) and spans of a run whose model calls the invented tool and `lookup` in one answer. */
const run = (omit: boolean, onToolFailure?: { readonly "unknown-tool": "fail" }) =>
  Effect.gen(function*() {
    const traced = recording()
    const model = ChatModel.scripted([
      { toolCalls: [{ name: invented, params: { q: "x" } }, { name: "lookup", params: { q: "y" } }] },
      { text: "ok" }
    ])
    const events: Array<RunEvent.RunEvent> = []
    const stream = Chain.stream(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse, ...(onToolFailure ? { onToolFailure } : {}) })
    const watched = Stream.runForEach(stream, (event) => Effect.sync(() => void events.push(event))).pipe(
      Effect.ignore,
      Effect.provide([model.layer, toolkit.toLayer({ lookup: () => Effect.succeed("ok") })]),
      Effect.withTracer(traced.tracer)
    )
    yield* omit ? Privacy.omitContent(watched) : watched
    return { events, json: JSON.stringify(events.map((event) => encode(event))), spans: JSON.stringify(traced.spans.map(exported)) }
  })

describe("an unknown tool's name under Privacy.omitContent", () => {
  it.effect("no event or span shows it; the toolkit's own tool keeps its name", () =>
    Effect.gen(function*() {
      const { events, json, spans } = yield* run(true)
      expect(json).not.toContain("Jane_Doe")
      expect(spans).not.toContain("Jane_Doe")
      const names = events.flatMap((event) => event._tag === "ToolCallStarted" ? [event.name] : [])
      expect(names).toEqual(["(a tool the toolkit does not have)", "lookup"])
      const answered = events.flatMap((event) => event._tag === "ModelCallFinished" ? event.toolCalls.map((call) => call.name) : [])
      expect(answered).toEqual(["(a tool the toolkit does not have)", "lookup"])
      expect(spans).toContain("execute_tool lookup")
    }))

  it.effect("without omitContent, the events show the name the model wrote", () =>
    Effect.gen(function*() {
      const { json } = yield* run(false)
      expect(json).toContain(invented)
    }))

  it.effect("a failed run's message does not quote it", () =>
    Effect.gen(function*() {
      const { events } = yield* run(true, { "unknown-tool": "fail" })
      const failed = events.flatMap((event) => event._tag === "RunFailed" ? [event.message] : [])
      expect(failed).toEqual(["A tool call failed (unknown-tool): details omitted (Privacy.OmitContent)"])
    }))
})

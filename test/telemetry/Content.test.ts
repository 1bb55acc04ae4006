/**
 * Opt-in capture of a model call's messages on its `chat` span
 * (`Telemetry.CaptureContent`), as an OTLP backend receives it:
 * `gen_ai.system_instructions`, `gen_ai.input.messages` and
 * `gen_ai.output.messages` in the conventions' JSON shape (and a tool call's
 * `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`), credentials
 * redacted, sizes bounded; off by default, and never with
 * `Privacy.OmitContent`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, Telemetry } from "../../src/index.ts"
import { Lookup } from "../support/tools.ts"
import * as Collector from "./collector.ts"

const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
const toolkit = Toolkit.make(Lookup)
const handlers = toolkit.toLayer({ lookup: ({ q }) => Effect.succeed(`found ${q} for Jane Roe`) })

/** A run with a system prompt, a user message holding a key, one tool round and an answer; traced, exported. */
const capturedRun = (settings: { readonly capture: boolean; readonly omit: boolean }) =>
  Effect.gen(function*() {
    const collector = yield* Collector.make
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "lookup", params: { q: "a", api_key: "abc123" } }] },
      { text: "Jane Roe has a." }
    ])
    yield* Effect.gen(function*() {
      yield* Chain.run(
        Chain.make({ system: "You are terse.", user: `Find a. My key is ${key}`, toolkit }),
        { mode: Mode.whileNeedsResponse }
      ).pipe(
        Effect.provide([model.layer, handlers]),
        // off: not provided at all, so the default is what is checked
        (run) => settings.capture ? Effect.provideService(run, Telemetry.CaptureContent, true) : run,
        (run) => settings.omit ? Privacy.omitContent(run) : run
      )
      yield* Collector.exported
    }).pipe(Effect.provide(Collector.layer(collector)))
    return collector
  }).pipe(Effect.scoped)

const chats = (collector: Collector.Collector) => collector.spans.filter((span) => span.name === "chat scripted")
const parsed = (value: unknown): unknown => typeof value === "string" ? JSON.parse(value) : value

const contentKeys = [
  "gen_ai.system_instructions",
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result"
]

describe("Telemetry.CaptureContent on", () => {
  it.live("each chat span carries its system instructions, input and output messages in the conventions' shape, the key redacted", () =>
    Effect.gen(function*() {
      const collector = yield* capturedRun({ capture: true, omit: false })
      const [first, second] = chats(collector)
      const user = { role: "user", parts: [{ type: "text", content: "Find a. My key is sk-[REDACTED]" }] }
      const call = { type: "tool_call", id: "call_1_1", name: "lookup", arguments: { q: "a", api_key: "[REDACTED]" } }
      expect(parsed(first.attributes["gen_ai.system_instructions"])).toEqual([{ type: "text", content: "You are terse." }])
      expect(parsed(first.attributes["gen_ai.input.messages"])).toEqual([user])
      expect(parsed(first.attributes["gen_ai.output.messages"])).toEqual([
        { role: "assistant", parts: [call], finish_reason: "tool_call" }
      ])
      expect(parsed(second.attributes["gen_ai.input.messages"])).toEqual([
        user,
        { role: "assistant", parts: [call] },
        { role: "tool", parts: [{ type: "tool_call_response", id: "call_1_1", response: "found a for Jane Roe" }] }
      ])
      expect(parsed(second.attributes["gen_ai.output.messages"])).toEqual([
        { role: "assistant", parts: [{ type: "text", content: "Jane Roe has a." }], finish_reason: "stop" }
      ])
      expect(collector.bodies.filter((body) => body.includes(key) || body.includes("abc123"))).toEqual([])
    }))

  it.live("each execute_tool span carries the call's arguments and its result as JSON text, the key redacted", () =>
    Effect.gen(function*() {
      const collector = yield* capturedRun({ capture: true, omit: false })
      const tools = collector.spans.filter((span) => span.name === "execute_tool lookup")
      expect(tools).toHaveLength(1)
      expect(parsed(tools[0].attributes["gen_ai.tool.call.arguments"])).toEqual({ q: "a", api_key: "[REDACTED]" })
      expect(parsed(tools[0].attributes["gen_ai.tool.call.result"])).toBe("found a for Jane Roe")
    }))

  it.live("a tool's long result is cut to 4,096 characters on its span", () =>
    Effect.gen(function*() {
      const collector = yield* Collector.make
      const long = "z".repeat(10_000)
      const longHandlers = toolkit.toLayer({ lookup: () => Effect.succeed(long) })
      yield* Chain.run(Chain.make({ user: "Find a", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([
          ChatModel.scripted([{ toolCalls: [{ name: "lookup", params: { q: "a" } }] }, { text: "ok" }]).layer,
          longHandlers
        ]),
        Effect.provideService(Telemetry.CaptureContent, true),
        Effect.andThen(Collector.exported),
        Effect.provide(Collector.layer(collector))
      )
      const [tool] = collector.spans.filter((span) => span.name === "execute_tool lookup")
      expect(tool.attributes["gen_ai.tool.call.result"]).toBe(`${JSON.stringify(long).slice(0, 4_096)}…`)
    }).pipe(Effect.scoped))

  it.live("bounded: a long text is cut to 4,096 characters, and the input keeps the newest messages within 65,536", () =>
    Effect.gen(function*() {
      const collector = yield* Collector.make
      const long = "x".repeat(10_000)
      const many = Array.from({ length: 30 }, (_, index) => `${index}:${"y".repeat(3_000)}`)
      yield* Chain.run(Chain.make({ user: [long, ...many] }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer),
        Effect.provideService(Telemetry.CaptureContent, true),
        Effect.andThen(Collector.exported),
        Effect.provide(Collector.layer(collector))
      )
      const input = String(chats(collector)[0].attributes["gen_ai.input.messages"])
      expect(input.length).toBeLessThanOrEqual(65_536)
      const messages = JSON.parse(input) as ReadonlyArray<{ readonly parts: ReadonlyArray<{ readonly content: string }> }>
      const texts = messages.map((message) => message.parts[0].content)
      // the oldest go first: the long one and the earliest of the many are left out, the last is kept
      expect(texts.at(-1)?.startsWith("29:")).toBe(true)
      expect(texts.some((text) => text.startsWith("x"))).toBe(false)
      expect(texts.length).toBeGreaterThan(10)

      const cut = yield* Collector.make
      yield* Chain.run(Chain.make({ user: long }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer),
        Effect.provideService(Telemetry.CaptureContent, true),
        Effect.andThen(Collector.exported),
        Effect.provide(Collector.layer(cut))
      )
      const [only] = JSON.parse(String(chats(cut)[0].attributes["gen_ai.input.messages"])) as ReadonlyArray<
        { readonly parts: ReadonlyArray<{ readonly content: string }> }
      >
      expect(only.parts[0].content).toBe(`${"x".repeat(4_096)}…`)
    }).pipe(Effect.scoped))
})

describe("Telemetry.CaptureContent off, or Privacy.OmitContent on", () => {
  it.live("off (the default): no messages on any span, and the conversation's text reaches no export", () =>
    Effect.gen(function*() {
      const collector = yield* capturedRun({ capture: false, omit: false })
      expect(collector.spans.flatMap((span) => Object.keys(span.attributes)).filter((name) => contentKeys.includes(name))).toEqual([])
      expect(collector.bodies.filter((body) => body.includes("terse") || body.includes("Jane Roe"))).toEqual([])
    }))

  it.live("on, with Privacy.OmitContent: no messages either", () =>
    Effect.gen(function*() {
      const collector = yield* capturedRun({ capture: true, omit: true })
      expect(chats(collector)).toHaveLength(2)
      expect(collector.spans.flatMap((span) => Object.keys(span.attributes)).filter((name) => contentKeys.includes(name))).toEqual([])
      expect(collector.bodies.filter((body) => body.includes("terse") || body.includes("Jane Roe"))).toEqual([])
    }))
})

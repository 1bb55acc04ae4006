/**
 * What arrives from the model is bounded before the chain keeps it:
 *
 * - tool-call arguments deeper than `maxArgumentDepth` (default 64) or larger
 *   than `maxArgumentSize` (default 1,000,000 characters of JSON) become a
 *   failed result saying what was too big; the handler never runs and the
 *   transcript keeps a small stand-in, so the chain's document and every
 *   event serialise (over the AI SDK bridge, the next model call succeeds);
 * - results, edits and supplied results that could not be stored are refused
 *   with a typed error or a failed result;
 * - `Chain.encode` never returns a document `JSON.stringify` throws on, and
 *   `Chain.decode` refuses one nested too deep;
 * - a large tool result is stored once in the document.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel as AiSdkChatModel } from "../../src/ai-sdk/index.ts"
import { Approval, Chain, ChatModel, ExternalTool, LoopError, Mode, type RunEvent } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** `{ a: { a: … 1 } }`, `depth` levels of objects. */
const nested = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

/** Ten keys, each holding `char` 60 times. */
const strings = (char: string): Record<string, string> =>
  Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, char.repeat(60)]))

const makeKit = () => {
  const ran: Array<unknown> = []
  const Store = Tool.make("store", { parameters: Schema.Struct({ a: Schema.Unknown }), success: Schema.String })
  const Deep = Tool.make("deep", { parameters: Schema.Struct({}), success: Schema.Unknown })
  const Big = Tool.make("big", { parameters: Schema.Struct({}), success: Schema.String })
  const Guarded = Tool.make("guarded", { parameters: Schema.Struct({ a: Schema.Unknown }), success: Schema.String, needsApproval: true })
  const Measure = ExternalTool.mark(Tool.make("measure", { parameters: Schema.Struct({}), success: Schema.Unknown }))
  const local = Toolkit.make(Store, Deep, Big, Guarded)
  const toolkit = Toolkit.merge(local, Toolkit.make(Measure))
  const layer = local.toLayer({
    store: (params) => Effect.sync(() => (ran.push(params), "stored")),
    deep: () => Effect.succeed(nested(5_000)),
    big: () => Effect.succeed("x".repeat(20_000_000)),
    guarded: (params) => Effect.sync(() => (ran.push(params), "ok"))
  })
  return { ran, toolkit, layer, chain: Chain.make({ user: "go", toolkit }) }
}

/** The model: `reply` first, then "done" once the conversation has a tool message. */
const replyThenDone = (reply: ChatModel.ScriptedReply) =>
  ChatModel.scripted([(request) =>
    request.prompt.content.some((message) => message.role === "tool") ? { text: "done" } : reply
  ], { repeat: true })

const toolResultText = (chain: Chain.Chain): ReadonlyArray<unknown> =>
  chain.messages.flatMap((message) =>
    message.role === "tool" ? message.content.flatMap((part) => part.type === "tool-result" ? [part.result] : []) : []
  )

// -----------------------------------------------------------------------------
// Arguments from the model
// -----------------------------------------------------------------------------

describe("tool-call arguments are checked when the response arrives", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly params: unknown
    readonly options: { readonly maxArgumentDepth?: number; readonly maxArgumentSize?: number }
    readonly refused: RegExp | undefined
  }> = [
    { name: "5,000 levels deep (10 KB of text), default limits", params: { a: nested(5_000) }, options: {}, refused: /nested more than 64 levels deep/ },
    { name: "65 levels deep, default limits", params: { a: nested(64) }, options: {}, refused: /nested more than 64 levels deep/ },
    { name: "64 levels deep, default limits", params: { a: nested(63) }, options: {}, refused: undefined },
    { name: "2 MB of text, default limits", params: { a: "x".repeat(2_000_000) }, options: {}, refused: /larger than 1,000,000 characters of JSON/ },
    { name: "900 KB of text, default limits", params: { a: "x".repeat(900_000) }, options: {}, refused: undefined },
    { name: "4 levels, maxArgumentDepth 3", params: { a: nested(3) }, options: { maxArgumentDepth: 3 }, refused: /more than 3 levels/ },
    { name: "3 levels, maxArgumentDepth 3", params: { a: nested(2) }, options: { maxArgumentDepth: 3 }, refused: undefined },
    { name: "200 characters, maxArgumentSize 100", params: { a: "x".repeat(200) }, options: { maxArgumentSize: 100 }, refused: /larger than 100 characters/ },
    { name: "600 levels, maxArgumentDepth 512", params: { a: nested(600) }, options: { maxArgumentDepth: 512 }, refused: /more than 512 levels/ },
    // Each string is short next to the limit, but escaped six times over: 3,700 characters of JSON in all.
    { name: "10 strings of 60 control characters, maxArgumentSize 1000", params: { a: strings("\u0001") }, options: { maxArgumentSize: 1_000 }, refused: /larger than 1,000 characters/ },
    { name: "10 strings of 60 letters, maxArgumentSize 1000", params: { a: strings("x") }, options: { maxArgumentSize: 1_000 }, refused: undefined }
  ]
  for (const row of rows) {
    it.effect(`${row.name}: ${row.refused === undefined ? "the handler runs" : "a failed result, the handler never runs"}`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = replyThenDone({ toolCalls: [{ id: "c1", name: "store", params: row.params }] })
        const events: Array<RunEvent.RunEvent> = []
        const outcome = yield* Chain.stream(kit.chain, { mode: Mode.whileNeedsResponse, ...row.options }).pipe(
          Stream.runForEach((event) => Effect.sync(() => events.push(event))),
          Effect.andThen(Chain.run(kit.chain, { mode: Mode.whileNeedsResponse, ...row.options })),
          Effect.provide([model.layer, kit.layer])
        )
        expect(outcome._tag).toBe("Ok")
        const [result] = outcome.chain.lastToolResults
        if (row.refused === undefined) {
          expect(result.isFailure).toBe(false)
          expect(kit.ran.length).toBe(2) // once under stream, once under run
          return
        }
        expect(kit.ran).toEqual([])
        expect(result).toMatchObject({ isFailure: true, failureOrigin: "parameters" })
        expect(String(result.encoded)).toMatch(row.refused)
        expect(String(result.encoded)).toMatch(/^Invalid arguments for tool 'store': the arguments were .*; the tool did not run$/)
        // The model saw the same message; the transcript holds a stand-in, not the arguments.
        expect(toolResultText(outcome.chain)).toEqual([result.encoded])
        const stored = JSON.stringify(yield* Chain.encode(outcome.chain))
        expect(stored.length).toBeLessThan(5_000)
        // Every event serialises.
        for (const event of events) expect(() => JSON.stringify(event)).not.toThrow()
        expect(events.some((event) => event._tag === "RunFinished")).toBe(true)
      }))
  }

  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ["maxArgumentDepth", 0],
    ["maxArgumentDepth", 513],
    ["maxArgumentDepth", 1.5],
    ["maxArgumentDepth", "5"],
    ["maxArgumentSize", 0],
    ["maxArgumentSize", -1],
    ["maxArgumentSize", 2 ** 40],
    ["maxArgumentSize", null]
  ]
  for (const [field, value] of invalid) {
    it.effect(`${field}: ${JSON.stringify(value)} → InvalidInput naming ${field}, no model call`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = replyThenDone({ text: "hi" })
        const error = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse, [field]: value as number }).pipe(
          Effect.provide([model.layer, kit.layer]),
          Effect.flip
        )
        expect(error.reason).toBeInstanceOf(LoopError.InvalidInput)
        expect(error.message).toContain(field)
        expect(model.calls).toBe(0)
      }))
  }
})

describe("over the AI SDK bridge", () => {
  it.effect("arguments 5,000 levels deep from the provider: refused, and the next model call goes out (no stack overflow, no retry)", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const deep = `{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}`
      const server = yield* OpenAiServer.make([
        { toolCalls: [{ id: "call_1", name: "store", arguments: deep }] },
        { text: "done" }
      ])
      const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
      const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([AiSdkChatModel.fromAiSdk(provider.chat("gpt-test")), kit.layer])
      )
      expect(outcome._tag).toBe("Ok")
      expect(server.calls).toBe(2)
      expect(kit.ran).toEqual([])
      expect(String(outcome.chain.lastToolResults[0].encoded)).toMatch(/nested more than 64 levels deep/)
      const second = server.requests[1].body as { messages: ReadonlyArray<{ role: string; tool_calls?: ReadonlyArray<{ function: { arguments: string } }> }> }
      const sent = second.messages.find((message) => message.role === "assistant")?.tool_calls?.[0].function.arguments
      expect(JSON.parse(sent ?? "null")).toEqual({ "~loopwork/refused": expect.stringMatching(/nested more than 64/) })
    }).pipe(Effect.scoped))
})

// -----------------------------------------------------------------------------
// What else the chain keeps
// -----------------------------------------------------------------------------

describe("results, edits and supplied results must be storable", () => {
  it.effect("a handler result nested 5,000 deep: a failed result (origin result); the chain encodes", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = replyThenDone({ toolCalls: [{ id: "c1", name: "deep", params: {} }] })
      const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      expect(outcome.chain.lastToolResults[0]).toMatchObject({ isFailure: true, failureOrigin: "result" })
      expect(String(outcome.chain.lastToolResults[0].encoded)).toBe(
        "Tool 'deep' returned a result that cannot be stored: it is nested more than 512 levels deep (or cyclic)"
      )
      expect(() => JSON.stringify(Effect.runSync(Chain.encode(outcome.chain)))).not.toThrow()
    }))

  it.effect("an edit nested 5,000 deep: InvalidResumeValue, nothing changes", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = replyThenDone({ toolCalls: [{ id: "c1", name: "guarded", params: { a: 1 } }] })
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const error = yield* Approval.decide(paused.chain, { c1: Approval.edit({ a: nested(5_000) }) }).pipe(Effect.flip)
      expect(error).toBeInstanceOf(LoopError.InvalidResumeValue)
      expect(error.message).toMatch(/the arguments cannot be stored: it is nested more than 512 levels deep/)
    }))

  it.effect("a supplied result nested 5,000 deep: InvalidResumeValue", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = replyThenDone({ toolCalls: [{ id: "c1", name: "measure", params: {} }] })
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const error = yield* ExternalTool.supply(paused.chain, { c1: { result: nested(5_000) } }).pipe(Effect.flip)
      expect(error).toBeInstanceOf(LoopError.InvalidResumeValue)
      expect(error.message).toMatch(/the result cannot be stored: it is nested more than 512 levels deep/)
    }))

  it.effect("a context nested 5,000 deep: Chain.encode fails with a typed ChainCodecError, not a RangeError", () =>
    Effect.gen(function*() {
      const chain = Chain.make({ user: "hi", context: { deep: nested(5_000) as Chain.Json } })
      const error = yield* Chain.encode(chain).pipe(Effect.flip)
      expect(error).toBeInstanceOf(Chain.ChainCodecError)
      expect(error.message).toMatch(/cannot be stored as JSON: the document is nested more than 520 levels deep/)
    }))

  it.effect("a document nested 100,000 deep: Chain.decode fails with a typed ChainCodecError", () =>
    Effect.gen(function*() {
      const document = JSON.stringify(yield* Chain.encode(Chain.make({ user: "hi" })))
      const text = document.replace(`"context":{}`, `"context":{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)
      const error = yield* Chain.decode(text).pipe(Effect.flip)
      expect(error).toBeInstanceOf(Chain.ChainCodecError)
      expect(error.message).toMatch(/the document is nested more than 520 levels deep/)
    }))
})

describe("a large result is stored once", () => {
  it.effect("a 20 MB result: the document's JSON is about 20 MB, not 40; decoding restores the result", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = replyThenDone({ toolCalls: [{ id: "c1", name: "big", params: {} }] })
      const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const text = JSON.stringify(yield* Chain.encode(outcome.chain))
      expect(text.length).toBeGreaterThan(20_000_000)
      expect(text.length).toBeLessThan(20_100_000)
      const decoded = yield* Chain.decode(text, { toolkit: kit.toolkit })
      expect(decoded.lastToolResults[0].encoded).toBe("x".repeat(20_000_000))
      expect(decoded.lastToolResults[0].result).toBe("x".repeat(20_000_000))
      expect(JSON.stringify(yield* Chain.encode(decoded))).toBe(text)
    }))
})

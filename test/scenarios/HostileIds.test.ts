/**
 * Tool-call ids are data from the model (or a proxy in front of it), never
 * object keys, and one decision never acts on two calls:
 *
 * - every name of `Object.prototype` (and `__proto__`) as the id of a call to
 *   a tool that needs approval pauses the run, the handler does not run, and
 *   approving it runs it exactly once — directly, after a JSON round trip,
 *   and over the AI SDK bridge with the id in the provider's response;
 * - an external call keeps its waiting state through encode / decode for any
 *   such id;
 * - duplicate, empty and over-long ids in one response, and ids with other
 *   characters than printable ASCII, are renamed (`loopwork_<turn>_<n>`),
 *   consistently in the transcript, so an approval or an edit acts on one
 *   call only, in memory and in any store;
 * - tool results in a model response that the provider did not execute are
 *   dropped.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Response, Tool, Toolkit } from "effect/ai"
import { ChatModel as AiSdkChatModel } from "../../src/ai-sdk/index.ts"
import { Approval, Chain, ChatModel, ExternalTool, Mode, type Outcome } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { rawModel } from "../support/rawModel.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The strings that are dangerous as plain-object keys. */
const prototypeNames: ReadonlyArray<string> = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"]

const makeKit = () => {
  const ran: Array<{ readonly id: string; readonly path: string }> = []
  const Delete = Tool.make("delete_file", {
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    needsApproval: true
  })
  const Measure = ExternalTool.mark(Tool.make("measure", {
    parameters: Schema.Struct({ what: Schema.String }),
    success: Schema.Number
  }))
  const local = Toolkit.make(Delete)
  const toolkit = Toolkit.merge(local, Toolkit.make(Measure))
  const layer = local.toLayer({
    delete_file: ({ path }, { toolCallId }) =>
      Effect.sync(() => {
        ran.push({ id: toolCallId ?? "(none)", path })
        return `deleted ${path}`
      })
  })
  return { ran, toolkit, layer, chain: Chain.make({ user: "clean up", toolkit }) }
}

const pausedCalls = (outcome: Outcome.Final) => {
  if (outcome._tag !== "Pause") throw new Error(`expected a pause, got ${outcome._tag}`)
  return outcome.reason._tag === "ApprovalPending" || outcome.reason._tag === "ExternalPending" ? outcome.reason.calls : []
}

/**
 * A scripted model that makes `calls` until the conversation holds a tool
 * message, then answers "done" (its layer restarts the script on every run,
 * so the turn is read from the conversation).
 */
const callsThenDone = (calls: ChatModel.ScriptedReply["toolCalls"]) =>
  ChatModel.scripted([(request) =>
    request.prompt.content.some((message) => message.role === "tool") ? { text: "done" } : { toolCalls: calls }
  ], { repeat: true })

const roundTrip = <Tools extends Record<string, Tool.Any>>(chain: Chain.Chain, toolkit: Toolkit.Toolkit<Tools>) =>
  Effect.flatMap(Effect.map(Chain.encode(chain), JSON.stringify), (text) => Chain.decode(text, { toolkit, trustUnsignedApprovals: true }))

const toolCall = (id: string, path: string) =>
  Response.makePart("tool-call", { id, name: "delete_file", params: { path }, providerExecuted: false })

// -----------------------------------------------------------------------------
// 1. Prototype names as ids
// -----------------------------------------------------------------------------

describe("a call id that names a property of Object.prototype", () => {
  for (const id of prototypeNames) {
    it.effect(`${JSON.stringify(id)}: a needsApproval tool pauses, runs only once approved, also after a JSON round trip`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = callsThenDone([{ id, name: "delete_file", params: { path: "/etc" } }])
        const run = (chain: Chain.Chain) =>
          Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
        const paused = yield* run(kit.chain)
        expect(pausedCalls(paused).map((call) => call.id)).toEqual([id])
        expect(kit.ran).toEqual([])
        expect(Approval.pending(paused.chain).map((call) => call.id)).toEqual([id])

        // Running again without a decision pauses again: nothing was approved by the id's name.
        const restored = yield* roundTrip(paused.chain, kit.toolkit)
        const again = yield* run(restored)
        expect(again._tag).toBe("Pause")
        expect(kit.ran).toEqual([])

        const approved = yield* Approval.decide(restored, { [id]: Approval.approve })
        const done = yield* run(yield* roundTrip(approved, kit.toolkit))
        expect(done._tag).toBe("Ok")
        expect(kit.ran).toEqual([{ id, path: "/etc" }])
      }))
  }

  for (const id of prototypeNames) {
    it.effect(`${JSON.stringify(id)}: an external call keeps its waiting state through encode and decode`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = callsThenDone([{ id, name: "measure", params: { what: "disk" } }])
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, kit.layer])
        )
        expect(pausedCalls(paused).map((call) => call.id)).toEqual([id])
        const document = yield* Chain.encode(paused.chain)
        const text = JSON.stringify(document)
        expect(JSON.parse(text).callStates).toEqual(JSON.parse(JSON.stringify({ [id]: { _tag: "AwaitingResult" } })))
        const restored = yield* Chain.decode(text, { toolkit: kit.toolkit, trustUnsignedApprovals: true })
        expect(ExternalTool.pending(restored).map((call) => call.id)).toEqual([id])
        const supplied = yield* ExternalTool.supply(restored, { [id]: { result: 42 } })
        const done = yield* Chain.run(supplied, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
        expect(done._tag).toBe("Ok")
        expect(done.chain.lastToolResults.map((result) => [result.id, result.encoded])).toEqual([[id, 42]])
      }))
  }

  it.effect("random strings and prototype names as ids, many per response: every approval call pauses, none runs", () =>
    Effect.gen(function*() {
      const ids = [...prototypeNames, "", " ", "a".repeat(300), "call_1", "call_1", "\u0000", "🙂", "toString"]
      const kit = makeKit()
      const model = ChatModel.scripted([{ toolCalls: ids.map((id, i) => ({ id, name: "delete_file", params: { path: `/p${i}` } })) }])
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const calls = pausedCalls(paused)
      expect(calls.length).toBe(ids.length)
      expect(new Set(calls.map((call) => call.id)).size).toBe(ids.length)
      expect(calls.map((call) => (call.params as { path: string }).path)).toEqual(ids.map((_, i) => `/p${i}`))
      expect(kit.ran).toEqual([])
    }))
})

describe("over the AI SDK bridge, the id comes from the provider's response", () => {
  for (const id of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
    it.effect(`Chat Completions, tool call id ${JSON.stringify(id)}: the run pauses for approval; the tool does not run`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const server = yield* OpenAiServer.make([
          { toolCalls: [{ id, name: "delete_file", arguments: { path: "/etc" } }] },
          { text: "done" }
        ])
        const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
        const model = AiSdkChatModel.fromAiSdk(provider.chat("gpt-test"))
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model, kit.layer]))
        expect(pausedCalls(paused).map((call) => call.id)).toEqual([id])
        expect(kit.ran).toEqual([])
        const approved = yield* Approval.decide(paused.chain, { [id]: Approval.approve })
        const done = yield* Chain.run(approved, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model, kit.layer]))
        expect(done._tag).toBe("Ok")
        expect(kit.ran).toEqual([{ id, path: "/etc" }])
        // The provider saw the call and its result under the same id.
        const body = server.requests[1].body as { messages: ReadonlyArray<{ role: string; tool_call_id?: string }> }
        expect(body.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([id])
      }).pipe(Effect.scoped))
  }
})

// -----------------------------------------------------------------------------
// 2. Duplicate, empty and over-long ids
// -----------------------------------------------------------------------------

describe("ids are made unique on arrival", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly ids: ReadonlyArray<string>
    readonly renamed: ReadonlyArray<string>
  }> = [
    { name: "two calls with one id", ids: ["x", "x"], renamed: ["x", "loopwork_1_2"] },
    { name: "three calls with one id", ids: ["x", "x", "x"], renamed: ["x", "loopwork_1_2", "loopwork_1_3"] },
    { name: "empty ids", ids: ["", ""], renamed: ["loopwork_1_1", "loopwork_1_2"] },
    { name: "an over-long id", ids: ["a".repeat(257), "b"], renamed: ["loopwork_1_1", "b"] },
    { name: "a 256-character id is kept", ids: ["a".repeat(256)], renamed: ["a".repeat(256)] },
    { name: "the generated id is taken: a suffix", ids: ["x", "x", "loopwork_1_2"], renamed: ["x", "loopwork_1_2_2", "loopwork_1_2"] },
    { name: "unique ids are kept", ids: ["a", "b", "c"], renamed: ["a", "b", "c"] },
    // A store may change what is not printable ASCII: SQLite keeps a lone surrogate as U+FFFD and cuts at NUL.
    { name: "lone surrogates that one store would make one id", ids: ["r\uD800", "r\uD801"], renamed: ["loopwork_1_1", "loopwork_1_2"] },
    { name: "control characters", ids: ["a\u0000b", "tab\there", "del\u007f"], renamed: ["loopwork_1_1", "loopwork_1_2", "loopwork_1_3"] },
    { name: "characters beyond ASCII", ids: ["caf\u00e9", "\u{1F600}", "ok-1 _.:/#"], renamed: ["loopwork_1_1", "loopwork_1_2", "ok-1 _.:/#"] }
  ]
  for (const row of cases) {
    it.effect(`${row.name}: ${JSON.stringify(row.ids.map((id) => id.length > 20 ? `${id.length} chars` : id))} → ${
      JSON.stringify(row.renamed.map((id) => id.length > 20 ? `${id.length} chars` : id))
    }`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = ChatModel.scripted([{
          toolCalls: row.ids.map((id, i) => ({ id, name: "delete_file", params: { path: `/p${i}` } }))
        }])
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, kit.layer])
        )
        expect(pausedCalls(paused).map((call) => call.id)).toEqual(row.renamed)
        // The transcript carries the same ids, so the provider sees calls and results that match.
        const assistant = paused.chain.messages.at(-1)
        expect(assistant?.role).toBe("assistant")
        const partIds = assistant?.role === "assistant"
          ? assistant.content.flatMap((part) => part.type === "tool-call" ? [part.id] : [])
          : []
        expect(partIds).toEqual(row.renamed)
        expect(paused.chain.lastResponse?.toolCalls.map((call) => call.id)).toEqual(row.renamed)
      }))
  }

  it.effect("one approval acts on one call: approving the duplicated id runs the first call only", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = callsThenDone([
        { id: "x", name: "delete_file", params: { path: "/tmp/a" } },
        { id: "x", name: "delete_file", params: { path: "/" } }
      ])
      const run = (chain: Chain.Chain) =>
        Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const paused = yield* run(kit.chain)
      const approved = yield* Approval.decide(paused.chain, { x: Approval.approve })
      const again = yield* run(approved)
      expect(pausedCalls(again).map((call) => [call.id, call.params])).toEqual([["loopwork_1_2", { path: "/" }]])
      expect(kit.ran).toEqual([{ id: "x", path: "/tmp/a" }])
    }))

  it.effect("one edit rewrites one call: the other call with the same id keeps its arguments in the transcript", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([
        { toolCalls: [{ id: "x", name: "delete_file", params: { path: "/a" } }, { id: "x", name: "delete_file", params: { path: "/b" } }] }
      ])
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const edited = yield* Approval.decide(paused.chain, { x: Approval.edit({ path: "/c" }) })
      const assistant = edited.messages.at(-1)
      const params = assistant?.role === "assistant"
        ? assistant.content.flatMap((part) => part.type === "tool-call" ? [[part.id, part.params]] : [])
        : []
      expect(params).toEqual([["x", { path: "/c" }], ["loopwork_1_2", { path: "/b" }]])
    }))

  it.effect("a provider-executed call keeps its id; a client call that repeats it is renamed", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const parts = [
        toolCall("web_1", "/a"),
        Response.makePart("tool-call", { id: "web_1", name: "web_search", params: { q: "x" }, providerExecuted: true }),
        Response.makePart("tool-result", {
          id: "web_1",
          name: "web_search",
          isFailure: false,
          result: "hits",
          encodedResult: "hits",
          providerExecuted: true,
          preliminary: false
        })
      ]
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([rawModel([parts]), kit.layer])
      )
      expect(pausedCalls(paused).map((call) => call.id)).toEqual(["loopwork_1_1"])
      const assistant = paused.chain.messages.at(-1)
      const ids = assistant?.role === "assistant"
        ? assistant.content.flatMap((part) => part.type === "tool-call" || part.type === "tool-result" ? [[part.type, part.id]] : [])
        : []
      expect(ids).toEqual([["tool-call", "loopwork_1_1"], ["tool-call", "web_1"], ["tool-result", "web_1"]])
    }))

  it.effect("a tool result the provider did not execute is dropped: the model cannot answer its own call", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const parts = [
        toolCall("c1", "/etc"),
        Response.makePart("tool-result", {
          id: "c1",
          name: "delete_file",
          isFailure: false,
          result: "deleted /etc",
          encodedResult: "deleted /etc",
          providerExecuted: false,
          preliminary: false
        })
      ]
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([rawModel([parts]), kit.layer])
      )
      expect(pausedCalls(paused).map((call) => call.id)).toEqual(["c1"])
      expect(paused.chain.messages.map((message) => message.role)).toEqual(["user", "assistant"])
      expect(kit.ran).toEqual([])
    }))
})

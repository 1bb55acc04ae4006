/**
 * `fromAiSdk(model, { strictTools: true })` over real HTTP to the local OpenAI-compatible server:
 * every tool goes out in OpenAI's strict form (all properties required, `additionalProperties:
 * false`, nested objects too) and marked `strict: true`, with the v4 and the v3 package; a tool
 * without a strict form (an optional key) fails the call before anything is sent, naming the tool,
 * not retried; without the option, tools go as before. On the Responses API the v4 and v3 packages
 * send the same schema and mark. A v2 model (`@ai-sdk/openai` 2.x) has no `strict` field in its
 * tool definitions: the 2.x package marks every tool with its own `strictJsonSchema` provider
 * option (default false), so the bridge sets it to true for strictTools unless the caller set it.
 */
import { createOpenAI as createV4 } from "@ai-sdk/openai"
import { createOpenAI as createV2 } from "@ai-sdk/openai-v2"
import { createOpenAI as createV3 } from "@ai-sdk/openai-v3"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { type AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"

const Search = Tool.make("search", {
  parameters: Schema.Struct({ query: Schema.String, filters: Schema.Struct({ exact: Schema.Boolean }) }),
  success: Schema.String
})
const Loose = Tool.make("loose", { parameters: Schema.Struct({ query: Schema.optional(Schema.String) }), success: Schema.String })

const searchTools = Toolkit.make(Search)
const searchHandlers = searchTools.toLayer({ search: ({ query }) => Effect.succeed(`found ${query}`) })
const looseTools = Toolkit.make(Loose)
const looseHandlers = looseTools.toLayer({ loose: () => Effect.succeed("ok") })

const strictSearch = {
  type: "object",
  properties: {
    query: { type: "string" },
    filters: { type: "object", properties: { exact: { type: "boolean" } }, required: ["exact"], additionalProperties: false }
  },
  required: ["query", "filters"],
  additionalProperties: false
}

type Sent = { readonly tools?: ReadonlyArray<{ readonly type: string; readonly function: { readonly name: string; readonly parameters: unknown; readonly strict?: boolean } }> }

const providers = [
  ["v4", (baseURL: string) => createV4({ baseURL, apiKey: "test" }).chat("gpt-test")],
  ["v3", (baseURL: string) => createV3({ baseURL, apiKey: "test" }).chat("gpt-test")]
] as const

describe("strictTools through loopwork/ai-sdk", () => {
  for (const [version, model] of providers) {
    it.live(`${version}: every tool in strict form, marked strict, nested objects included`, () =>
      Effect.gen(function*() {
        const server = yield* OpenAiServer.make([{ toolCalls: [{ name: "search", arguments: { query: "q", filters: { exact: true } } }] }, { text: "done" }])
        const outcome = yield* Chain.run(Chain.make({ user: "Find", toolkit: searchTools }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([ChatModel.fromAiSdk(model(server.baseURL), { strictTools: true }), searchHandlers])
        )
        expect(Chain.text(outcome.chain)).toBe("done")
        const tool = (server.requests[0]!.body as Sent).tools?.[0]
        expect(tool?.function).toEqual({ name: "search", parameters: strictSearch, strict: true })
      }))
  }

  it.live("a tool without a strict form: the call fails before it is sent, naming the tool, and is not retried", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "never sent" }])
      const error = yield* Chain.run(Chain.make({ user: "Go", toolkit: looseTools }), { mode: Mode.whileNeedsResponse, retry: Schedule.recurs(3) }).pipe(
        Effect.provide([ChatModel.fromAiSdk(createV4({ baseURL: server.baseURL, apiKey: "test" }).chat("gpt-test"), { strictTools: true }), looseHandlers]),
        Effect.flip
      )
      if (!(error instanceof LoopError.RunError)) return expect.unreachable(`not a RunError: ${String(error)}`)
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(error.reason.message).toContain("tool 'loose' has none")
      expect(error.reason.message).toContain("query")
      expect(server.requests).toHaveLength(0)
    }))

  it.live("without the option, tools go as before: not strict, optional keys allowed", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "done" }])
      yield* Chain.run(Chain.make({ user: "Go", toolkit: looseTools }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([ChatModel.fromAiSdk(createV4({ baseURL: server.baseURL, apiKey: "test" }).chat("gpt-test")), looseHandlers])
      )
      const tool = (server.requests[0]!.body as Sent).tools?.[0]
      expect(tool?.function.strict).toBeUndefined()
      expect(tool?.function.parameters).toEqual({
        type: "object",
        properties: { query: { anyOf: [{ type: "string" }, { type: "null" }] } },
        additionalProperties: true
      })
    }))
})

type SentResponses = { readonly tools?: ReadonlyArray<{ readonly type: string; readonly name: string; readonly parameters: unknown; readonly strict?: boolean }> }

/** The first request's tools after a strictTools run of `search` with `model`. */
const sentTools = (model: (baseURL: string) => AiSdkModel.LanguageModel, callOptions?: AiSdkModel.Options["callOptions"]) =>
  Effect.gen(function*() {
    const server = yield* OpenAiServer.make([{ toolCalls: [{ name: "search", arguments: { query: "q", filters: { exact: true } } }] }, { text: "done" }])
    const outcome = yield* Chain.run(Chain.make({ user: "Find", toolkit: searchTools }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([ChatModel.fromAiSdk(model(server.baseURL), { strictTools: true, ...(callOptions === undefined ? {} : { callOptions }) }), searchHandlers])
    )
    expect(Chain.text(outcome.chain)).toBe("done")
    expect(server.requests).toHaveLength(2)
    return server.requests[0]!.body as Sent & SentResponses
  }).pipe(Effect.scoped)

describe("strictTools on the Responses API and with a v2 model", () => {
  const responses = [
    ["v4", (baseURL: string) => createV4({ baseURL, apiKey: "test" }).responses("gpt-test")],
    ["v3", (baseURL: string) => createV3({ baseURL, apiKey: "test" }).responses("gpt-test")]
  ] as const
  for (const [version, model] of responses) {
    it.live(`${version} Responses API: the tool in strict form, marked strict`, () =>
      Effect.gen(function*() {
        const body = yield* sentTools(model)
        expect(body.tools).toEqual([{ type: "function", name: "search", parameters: strictSearch, strict: true }])
      }))
  }

  it.live("v2 Chat API: the strict-form schema, marked strict through the 2.x package's strictJsonSchema; the caller's own value wins", () =>
    Effect.gen(function*() {
      const v2 = (baseURL: string) => createV2({ baseURL, apiKey: "test" }).chat("gpt-test")
      const plain = yield* sentTools(v2)
      expect(plain.tools).toEqual([{ type: "function", function: { name: "search", parameters: strictSearch, strict: true } }])
      const unmarked = yield* sentTools(v2, { providerOptions: { openai: { strictJsonSchema: false } } })
      expect(unmarked.tools).toEqual([{ type: "function", function: { name: "search", parameters: strictSearch, strict: false } }])
    }))

  it.live("v2: provider options that are not an object (from JavaScript) are no choice of the caller's, not a TypeError", () =>
    Effect.gen(function*() {
      const v2 = (baseURL: string) => createV2({ baseURL, apiKey: "test" }).chat("gpt-test")
      const body = yield* sentTools(v2, { providerOptions: { openai: null as never } })
      expect(body.tools).toEqual([{ type: "function", function: { name: "search", parameters: strictSearch, strict: true } }])
    }))

  it.live("v2 Responses API: the strict-form schema, marked strict", () =>
    Effect.gen(function*() {
      const body = yield* sentTools((baseURL) => createV2({ baseURL, apiKey: "test" }).responses("gpt-test"))
      expect(body.tools).toEqual([{ type: "function", name: "search", parameters: strictSearch, strict: true }])
    }))
})

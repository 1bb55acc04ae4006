/**
 * A run's `output` over real HTTP through `@ai-sdk/openai` to the local
 * OpenAI-compatible server: for OpenAI models the `"auto"` strategy is the
 * provider's JSON mode, so the request carries the output's JSON Schema in
 * OpenAI's wire format (Chat Completions `response_format`, Responses
 * `text.format`), and the JSON text that comes back is the typed value. A
 * wrong answer is re-asked; `structuredOutputs: false` uses the
 * final-answer tool instead. The same wire format with the older 3.x and
 * 2.x packages (npm aliases `@ai-sdk/openai-v3`, `@ai-sdk/openai-v2`) on
 * both APIs; and answers that never decode end in `OutputInvalid` after
 * exactly `retries + 1` requests.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { createOpenAI as createV2 } from "@ai-sdk/openai-v2"
import { createOpenAI as createV3 } from "@ai-sdk/openai-v3"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode, StructuredOutput } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { strictVerdictSchema, Verdict } from "../support/outputSchemas.ts"

const verdictSchema = strictVerdictSchema

const run = (server: OpenAiServer.OpenAiServer, api: "chat" | "responses", options?: { readonly structuredOutputs?: boolean }) => {
  const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
  const model = ChatModel.fromAiSdk(api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test"), options)
  return Chain.run(Chain.make({ user: "Approve?" }), {
    mode: Mode.whileNeedsResponse,
    output: StructuredOutput.make(Verdict, { strict: true, name: "verdict" })
  }).pipe(Effect.provide(model))
}

describe("StructuredOutput through loopwork/ai-sdk (OpenAI wire protocol)", () => {
  it.live("chat: response_format json_schema carries the strict Schema; a wrong answer is re-asked; the JSON is decoded", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "{\"approved\":\"yes\"}" }, { text: "{\"approved\":true,\"reason\":\"ok\"}" }])
      const outcome = yield* run(server, "chat")
      expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: true, reason: "ok" })
      const body = server.requests[0]!.body as { readonly response_format?: unknown; readonly tools?: unknown }
      expect(body.response_format).toEqual({ type: "json_schema", json_schema: { schema: verdictSchema, strict: true, name: "verdict", description: StructuredOutput.defaults.description } })
      expect(body.tools).toBeUndefined()
      expect(JSON.stringify(server.requests[1]!.body)).toContain("did not match the required JSON Schema")
    }))

  it.live("a Schema not in strict form is sent with strict: false on both APIs (OpenAI refuses it under strict); the caller's strictJsonSchema wins", () =>
    Effect.gen(function*() {
      const answer = { text: "{\"approved\":true,\"reason\":\"ok\"}" }
      const sent = (api: "chat" | "responses", callOptions?: object) =>
        Effect.gen(function*() {
          const server = yield* OpenAiServer.make([answer])
          const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
          const model = ChatModel.fromAiSdk(api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test"), callOptions === undefined ? {} : { callOptions })
          yield* Chain.run(Chain.make({ user: "Approve?" }), { mode: Mode.whileNeedsResponse, output: Verdict }).pipe(Effect.provide(model))
          const body = server.requests[0]!.body as { readonly response_format?: { readonly json_schema?: { readonly strict?: unknown } }; readonly text?: { readonly format?: { readonly strict?: unknown } } }
          return api === "chat" ? body.response_format?.json_schema?.strict : body.text?.format?.strict
        })
      expect(yield* sent("chat")).toBe(false)
      expect(yield* sent("responses")).toBe(false)
      expect(yield* sent("chat", { providerOptions: { openai: { strictJsonSchema: true } } })).toBe(true)
    }).pipe(Effect.scoped))

  it.live("responses: text.format carries the Schema", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "{\"approved\":false,\"reason\":\"no\"}" }])
      const outcome = yield* run(server, "responses")
      expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: false, reason: "no" })
      const body = server.requests[0]!.body as { readonly text?: { readonly format?: unknown } }
      expect(body.text?.format).toMatchObject({ type: "json_schema", name: "verdict", schema: verdictSchema })
    }))

  it.live("structuredOutputs: false uses the final-answer tool", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ toolCalls: [{ name: "verdict", arguments: { approved: true, reason: "tool" } }] }])
      const outcome = yield* run(server, "chat", { structuredOutputs: false })
      expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: true, reason: "tool" })
      const body = server.requests[0]!.body as { readonly response_format?: unknown; readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string; readonly parameters: unknown } }> }
      expect(body.response_format).toBeUndefined()
      expect(body.tools?.map((tool) => [tool.function.name, tool.function.parameters])).toEqual([["verdict", verdictSchema]])
    }))
})

type Api = "chat" | "responses"
type FormatSent = {
  readonly response_format?: { readonly json_schema?: { readonly strict?: unknown } }
  readonly text?: { readonly format?: { readonly strict?: unknown } }
  readonly tools?: unknown
}

/** The 3.x and 2.x packages' models for `api`, pointed at a server. */
const olderPackages: ReadonlyArray<readonly [string, (baseURL: string, api: Api) => AiSdkModel.LanguageModel]> = [
  ["v3 (@ai-sdk/openai 3.x)", (baseURL, api) => {
    const provider = createV3({ baseURL, apiKey: "test" })
    return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
  }],
  ["v2 (@ai-sdk/openai 2.x)", (baseURL, api) => {
    const provider = createV2({ baseURL, apiKey: "test" })
    return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
  }]
]

describe("StructuredOutput with the older @ai-sdk/openai packages (OpenAI wire protocol)", () => {
  const apis: ReadonlyArray<Api> = ["chat", "responses"]
  for (const [version, model] of olderPackages) {
    for (const api of apis) {
      it.live(`${version} ${api}: the strict Schema in the API's format, a wrong answer re-asked, the JSON decoded; a non-strict Schema goes with strict: false`, () =>
        Effect.gen(function*() {
          const server = yield* OpenAiServer.make([{ text: "{\"approved\":\"yes\"}" }, { text: "{\"approved\":true,\"reason\":\"ok\"}" }])
          const outcome = yield* Chain.run(Chain.make({ user: "Approve?" }), {
            mode: Mode.whileNeedsResponse,
            output: StructuredOutput.make(Verdict, { strict: true, name: "verdict" })
          }).pipe(Effect.provide(ChatModel.fromAiSdk(model(server.baseURL, api))))
          expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: true, reason: "ok" })
          expect(server.requests).toHaveLength(2)
          const body = server.requests[0]!.body as FormatSent
          const described = { strict: true, name: "verdict", description: StructuredOutput.defaults.description }
          if (api === "chat") {
            expect(body.response_format).toEqual({ type: "json_schema", json_schema: { schema: verdictSchema, ...described } })
          } else {
            expect(body.text).toEqual({ format: { type: "json_schema", ...described, schema: verdictSchema } })
          }
          expect(body.tools).toBeUndefined()
          expect(JSON.stringify(server.requests[1]!.body)).toContain("did not match the required JSON Schema")

          // not in strict form: strict false, whatever the package's own default (2.x: false, 3.x: true)
          const loose = yield* OpenAiServer.make([{ text: "{\"approved\":true,\"reason\":\"ok\"}" }])
          yield* Chain.run(Chain.make({ user: "Approve?" }), { mode: Mode.whileNeedsResponse, output: Verdict }).pipe(
            Effect.provide(ChatModel.fromAiSdk(model(loose.baseURL, api)))
          )
          const sent = loose.requests[0]!.body as FormatSent
          expect(api === "chat" ? sent.response_format?.json_schema?.strict : sent.text?.format?.strict).toBe(false)
        }).pipe(Effect.scoped))
    }
  }
})

describe("answers that never decode, over the wire", () => {
  it.live("OutputInvalid after retries + 1 requests: the last raw answer, its decode error, the attempts; no further request", () =>
    Effect.gen(function*() {
      const last = "{\"approved\":true,\"reason\":7}"
      const server = yield* OpenAiServer.make([
        { text: "{\"approved\":\"yes\"}" },
        { text: "not JSON at all" },
        { text: last },
        { text: "{\"approved\":true,\"reason\":\"never asked\"}" }
      ])
      const error = yield* run(server, "chat").pipe(Effect.flip)
      if (!(error instanceof LoopError.RunError)) return expect.unreachable(`not a RunError: ${String(error)}`)
      const reason = error.reason
      if (!(reason instanceof LoopError.OutputInvalid)) return expect.unreachable(`not OutputInvalid: ${reason._tag}`)
      expect({ raw: reason.raw, error: reason.error, attempts: reason.attempts }).toEqual({
        raw: last,
        error: "Expected string\n  at [\"reason\"]",
        attempts: StructuredOutput.defaults.retries + 1
      })
      expect(server.requests).toHaveLength(3)
      expect(server.requests.map((request) => request.path)).toEqual(Array(3).fill("/v1/chat/completions"))
      // every request carried the response format; each re-ask carried the previous decode error
      expect(server.requests.every((request) => (request.body as FormatSent).response_format !== undefined)).toBe(true)
      expect(JSON.stringify(server.requests[2]!.body)).toContain("did not match the required JSON Schema")
    }).pipe(Effect.scoped))
})

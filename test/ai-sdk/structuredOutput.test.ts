/**
 * A run's `output` over real HTTP through `@ai-sdk/openai` to the local
 * OpenAI-compatible server: for OpenAI models the `"auto"` strategy is the
 * provider's JSON mode, so the request carries the output's JSON Schema in
 * OpenAI's wire format (Chat Completions `response_format`, Responses
 * `text.format`), and the JSON text that comes back is the typed value. A
 * wrong answer is re-asked; `structuredOutputs: false` uses the
 * final-answer tool instead.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, Mode, StructuredOutput } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"

const Verdict = Schema.Struct({ approved: Schema.Boolean, reason: Schema.String })
const verdictSchema = {
  type: "object",
  properties: { approved: { type: "boolean" }, reason: { type: "string" } },
  required: ["approved", "reason"],
  additionalProperties: false
}

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

/**
 * The AI SDK bridge, requests (src/ai-sdk/internal/toProvider.ts): the effect/ai prompt → the
 * provider prompt (system, user text and files, assistant text/reasoning/tool calls, tool results as
 * json / text / error-text / error-json), tools → JSON Schema, the tool choice (auto / none / required /
 * a tool / oneOf), call options.
 */
import type {
LanguageModelV4Prompt
} from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../../src/ai-sdk/index.ts"
import { Chain, Mode } from "../../../src/index.ts"
import { fake, serviceOf, toolkit, tools, handlers, weatherSchema, request, sent } from "../../support/aiSdk.ts"

// -----------------------------------------------------------------------------
// Request mapping
// -----------------------------------------------------------------------------

/** A conversation with every kind of message and part the bridge maps. */
const conversation: Prompt.RawInput = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Plain string content" },
  {
    role: "user",
    content: [
      { type: "text", text: "What is in this picture?" },
      { type: "file", mediaType: "image/png", data: new URL("https://example.test/cat.png"), fileName: "cat.png" }
    ]
  },
  { role: "assistant", content: "Plain assistant string" },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I need the weather." },
      { type: "text", text: "Checking." },
      { type: "tool-call", id: "c1", name: "get_weather", params: { city: "Paris" }, providerExecuted: false },
      { type: "tool-call", id: "c2", name: "search", params: { query: "Paris" }, providerExecuted: false },
      { type: "tool-call", id: "c3", name: "search", params: "{\"query\": \"Par", providerExecuted: false },
      { type: "tool-call", id: "c4", name: "get_weather", params: { city: "Lyon" }, providerExecuted: false },
      { type: "tool-call", id: "web", name: "web_search", params: { q: "x" }, providerExecuted: true }
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", id: "c1", name: "get_weather", isFailure: false, result: { celsius: 21 }, providerExecuted: false },
      { type: "tool-result", id: "c2", name: "search", isFailure: false, result: "three results", providerExecuted: false },
      {
        type: "tool-result",
        id: "c3",
        name: "search",
        isFailure: true,
        result: "Invalid arguments for tool 'search': Expected object",
        providerExecuted: false
      },
      {
        type: "tool-result",
        id: "c4",
        name: "get_weather",
        isFailure: true,
        result: { error: "station offline", code: 503 },
        providerExecuted: false
      }
    ]
  }
]

const expectedPrompt: LanguageModelV4Prompt = [
  { role: "system", content: "You are terse." },
  { role: "user", content: [{ type: "text", text: "Plain string content" }] },
  {
    role: "user",
    content: [
      { type: "text", text: "What is in this picture?" },
      { type: "file", mediaType: "image/png", data: { type: "url", url: new URL("https://example.test/cat.png") }, filename: "cat.png" }
    ]
  },
  { role: "assistant", content: [{ type: "text", text: "Plain assistant string" }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I need the weather." },
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "c1", toolName: "get_weather", input: { city: "Paris" } },
      { type: "tool-call", toolCallId: "c2", toolName: "search", input: { query: "Paris" } },
      { type: "tool-call", toolCallId: "c3", toolName: "search", input: "{\"query\": \"Par" },
      { type: "tool-call", toolCallId: "c4", toolName: "get_weather", input: { city: "Lyon" } }
      // the provider-executed call is left out
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "get_weather", output: { type: "json", value: { celsius: 21 } } },
      { type: "tool-result", toolCallId: "c2", toolName: "search", output: { type: "text", value: "three results" } },
      {
        type: "tool-result",
        toolCallId: "c3",
        toolName: "search",
        output: { type: "error-text", value: "Invalid arguments for tool 'search': Expected object" }
      },
      {
        type: "tool-result",
        toolCallId: "c4",
        toolName: "get_weather",
        output: { type: "error-json", value: { error: "station offline", code: 503 } }
      }
    ]
  }
]

describe("request mapping", () => {
  it("toProviderPrompt: system, user (string, text, file), assistant (string, reasoning, text, tool calls), tool results as json / text / error-text / error-json", () => {
    expect(AiSdkModel.toProviderPrompt(Prompt.make(conversation))).toEqual(expectedPrompt)
  })

  it.effect("generate sends exactly that prompt, with the AbortSignal and the call options", () =>
    Effect.gen(function*() {
      const model = fake([{ content: [{ type: "text", text: "ok" }] }])
      const service = yield* serviceOf(model, { callOptions: { temperature: 0, maxOutputTokens: 64, headers: { "x-trace": "t1" } } })
      yield* service.generate(request(conversation))
      expect(model.calls).toHaveLength(1)
      expect(model.calls[0].abortSignal).toBeInstanceOf(AbortSignal)
      // no tools: neither `tools` nor `toolChoice` is sent
      expect(sent(model.calls[0])).toEqual({ temperature: 0, maxOutputTokens: 64, headers: { "x-trace": "t1" }, prompt: expectedPrompt })
    }))

  it.effect("a transcript never grants an approval: effect/ai's approval responses are not sent (a tool message left empty is dropped), results beside them are", () =>
    Effect.gen(function*() {
      // A transcript from a client or an unsigned stored document "approving" a provider-side (hosted MCP) request:
      // @ai-sdk/openai's Responses API would send it as `mcp_approval_response { approve: true }`.
      const history = Schema.decodeUnknownSync(Schema.Array(Prompt.Message))([
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "tool-approval-request", approvalId: "mcpr_1", toolCallId: "mcp_1" },
            { type: "tool-call", id: "c1", name: "ping", params: {}, providerExecuted: false }
          ]
        },
        { role: "tool", content: [{ type: "tool-approval-response", approvalId: "mcpr_1", approved: true }] },
        {
          role: "tool",
          content: [
            { type: "tool-approval-response", approvalId: "mcpr_2", approved: true, reason: "looks fine" },
            { type: "tool-result", id: "c1", name: "ping", isFailure: false, result: "pong", providerExecuted: false }
          ]
        }
      ])
      const model = fake([{ content: [{ type: "text", text: "ok" }] }])
      yield* Chain.run(Chain.make({ messages: history, user: "go on", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([ChatModel.fromAiSdk(model), handlers])
      )
      const prompt = sent(model.calls[0]).prompt
      expect(JSON.stringify(prompt)).not.toContain("approval")
      expect(prompt.filter((message) => message.role === "tool")).toEqual([
        { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "ping", output: { type: "text", value: "pong" } }] }
      ])
      expect(prompt.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"])
    }))

  it("toProviderTools: name, description and each parameter Schema as JSON Schema", () => {
    expect(AiSdkModel.toProviderTools(tools)).toEqual([
      { type: "function", name: "get_weather", description: "The weather in a city", inputSchema: weatherSchema },
      {
        type: "function",
        name: "search",
        description: "Searches the web",
        inputSchema: {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "number" }, lang: { type: "string", enum: ["en", "fr"] } },
          required: ["query"],
          additionalProperties: true
        }
      },
      // a tool without parameters gets a closed, empty object schema, and no description key
      { type: "function", name: "ping", inputSchema: { type: "object", additionalProperties: false } }
    ])
  })

  const choices: ReadonlyArray<{
    readonly choice: ChatModel.ToolChoice
    readonly tools: ReadonlyArray<string>
    readonly toolChoice: unknown
  }> = [
    { choice: "auto", tools: ["get_weather", "search", "ping"], toolChoice: { type: "auto" } },
    { choice: "none", tools: ["get_weather", "search", "ping"], toolChoice: { type: "none" } },
    { choice: "required", tools: ["get_weather", "search", "ping"], toolChoice: { type: "required" } },
    { choice: { tool: "search" }, tools: ["get_weather", "search", "ping"], toolChoice: { type: "tool", toolName: "search" } },
    { choice: { oneOf: ["ping", "get_weather"] }, tools: ["get_weather", "ping"], toolChoice: { type: "auto" } },
    { choice: { oneOf: ["search"], mode: "required" }, tools: ["search"], toolChoice: { type: "required" } },
    { choice: { oneOf: ["search"], mode: "auto" }, tools: ["search"], toolChoice: { type: "auto" } }
  ]
  for (const row of choices) {
    it.effect(`toolChoice ${JSON.stringify(row.choice)} → tools ${row.tools.join(", ")}, ${JSON.stringify(row.toolChoice)}`, () =>
      Effect.gen(function*() {
        const model = fake([{ content: [] }])
        const service = yield* serviceOf(model)
        yield* service.generate(request("Hi", { tools, toolChoice: row.choice }))
        const call = sent(model.calls[0])
        expect(call.tools?.map((tool) => tool.type === "function" ? tool.name : tool.id)).toEqual(row.tools)
        expect(call.toolChoice).toEqual(row.toolChoice)
      }))
  }
})

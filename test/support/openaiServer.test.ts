/**
 * The scripted OpenAI server (test/support/openaiServer.ts) against the real
 * `@ai-sdk/openai` client, called at the provider-spec level (`doGenerate`,
 * `doStream`) for both the Chat Completions and the Responses API: text, tool
 * calls, usage and finish reasons come back as scripted, the server records
 * what the client sent, and every scripted fault reaches the client as the
 * error it would get from OpenAI.
 *
 * The client does not retry at this level (retries live in `generateText`),
 * so every fault below is exactly one request.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { APICallError } from "@ai-sdk/provider"
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FunctionTool,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as OpenAiServer from "./openaiServer.ts"

// ---------------------------------------------------------------------------
// Client side helpers
// ---------------------------------------------------------------------------

type Api = "chat" | "responses"
const apis: ReadonlyArray<Api> = ["chat", "responses"]

/** The real client's model for one API, pointed at the server. */
const modelFor = (server: OpenAiServer.OpenAiServer, api: Api): LanguageModelV4 => {
  const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test-key" })
  return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
}

/** A server playing `turns`, and the model of `api` talking to it. */
const setup = (api: Api, turns: ReadonlyArray<OpenAiServer.ServerTurn>) =>
  Effect.map(OpenAiServer.make(turns), (server) => ({ server, model: modelFor(server, api) }))

const generate = (model: LanguageModelV4, options: LanguageModelV4CallOptions): Effect.Effect<LanguageModelV4GenerateResult> =>
  Effect.promise(() => model.doGenerate(options))

/** Everything a stream produced, and the error it ended with (undefined when it ended normally). */
interface Streamed {
  readonly parts: ReadonlyArray<LanguageModelV4StreamPart>
  readonly error: unknown
}

const stream = (model: LanguageModelV4, options: LanguageModelV4CallOptions): Effect.Effect<Streamed> =>
  Effect.promise(async () => {
    const reader = (await model.doStream(options)).stream.getReader()
    const parts: Array<LanguageModelV4StreamPart> = []
    try {
      for (;;) {
        const next = await reader.read()
        if (next.done) return { parts, error: undefined }
        parts.push(next.value)
      }
    } catch (error) {
      return { parts, error }
    }
  })

/** The error `run` rejects with (the test fails if it succeeds). */
const failureOf = (run: () => PromiseLike<unknown>): Effect.Effect<unknown> =>
  Effect.promise(async () => {
    try {
      await run()
    } catch (error) {
      return error
    }
    throw new Error("expected a failure, got a success")
  })

const asApiCallError = (error: unknown): APICallError => {
  if (!APICallError.isInstance(error)) throw new Error(`expected an APICallError, got ${String(error)}`)
  return error
}

/** Polls (real time) until `condition` holds. */
const eventually = (condition: () => boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 200 && !condition(); attempt++) yield* Effect.sleep("5 millis")
    expect(condition()).toBe(true)
  })

// Views of results and streams

const toolCallsIn = (content: ReadonlyArray<LanguageModelV4Content | LanguageModelV4StreamPart>) =>
  content.flatMap((part) =>
    part.type === "tool-call" ? [{ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input }] : []
  )

const textIn = (content: ReadonlyArray<LanguageModelV4Content>): string =>
  content.map((part) => (part.type === "text" ? part.text : "")).join("")

/** The non-empty text deltas of a stream. */
const textDeltas = (parts: ReadonlyArray<LanguageModelV4StreamPart>): ReadonlyArray<string> =>
  parts.flatMap((part) => (part.type === "text-delta" && part.delta !== "" ? [part.delta] : []))

const toolInputDeltas = (parts: ReadonlyArray<LanguageModelV4StreamPart>): ReadonlyArray<string> =>
  parts.flatMap((part) => (part.type === "tool-input-delta" ? [part.delta] : []))

const finishOf = (parts: ReadonlyArray<LanguageModelV4StreamPart>) => {
  const finish = parts.find((part) => part.type === "finish")
  if (finish?.type !== "finish") throw new Error("the stream has no finish part")
  return { finishReason: finish.finishReason.unified, input: finish.usage.inputTokens.total, output: finish.usage.outputTokens.total }
}

// ---------------------------------------------------------------------------
// Prompts and tools (AI SDK V4 prompt format)
// ---------------------------------------------------------------------------

const weatherSchema: LanguageModelV4FunctionTool["inputSchema"] = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
}

const weather: LanguageModelV4FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  inputSchema: weatherSchema
}

const question = "What is the weather in Paris?"

const ask: LanguageModelV4Prompt = [{ role: "user", content: [{ type: "text", text: question }] }]

/** The question, the model's tool call, and the tool's result. */
const withToolResult = (call: { readonly toolCallId: string; readonly toolName: string; readonly input: string }): LanguageModelV4Prompt => [
  ...ask,
  { role: "assistant", content: [{ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: JSON.parse(call.input) }] },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: { type: "json", value: { celsius: 21 } } }]
  }
]

/** The request body the client sends for `withToolResult` with call id `call_1_0`, per API. */
const expectedConversation: Record<Api, object> = {
  chat: {
    model: "gpt-test",
    messages: [
      { role: "user", content: question },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1_0", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { role: "tool", tool_call_id: "call_1_0", content: "{\"celsius\":21}" }
    ],
    tools: [{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weatherSchema } }]
  },
  responses: {
    model: "gpt-test",
    input: [
      { role: "user", content: [{ type: "input_text", text: question }] },
      { type: "function_call", call_id: "call_1_0", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
      { type: "function_call_output", call_id: "call_1_0", output: "{\"celsius\":21}" }
    ],
    tools: [{ type: "function", name: "get_weather", description: "The weather in a city", parameters: weatherSchema, strict: false }]
  }
}

const endpoint: Record<Api, string> = { chat: "/v1/chat/completions", responses: "/v1/responses" }

// ---------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------

for (const api of apis) {
  describe(`${api} API: replies`, () => {
    it.live("JSON: text, tool calls with id, name and exact arguments, usage and finish reason", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{
          text: "Let me check.",
          toolCalls: [
            { name: "get_weather", arguments: { city: "Paris" } },
            { id: "call_custom", name: "get_weather", arguments: "{\"city\": \"Lyon\"}" }
          ],
          usage: { input: 7, output: 3 }
        }])
        const result = yield* generate(model, { prompt: ask, tools: [weather] })
        expect(textIn(result.content)).toBe("Let me check.")
        expect(toolCallsIn(result.content)).toEqual([
          { toolCallId: "call_1_0", toolName: "get_weather", input: "{\"city\":\"Paris\"}" },
          { toolCallId: "call_custom", toolName: "get_weather", input: "{\"city\": \"Lyon\"}" }
        ])
        expect(result.finishReason.unified).toBe("tool-calls")
        expect([result.usage.inputTokens.total, result.usage.outputTokens.total]).toEqual([7, 3])
        expect(server.requests.map((request) => [request.method, request.path])).toEqual([["POST", endpoint[api]]])
        expect(server.requests[0].headers.authorization).toBe("Bearer test-key")
      }))

    it.live("streaming: text in several deltas, tool arguments in several deltas, usage and finish reason", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{
          text: "Let me check the weather.",
          toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }],
          usage: { input: 7, output: 3 }
        }])
        const { parts, error } = yield* stream(model, { prompt: ask, tools: [weather] })
        expect(error).toBeUndefined()
        expect(textDeltas(parts)).toEqual(["Let ", "me ", "check ", "the ", "weather."])
        expect(toolInputDeltas(parts).length).toBeGreaterThan(1)
        expect(toolInputDeltas(parts).join("")).toBe("{\"city\":\"Paris\"}")
        expect(toolCallsIn(parts)).toEqual([{ toolCallId: "call_1_0", toolName: "get_weather", input: "{\"city\":\"Paris\"}" }])
        expect(finishOf(parts)).toEqual({ finishReason: "tool-calls", input: 7, output: 3 })
        expect(server.requests[0].body).toEqual(expect.objectContaining(
          api === "chat" ? { stream: true, stream_options: { include_usage: true } } : { stream: true }
        ))
      }))

    it.live("finish reasons and default usage map the same way in JSON and in streams", () =>
      Effect.gen(function*() {
        const replies: ReadonlyArray<OpenAiServer.Reply> = [
          { text: "Done." },
          { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
          { text: "Cut", finishReason: "length" },
          { text: "Hidden", finishReason: "content_filter" }
        ]
        const expected = ["stop", "tool-calls", "length", "content-filter"]
        const { model } = yield* setup(api, [...replies, ...replies])
        const generated: Array<unknown> = []
        for (const _ of replies) {
          const result = yield* generate(model, { prompt: ask, tools: [weather] })
          generated.push([result.finishReason.unified, result.usage.inputTokens.total, result.usage.outputTokens.total])
        }
        const streamed: Array<unknown> = []
        for (const _ of replies) {
          const { parts } = yield* stream(model, { prompt: ask, tools: [weather] })
          const finish = finishOf(parts)
          streamed.push([finish.finishReason, finish.input, finish.output])
        }
        const withDefaultUsage = expected.map((reason) => [reason, 10, 5])
        expect(generated).toEqual(withDefaultUsage)
        expect(streamed).toEqual(withDefaultUsage)
      }))

    it.live("the server records the tools' JSON Schemas and the messages as sent, including a tool result", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [
          { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
          { text: "It is 21 °C in Paris." }
        ])
        const first = yield* generate(model, { prompt: ask, tools: [weather] })
        const [call] = toolCallsIn(first.content)
        const second = yield* generate(model, { prompt: withToolResult(call), tools: [weather] })
        expect(textIn(second.content)).toBe("It is 21 °C in Paris.")
        expect(server.calls).toBe(2)
        expect(server.requests[1].body).toEqual(expect.objectContaining(expectedConversation[api]))
      }))

    it.live("malformed tool-call JSON arrives verbatim, in JSON and in streams", () =>
      Effect.gen(function*() {
        const malformed = "{\"city\": \"Par"
        const turn: OpenAiServer.Reply = { toolCalls: [{ name: "get_weather", arguments: malformed }] }
        const { model } = yield* setup(api, [turn, turn])
        const generated = yield* generate(model, { prompt: ask, tools: [weather] })
        const streamed = yield* stream(model, { prompt: ask, tools: [weather] })
        expect(toolCallsIn(generated.content).map((call) => call.input)).toEqual([malformed])
        expect(toolCallsIn(streamed.parts).map((call) => call.input)).toEqual([malformed])
      }))
  })

  // -------------------------------------------------------------------------
  // Faults
  // -------------------------------------------------------------------------

  describe(`${api} API: faults`, () => {
    it.live("429 with retry-after: a retryable APICallError carrying the headers; one request", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ status: 429, headers: { "retry-after": "2", "retry-after-ms": "1500" } }])
        const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
        expect(error.statusCode).toBe(429)
        expect(error.isRetryable).toBe(true)
        expect(error.message).toBe("Scripted error 429")
        expect(error.responseHeaders).toEqual(expect.objectContaining({ "retry-after": "2", "retry-after-ms": "1500" }))
        expect(server.calls).toBe(1)
      }))

    it.live("400 with an OpenAI error body: not retryable, the provider's message; one request", () =>
      Effect.gen(function*() {
        const body = { error: { message: "Invalid schema for function 'get_weather'", type: "invalid_request_error", code: "invalid_function_parameters" } }
        const { model, server } = yield* setup(api, [{ status: 400, body }])
        const error = asApiCallError(yield* failureOf(() => model.doStream({ prompt: ask })))
        expect(error.statusCode).toBe(400)
        expect(error.isRetryable).toBe(false)
        expect(error.message).toBe("Invalid schema for function 'get_weather'")
        expect(error.data).toEqual(body)
        expect(server.calls).toBe(1)
      }))

    it.live("500 without a body: a retryable APICallError with the default OpenAI error body", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ status: 500 }])
        const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
        expect([error.statusCode, error.isRetryable, error.message]).toEqual([500, true, "Scripted error 500"])
        expect(server.calls).toBe(1)
      }))

    it.live("drop before the response: a retryable 'Cannot connect' APICallError; one request", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ drop: "before-response" }])
        const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
        expect(error.isRetryable).toBe(true)
        expect(error.message).toMatch(/^Cannot connect to API/)
        expect(server.calls).toBe(1)
      }))

    // How a mid-stream drop surfaces: NOT as an `error` part — the stream
    // itself errors (reader.read() rejects) after the parts already received,
    // with no `finish` part.
    it.live("drop mid-stream: the first text delta arrives, then the stream errors (retryable APICallError, no finish part)", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ drop: "mid-stream", reply: { text: "Partial answer here" } }])
        const { parts, error } = yield* stream(model, { prompt: ask })
        expect(textDeltas(parts)).toEqual(["Partial "])
        expect(parts.map((part) => part.type)).not.toContain("finish")
        expect(parts.map((part) => part.type)).not.toContain("error")
        const failure = asApiCallError(error)
        expect([failure.message, failure.statusCode, failure.isRetryable]).toEqual(["Failed to process successful response", 200, true])
        expect(String(failure.cause)).toBe("TypeError: terminated")
        expect(server.calls).toBe(1)
      }))

    it.live("drop mid-body of a JSON answer: doGenerate fails with a retryable APICallError", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ drop: "mid-stream" }])
        const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
        expect(error.isRetryable).toBe(true)
        expect(server.calls).toBe(1)
      }))

    it.live("a delayed turn and an AbortSignal timeout: the call aborts early, and the server keeps serving", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ delayMs: 5_000, then: { text: "Too late" } }, { text: "Still here" }])
        const started = Date.now()
        const error = yield* failureOf(() => model.doGenerate({ prompt: ask, abortSignal: AbortSignal.timeout(50) }))
        expect(Date.now() - started).toBeLessThan(1_000)
        expect(error).toMatchObject({ name: "TimeoutError" })
        expect(server.calls).toBe(1)
        const next = yield* generate(model, { prompt: ask })
        expect(textIn(next.content)).toBe("Still here")
        expect(server.calls).toBe(2)
      }))

    it.live("an exhausted script answers 500 naming the request", () =>
      Effect.gen(function*() {
        const { model, server } = yield* setup(api, [{ text: "Only answer" }])
        yield* generate(model, { prompt: ask })
        const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
        expect(error.statusCode).toBe(500)
        expect(error.message).toBe(
          `openaiServer: script exhausted: request #2 (POST ${endpoint[api]}) has no scripted turn (1 scripted)`
        )
        expect(server.calls).toBe(2)
      }))
  })
}

// ---------------------------------------------------------------------------
// The server itself
// ---------------------------------------------------------------------------

describe("openaiServer", () => {
  it.live("one script is shared by both endpoints; default ids follow the request number", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "From chat" }, { text: "From responses" }])
      const chat = yield* generate(modelFor(server, "chat"), { prompt: ask })
      const responses = yield* generate(modelFor(server, "responses"), { prompt: ask })
      expect([textIn(chat.content), chat.response?.id]).toEqual(["From chat", "chatcmpl-1"])
      expect([textIn(responses.content), responses.response?.id]).toEqual(["From responses", "resp_2"])
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/responses"])
    }))

  it.live("a turn can be a function of the request", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([
        (request) => ({ text: `You sent ${JSON.stringify(request.body).length} bytes to ${request.path}` })
      ])
      const result = yield* generate(modelFor(server, "chat"), { prompt: ask })
      expect(textIn(result.content)).toBe(
        `You sent ${JSON.stringify(server.requests[0].body).length} bytes to /v1/chat/completions`
      )
    }))

  it.live("a turn function that throws is answered with a 500 naming the request; the server keeps serving", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([
        () => {
          throw new Error("no answer for this")
        },
        { text: "Fine" }
      ])
      const model = modelFor(server, "chat")
      const error = asApiCallError(yield* failureOf(() => model.doGenerate({ prompt: ask })))
      expect([error.statusCode, error.message]).toEqual([500, "openaiServer: the turn for request #1 threw: no answer for this"])
      expect(textIn((yield* generate(model, { prompt: ask })).content)).toBe("Fine")
    }))

  it.live("unknown routes answer 404 and consume no turn", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "Unused" }])
      const response = yield* Effect.promise(() => fetch(`${server.baseURL}/models`))
      expect(response.status).toBe(404)
      expect([server.calls, server.requests.length]).toEqual([0, 1])
    }))

  it.live("closing the scope stops the server and breaks open connections", () =>
    Effect.gen(function*() {
      const { baseURL, pending } = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* OpenAiServer.make([{ delayMs: 10_000, then: { text: "Never sent" } }])
        const model = modelFor(server, "chat")
        const pending = Promise.resolve(model.doGenerate({ prompt: ask })).then(() => "answered", (error: unknown) => error)
        yield* eventually(() => server.calls === 1)
        return { baseURL: server.baseURL, pending }
      }))
      const started = Date.now()
      const error = yield* Effect.promise(() => pending)
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(asApiCallError(error).isRetryable).toBe(true)
      const refused = yield* failureOf(() => fetch(`${baseURL}/chat/completions`, { method: "POST", body: "{}" }))
      expect(refused).toBeInstanceOf(TypeError)
    }))

  it.live("the Promise helper starts and closes the same server", () =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => OpenAiServer.start([{ text: "Plain" }]))
      const result = yield* generate(modelFor(server, "responses"), { prompt: ask })
      yield* Effect.promise(() => server.close())
      expect(textIn(result.content)).toBe("Plain")
      expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    }))
})

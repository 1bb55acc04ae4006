/**
 * `ChatModel.fromAiSdk` / `AiSdkModel.make` with the three AI SDK provider
 * specifications, end to end over HTTP to the local OpenAI-compatible server
 * (test/support/openaiServer.ts): the real `@ai-sdk/openai` 2.x (spec v2,
 * `ai` 5), 3.x (v3, `ai` 6) and 4.x (v4, `ai` 7) clients, installed side by
 * side under npm aliases. One table row per version; for every row and both
 * APIs (Chat Completions `.chat(id)`, Responses `.responses(id)`):
 * - a two-round tool loop through `Chain.run` and through `Chain.stream`:
 *   the exact requests the server received (tools' JSON Schemas, tool calls,
 *   tool results: JSON, text, and failures as `{ "error": … }`), the final
 *   chain, and its usage;
 * - finish reasons (tool-calls, stop, length, content-filter) and usage
 *   (cached and reasoning tokens included) of whole and streamed responses;
 * - a 429 with `retry-after-ms` and a 400, through `Chain.run` and
 *   `Chain.stream`: the same `ModelCallFailed` fields.
 * Then: the three versions end in the same chain, part for part; anything
 * else is refused with `InvalidInput`; and the type check (this file is
 * type-checked by `npx tsc --noEmit`): the three versions' models, typed by
 * the providers' own nested `@ai-sdk/provider` copies, are accepted, other
 * values are not.
 */
import { createOpenAI as createV4 } from "@ai-sdk/openai"
import { createOpenAI as createV2 } from "@ai-sdk/openai-v2"
import { createOpenAI as createV3 } from "@ai-sdk/openai-v3"
import type { LanguageModelV4 } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { transcript } from "../support/transcript.ts"

// -----------------------------------------------------------------------------
// Tools: results that go back as JSON, as text, and two failures
// -----------------------------------------------------------------------------

const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number })
})
const GetTime = Tool.make("get_time", {
  description: "The local time in a time zone",
  parameters: Schema.Struct({ zone: Schema.String }),
  success: Schema.String
})
const Book = Tool.make("book", {
  description: "Books a hotel",
  parameters: Schema.Struct({ hotel: Schema.String, nights: Schema.optionalKey(Schema.Finite) }),
  success: Schema.String,
  failure: Schema.Struct({ reason: Schema.String })
})
const Cancel = Tool.make("cancel", {
  description: "Cancels a booking",
  parameters: Schema.Struct({ id: Schema.Finite }),
  success: Schema.String,
  failure: Schema.String
})
const toolkit = Toolkit.make(GetWeather, GetTime, Book, Cancel)
const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }),
  get_time: ({ zone }) => Effect.succeed(`14:00 in ${zone}`),
  book: () => Effect.fail({ reason: "full" }),
  cancel: () => Effect.fail("no such booking")
})

// -----------------------------------------------------------------------------
// The table: one row per provider specification
// -----------------------------------------------------------------------------

type Api = "chat" | "responses"
const apis: ReadonlyArray<Api> = ["chat", "responses"]

interface Row {
  readonly version: "v2" | "v3" | "v4"
  readonly package: string
  /** The real client's model for `api`, pointed at `server`. */
  readonly model: (server: OpenAiServer.OpenAiServer, api: Api) => AiSdkModel.LanguageModel
}

const table: ReadonlyArray<Row> = [
  {
    version: "v2",
    package: "@ai-sdk/openai 2.x (ai 5)",
    model: (server, api) => {
      const provider = createV2({ baseURL: server.baseURL, apiKey: "test" })
      return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
    }
  },
  {
    version: "v3",
    package: "@ai-sdk/openai 3.x (ai 6)",
    model: (server, api) => {
      const provider = createV3({ baseURL: server.baseURL, apiKey: "test" })
      return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
    }
  },
  {
    version: "v4",
    package: "@ai-sdk/openai 4.x (ai 7)",
    model: (server, api) => {
      const provider = createV4({ baseURL: server.baseURL, apiKey: "test" })
      return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
    }
  }
]

// -----------------------------------------------------------------------------
// The wire: what the server must receive, whatever the version
// -----------------------------------------------------------------------------

const schemas = {
  get_weather: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: true },
  get_time: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"], additionalProperties: true },
  book: {
    type: "object",
    properties: { hotel: { type: "string" }, nights: { type: "number" } },
    required: ["hotel"],
    additionalProperties: true
  },
  cancel: { type: "object", properties: { id: { type: "number" } }, required: ["id"], additionalProperties: true }
}
const descriptions = {
  get_weather: "The weather in a city",
  get_time: "The local time in a time zone",
  book: "Books a hotel",
  cancel: "Cancels a booking"
}
const names = ["get_weather", "get_time", "book", "cancel"] as const

const wireTools = (api: Api) =>
  names.map((name) =>
    api === "chat"
      ? { type: "function", function: { name, description: descriptions[name], parameters: schemas[name] } }
      : { type: "function", name, description: descriptions[name], parameters: schemas[name] }
  )

/** A conversation as sent: the user's question, then rounds of tool calls and their results. */
type Line =
  | { readonly user: string }
  | { readonly calls: ReadonlyArray<readonly [id: string, name: string, args: string]> }
  | { readonly results: ReadonlyArray<readonly [id: string, output: string]> }

const wire = (api: Api, lines: ReadonlyArray<Line>): ReadonlyArray<object> =>
  lines.flatMap((line): ReadonlyArray<object> => {
    if ("user" in line) {
      return [api === "chat" ? { role: "user", content: line.user } : { role: "user", content: [{ type: "input_text", text: line.user }] }]
    }
    if ("calls" in line) {
      return api === "chat"
        ? [{
          role: "assistant",
          content: null,
          tool_calls: line.calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } }))
        }]
        : line.calls.map(([id, name, args]) => ({ type: "function_call", call_id: id, name, arguments: args }))
    }
    return line.results.map(([id, output]) =>
      api === "chat" ? { role: "tool", tool_call_id: id, content: output } : { type: "function_call_output", call_id: id, output }
    )
  })

const body = (api: Api, lines: ReadonlyArray<Line>, stream: boolean) => ({
  model: "gpt-test",
  ...(api === "chat" ? { messages: wire(api, lines) } : { input: wire(api, lines) }),
  tools: wireTools(api),
  tool_choice: "auto",
  ...(stream ? (api === "chat" ? { stream: true, stream_options: { include_usage: true } } : { stream: true }) : {})
})

/** `tool` without its `strict` flag, which must be `false` or absent. */
const withoutStrict = ({ strict, ...tool }: Record<string, unknown>): Record<string, unknown> => {
  expect([undefined, false]).toContain(strict)
  return tool
}

/**
 * The bodies the server received, each tool's `strict` flag taken out: each
 * package sends its own default (2.x `false`, 3.x none, 4.x `false` on the
 * Responses API), which the bridge does not set. Anything but `false` or
 * none fails.
 */
const received = (server: OpenAiServer.OpenAiServer): ReadonlyArray<unknown> =>
  server.requests.map((request) => {
    const sent = request.body as { readonly tools?: ReadonlyArray<Record<string, unknown>> }
    return {
      ...sent,
      tools: sent.tools?.map((tool) =>
        typeof tool.function === "object" && tool.function !== null
          ? { ...tool, function: withoutStrict(tool.function as Record<string, unknown>) }
          : withoutStrict(tool)
      )
    }
  })

// -----------------------------------------------------------------------------
// The two-round loop
// -----------------------------------------------------------------------------

const question = "Weather and time in Paris, and book the Ritz?"
const finalText = "Paris: 21 °C at 14:00. The Ritz is full."

const script: ReadonlyArray<OpenAiServer.ServerTurn> = [
  {
    toolCalls: [{ id: "c1", name: "get_weather", arguments: { city: "Paris" } }, { id: "c2", name: "get_time", arguments: { zone: "CET" } }],
    usage: { input: 20, output: 8, cached: 4, reasoning: 2 }
  },
  { toolCalls: [{ id: "c3", name: "book", arguments: { hotel: "Ritz", nights: 2 } }, { id: "c4", name: "cancel", arguments: { id: 3 } }] },
  { text: finalText, usage: { input: 60, output: 12, cached: 16, reasoning: 3 } }
]

const round1: ReadonlyArray<Line> = [{ user: question }]
const round2: ReadonlyArray<Line> = [
  ...round1,
  { calls: [["c1", "get_weather", "{\"city\":\"Paris\"}"], ["c2", "get_time", "{\"zone\":\"CET\"}"]] },
  { results: [["c1", "{\"city\":\"Paris\",\"celsius\":21}"], ["c2", "14:00 in CET"]] }
]
const round3: ReadonlyArray<Line> = [
  ...round2,
  { calls: [["c3", "book", "{\"hotel\":\"Ritz\",\"nights\":2}"], ["c4", "cancel", "{\"id\":3}"]] },
  // Failures go as 4.x sends them, for every version: the 2.x/3.x clients alone would send the bare values.
  { results: [["c3", "{\"error\":{\"reason\":\"full\"}}"], ["c4", "{\"error\":\"no such booking\"}"]] }
]

const finalTranscript = [
  `user: ${question}`,
  "assistant: call get_weather#c1 {\"city\":\"Paris\"} | call get_time#c2 {\"zone\":\"CET\"}",
  "tool: ok get_weather#c1 {\"city\":\"Paris\",\"celsius\":21} | ok get_time#c2 \"14:00 in CET\"",
  "assistant: call book#c3 {\"hotel\":\"Ritz\",\"nights\":2} | call cancel#c4 {\"id\":3}",
  "tool: failed book#c3 {\"reason\":\"full\"} | failed cancel#c4 \"no such booking\"",
  `assistant: ${finalText}`
]

/** The usage of the final turn, as the chain keeps it. */
const finalUsage = {
  inputTokens: { uncached: 44, total: 60, cacheRead: 16, cacheWrite: undefined },
  outputTokens: { total: 12, text: 9, reasoning: 3 }
}

const usageOf = (usage: { readonly inputTokens: object; readonly outputTokens: object } | undefined) =>
  usage === undefined ? undefined : { inputTokens: { ...usage.inputTokens }, outputTokens: { ...usage.outputTokens } }

/** The chain `how` ends in, with the requests the server received. */
const loop = (row: Row, api: Api, how: "run" | "stream") =>
  Effect.gen(function*() {
    const server = yield* OpenAiServer.make(script)
    const layer = ChatModel.fromAiSdk(row.model(server, api))
    const chain = Chain.make({ user: question, toolkit })
    const options = { mode: Mode.whileNeedsResponse }
    const final = how === "run"
      ? (yield* Chain.run(chain, options).pipe(Effect.provide([layer, handlers]))).chain
      : yield* Chain.stream(chain, options).pipe(
        Stream.runCollect,
        Effect.flatMap((events) => {
          const last = events.at(-1)
          return last?._tag === "RunFinished" ? Chain.decode(last.chain, { toolkit }) : Effect.die(new Error("no RunFinished"))
        }),
        Effect.provide([layer, handlers])
      )
    return { final, requests: received(server) }
  })

/** A chain as JSON, part for part. */
const messagesOf = (chain: Chain.Chain) => JSON.parse(JSON.stringify(Prompt.fromMessages(chain.messages))) as unknown

// -----------------------------------------------------------------------------
// Finish reasons and usage of single calls
// -----------------------------------------------------------------------------

const turnUsage = { input: 12, output: 7, cached: 4, reasoning: 2 }
const finishes: ReadonlyArray<readonly [OpenAiServer.ServerTurn, string]> = [
  [{ toolCalls: [{ id: "c1", name: "get_weather", arguments: { city: "Paris" } }], usage: turnUsage }, "tool-calls"],
  [{ text: "Sunny.", usage: turnUsage }, "stop"],
  [{ text: "Sun", finishReason: "length", usage: turnUsage }, "length"],
  [{ text: "…", finishReason: "content_filter", usage: turnUsage }, "content-filter"]
]
const turnUsageSeen = {
  inputTokens: { uncached: 8, total: 12, cacheRead: 4, cacheWrite: undefined },
  outputTokens: { total: 7, text: 5, reasoning: 2 }
}

// -----------------------------------------------------------------------------
// Failures
// -----------------------------------------------------------------------------

const faults: ReadonlyArray<readonly [OpenAiServer.HttpFault, object]> = [
  [
    { status: 429, headers: { "retry-after-ms": "60" } },
    { status: 429, retryable: true, retryAfterMillis: 60, description: "Scripted error 429" }
  ],
  [
    { status: 400, body: OpenAiServer.errorBody("Unknown parameter: 'foo'", "invalid_request_error", "unknown_parameter") },
    { status: 400, retryable: false, retryAfterMillis: undefined, description: "Unknown parameter: 'foo'" }
  ]
]

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  const error = reason?._tag === "Fail" ? reason.error : undefined
  if (!(error instanceof LoopError.RunError) || !(error.reason instanceof LoopError.ModelCallFailed)) {
    throw new Error(`expected a RunError for a ModelCallFailed, got ${String(error)}`)
  }
  const failed = error.reason
  return { status: failed.status, retryable: failed.retryable, retryAfterMillis: failed.retryAfterMillis, description: failed.description }
}

// -----------------------------------------------------------------------------
// The rows
// -----------------------------------------------------------------------------

for (const row of table) {
  for (const api of apis) {
    describe(`${row.version}: ${row.package}, ${api} API`, () => {
      it.live("a two-round tool loop: Chain.run and Chain.stream send the exact requests and end in the same chain", () =>
        Effect.gen(function*() {
          for (const how of ["run", "stream"] as const) {
            const { final, requests } = yield* loop(row, api, how)
            const stream = how === "stream"
            expect(requests).toEqual([body(api, round1, stream), body(api, round2, stream), body(api, round3, stream)])
            expect(transcript(final.messages)).toEqual(finalTranscript)
            expect(Chain.text(final)).toBe(finalText)
            expect(usageOf(final.lastResponse?.usage)).toEqual(finalUsage)
            // The second round's tools both failed: one round with failures.
            expect([final.runCount, final.failureCount]).toEqual([3, 1])
          }
          const [run, stream] = [yield* loop(row, api, "run"), yield* loop(row, api, "stream")]
          expect(messagesOf(stream.final)).toEqual(messagesOf(run.final))
        }))

      it.live("finish reasons and usage (cached and reasoning tokens) of whole and streamed responses", () =>
        Effect.gen(function*() {
          const server = yield* OpenAiServer.make(finishes.flatMap(([turn]) => [turn, turn]))
          const model = yield* AiSdkModel.make(row.model(server, api))
          const request = { prompt: Prompt.make("Weather?"), tools: [GetWeather], toolChoice: "auto" as const }
          const seen = []
          for (const _ of finishes) {
            for (const parts of [yield* model.generate(request), yield* Stream.runCollect(model.stream(request))]) {
              const finish = parts.find((part) => part.type === "finish")
              seen.push(finish?.type === "finish" ? [finish.reason, usageOf(finish.usage)] : undefined)
            }
          }
          expect(seen).toEqual(finishes.flatMap(([, reason]) => [[reason, turnUsageSeen], [reason, turnUsageSeen]]))
        }))

      it.live("a 429 and a 400 are the same ModelCallFailed through Chain.run and Chain.stream", () =>
        Effect.gen(function*() {
          for (const [fault, expected] of faults) {
            const server = yield* OpenAiServer.make([fault, fault])
            const layer = Layer.merge(ChatModel.fromAiSdk(row.model(server, api)), handlers)
            const chain = Chain.make({ user: "Hi", toolkit })
            const run = yield* Effect.exit(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(layer)))
            const stream = yield* Effect.exit(
              Stream.runDrain(Chain.stream(chain, { mode: Mode.whileNeedsResponse })).pipe(Effect.provide(layer))
            )
            expect({ run: failureOf(run), stream: failureOf(stream) }).toEqual({ run: expected, stream: expected })
            expect(server.calls).toBe(2)
          }
        }))
    })
  }
}

describe("every version alike", () => {
  for (const api of apis) {
    it.live(`${api} API: the three versions end in the same chain, part for part`, () =>
      Effect.gen(function*() {
        const chains = []
        for (const row of table) chains.push(messagesOf((yield* loop(row, api, "run")).final))
        expect(chains[0]).toEqual(chains[2])
        expect(chains[1]).toEqual(chains[2])
      }))
  }

  it.effect("anything else is refused with InvalidInput naming the accepted versions", () =>
    Effect.gen(function*() {
      const throwing = Object.defineProperty({}, "specificationVersion", {
        get: () => {
          throw new Error("no")
        }
      })
      const values: ReadonlyArray<readonly [unknown, string]> = [
        [{ specificationVersion: "v1", provider: "p", modelId: "m", doGenerate: () => {}, doStream: () => {} }, "v2, v3 or v4"],
        [{ specificationVersion: "v5" }, "v2, v3 or v4"],
        [{}, "v2, v3 or v4"],
        [null, "v2, v3 or v4"],
        ["gpt-4.1-mini", "v2, v3 or v4"],
        [throwing, "v2, v3 or v4"],
        [{ specificationVersion: "v3", provider: "p", modelId: "m" }, "has doGenerate and doStream methods"],
        [{ specificationVersion: "v4", doGenerate: () => {} }, "has doGenerate and doStream methods"]
      ]
      for (const [value, rule] of values) {
        const error = yield* Effect.flip(AiSdkModel.make(value as never))
        expect(error).toBeInstanceOf(LoopError.InvalidInput)
        expect([error.field, error.rule.includes(rule)]).toEqual(["model", true])
        const layered = yield* Effect.flip(Layer.build(ChatModel.fromAiSdk(value as never)).pipe(Effect.scoped))
        expect(layered).toBeInstanceOf(LoopError.InvalidInput)
      }
    }))

  it("types: a v2, a v3 and a v4 model are accepted; other values are type errors", () => {
    // Each typed by its package's own copy of @ai-sdk/provider (2.0, 3.0 nested; 4.0 at the top).
    const v2 = createV2({ apiKey: "x" }).chat("m")
    const v3 = createV3({ apiKey: "x" }).responses("m")
    const v4 = createV4({ apiKey: "x" }).chat("m")
    // Real types, not `any`: an older model is no v4 one.
    // @ts-expect-error: a v2 model is not a LanguageModelV4
    const notV4a: LanguageModelV4 = v2
    // @ts-expect-error: a v3 model is not a LanguageModelV4
    const notV4b: LanguageModelV4 = v3
    const layers = [ChatModel.fromAiSdk(v2), ChatModel.fromAiSdk(v3), ChatModel.fromAiSdk(v4)]
    const made = [AiSdkModel.make(v2), AiSdkModel.make(v3), AiSdkModel.make(v4)]
    const typed: ReadonlyArray<AiSdkModel.LanguageModel> = [v2, v3, v4]
    expect([layers.length, made.length, typed.length, notV4a, notV4b]).toEqual([3, 3, 3, v2, v3])
    const refused = () => [
      // @ts-expect-error: a v1 model (ai 4) is not accepted
      ChatModel.fromAiSdk({ specificationVersion: "v1", provider: "p", modelId: "m", doGenerate: () => {}, doStream: () => {} }),
      // @ts-expect-error: nor is a plain object
      ChatModel.fromAiSdk({}),
      // @ts-expect-error: nor a model id
      AiSdkModel.make("gpt-4.1-mini"),
      // @ts-expect-error: nor a v4 model without its methods
      AiSdkModel.make({ specificationVersion: "v4", provider: "p", modelId: "m" })
    ]
    expect(refused).toBeTypeOf("function")
  })
})

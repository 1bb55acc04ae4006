/**
 * End to end over real HTTP: loopwork → `ChatModel.fromAiSdk` → the real
 * `@ai-sdk/openai` client (`.chat(id)` for Chat Completions, `.responses(id)`
 * for the Responses API) → test/support/openaiServer.ts on 127.0.0.1.
 *
 * Every test asserts the exact requests the server received (the tools' JSON
 * Schemas, the assistant tool calls and the tool-result messages, in order):
 * - a `whileNeedsResponse` loop with two tools over two rounds, via
 *   `Chain.run`, and the same via `Chain.stream` (events, usage, and the final
 *   chain equal to `Chain.run`'s);
 * - an ensemble whose agent's `llm` is the bridge layer;
 * - faults: 429 with `retry-after-ms` / `retry-after`, 500, 400, a connection
 *   dropped mid-stream, malformed tool-call JSON, a timeout — each ends in a
 *   typed error or a recovered run with the chain intact;
 * - secrets: a 401 whose body echoes the `Authorization` header — the key
 *   appears in no error message, printout, event or span;
 * - a prompt the real client cannot serialise (tool arguments nested 100,000
 *   levels deep): one attempt, not retried, nothing sent.
 *
 * Delays are real but short (`it.live`); the exact schedule timings are
 * unit-tested under TestClock in test/ai-sdk/internal/errors.test.ts.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { APICallError } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { inspect } from "node:util"
import { Cause, Effect, Exit, Layer, Schema, Stream, Tracer } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { Chain, LoopError, Mode, ModelRetry } from "../../src/index.ts"
import type { RunEvent } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { transcript } from "../support/transcript.ts"
import { recording } from "../support/recordingTracer.ts"

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number })
})
const GetTime = Tool.make("get_time", {
  description: "The local time in a time zone",
  parameters: Schema.Struct({ zone: Schema.String, format: Schema.optionalKey(Schema.Literals(["12h", "24h"])) }),
  success: Schema.String
})
const toolkit = Toolkit.make(GetWeather, GetTime)
const celsius: Record<string, number> = { Paris: 21, Lyon: 19 }
const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: celsius[city] ?? 15 }),
  get_time: ({ zone }) => Effect.succeed(`14:00 in ${zone}`)
})

// -----------------------------------------------------------------------------
// The client, and the wire format each API expects
// -----------------------------------------------------------------------------

type Api = "chat" | "responses"
const apis: ReadonlyArray<Api> = ["chat", "responses"]
const endpoint: Record<Api, string> = { chat: "/v1/chat/completions", responses: "/v1/responses" }

/** The bridge layer: the real client for `api`, pointed at `server`. */
const bridge = (server: OpenAiServer.OpenAiServer, api: Api, options?: AiSdkModel.Options) => {
  const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
  return ChatModel.fromAiSdk(api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test"), options)
}

/** The JSON Schemas of the tools' parameters, as the server must receive them. */
const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: true
}
const timeSchema = {
  type: "object",
  properties: { zone: { type: "string" }, format: { type: "string", enum: ["12h", "24h"] } },
  required: ["zone"],
  additionalProperties: true
}
const wireTools: Record<Api, ReadonlyArray<object>> = {
  chat: [
    { type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weatherSchema } },
    { type: "function", function: { name: "get_time", description: "The local time in a time zone", parameters: timeSchema } }
  ],
  responses: [
    { type: "function", name: "get_weather", description: "The weather in a city", parameters: weatherSchema, strict: false },
    { type: "function", name: "get_time", description: "The local time in a time zone", parameters: timeSchema, strict: false }
  ]
}

/** A conversation as sent, independent of the API: one entry per loopwork message. */
type Line =
  | { readonly system: string }
  | { readonly user: string }
  | { readonly assistant?: string; readonly calls: ReadonlyArray<readonly [id: string, name: string, args: string]> }
  | { readonly results: ReadonlyArray<readonly [id: string, output: string]> }

/** `lines` as `api` sends them: Chat Completions `messages`, or Responses `input` items. */
const wire = (api: Api, lines: ReadonlyArray<Line>): ReadonlyArray<object> =>
  lines.flatMap((line): ReadonlyArray<object> => {
    if ("system" in line) return [{ role: "system", content: line.system }]
    if ("user" in line) {
      return [api === "chat" ? { role: "user", content: line.user } : { role: "user", content: [{ type: "input_text", text: line.user }] }]
    }
    if ("calls" in line) {
      return api === "chat"
        ? [{
          role: "assistant",
          content: line.assistant ?? null,
          tool_calls: line.calls.map(([id, name, args]) => ({ id, type: "function", function: { name, arguments: args } }))
        }]
        : [
          ...(line.assistant === undefined ? [] : [{ role: "assistant", content: line.assistant }]),
          ...line.calls.map(([id, name, args]) => ({ type: "function_call", call_id: id, name, arguments: args }))
        ]
    }
    return line.results.map(([id, output]) =>
      api === "chat" ? { role: "tool", tool_call_id: id, content: output } : { type: "function_call_output", call_id: id, output }
    )
  })

/** The exact request body for `lines`. */
const body = (api: Api, lines: ReadonlyArray<Line>, options: { readonly stream?: boolean; readonly tools?: boolean } = {}) => ({
  model: "gpt-test",
  ...(api === "chat" ? { messages: wire(api, lines) } : { input: wire(api, lines) }),
  ...(options.tools === false ? {} : { tools: wireTools[api], tool_choice: "auto" }),
  ...(options.stream === true ? (api === "chat" ? { stream: true, stream_options: { include_usage: true } } : { stream: true }) : {})
})

const bodies = (server: OpenAiServer.OpenAiServer) => server.requests.map((request) => request.body)

/** A turn that notes (real) time when its request arrives. */
const stamped = (times: Array<number>, turn: OpenAiServer.ServerTurn): OpenAiServer.ServerTurn => () => {
  times.push(performance.now())
  return turn
}

/** The RunError a run failed with (a layer's InvalidInput is a test failure). */
const runError = (error: LoopError.RunError | LoopError.InvalidInput): LoopError.RunError => {
  if (error._tag !== "RunError") throw new Error(`expected a RunError, got ${error._tag}: ${error.message}`)
  return error
}

const reasonOf = (error: LoopError.RunError): LoopError.ModelCallFailed => {
  if (error.reason._tag !== "ModelCallFailed") throw new Error(`expected ModelCallFailed, got ${error.reason._tag}`)
  return error.reason as LoopError.ModelCallFailed
}

/** Every event of a streamed run and the RunError it failed with (undefined when it finished). */
const collect = <E, R>(events: Stream.Stream<RunEvent.RunEvent, E, R>) =>
  Effect.gen(function*() {
    const seen: Array<RunEvent.RunEvent> = []
    const exit = yield* Effect.exit(Stream.runForEach(events, (event) => Effect.sync(() => seen.push(event))))
    return { events: seen, error: exit._tag === "Failure" ? exit.cause : undefined }
  })

/** An event list in brief: tags, with the text deltas and failures spelled out. */
const brief = (events: ReadonlyArray<RunEvent.RunEvent>) =>
  events.flatMap((event) => {
    switch (event._tag) {
      case "TextDelta":
        return event.delta === "" ? [] : [`delta ${JSON.stringify(event.delta)}`]
      case "ModelCallFailed":
        return [`failed #${event.call}.${event.attempt}: ${event.message}`]
      case "ToolCallStarted":
      case "ToolCallFinished":
        return [`${event._tag} ${event.id}`]
      default:
        return [event._tag]
    }
  })

const finishedChain = (events: ReadonlyArray<RunEvent.RunEvent>): unknown => {
  const last = events.at(-1)
  if (last?._tag !== "RunFinished") throw new Error(`expected RunFinished last, got ${last?._tag}`)
  return last.chain
}

// -----------------------------------------------------------------------------
// The two-round conversation
// -----------------------------------------------------------------------------

const system = "You answer weather questions."
const question = "Weather in Paris and Lyon, and the time in Paris?"
const finalText = "Paris: 21 °C at 14:00. Lyon: 19 °C."

/** Ids are explicit (the server's defaults follow the request number, which a retried request shifts). */
const twoRounds: ReadonlyArray<OpenAiServer.Reply> = [
  {
    text: "Let me check.",
    toolCalls: [
      { id: "call_1_0", name: "get_weather", arguments: { city: "Paris" } },
      { id: "call_1_1", name: "get_time", arguments: { zone: "Europe/Paris", format: "24h" } }
    ],
    usage: { input: 31, output: 12 }
  },
  { toolCalls: [{ id: "call_2_0", name: "get_weather", arguments: { city: "Lyon" } }], usage: { input: 58, output: 9 } },
  { text: finalText, usage: { input: 80, output: 14 } }
]

const request1: ReadonlyArray<Line> = [{ system }, { user: question }]
const request2: ReadonlyArray<Line> = [
  ...request1,
  {
    assistant: "Let me check.",
    calls: [["call_1_0", "get_weather", "{\"city\":\"Paris\"}"], ["call_1_1", "get_time", "{\"zone\":\"Europe/Paris\",\"format\":\"24h\"}"]]
  },
  { results: [["call_1_0", "{\"city\":\"Paris\",\"celsius\":21}"], ["call_1_1", "14:00 in Europe/Paris"]] }
]
const request3: ReadonlyArray<Line> = [
  ...request2,
  { calls: [["call_2_0", "get_weather", "{\"city\":\"Lyon\"}"]] },
  { results: [["call_2_0", "{\"city\":\"Lyon\",\"celsius\":19}"]] }
]

const finalTranscript = [
  `system: ${system}`,
  `user: ${question}`,
  "assistant: Let me check. | call get_weather#call_1_0 {\"city\":\"Paris\"} | call get_time#call_1_1 {\"zone\":\"Europe/Paris\",\"format\":\"24h\"}",
  "tool: ok get_weather#call_1_0 {\"city\":\"Paris\",\"celsius\":21} | ok get_time#call_1_1 \"14:00 in Europe/Paris\"",
  "assistant: call get_weather#call_2_0 {\"city\":\"Lyon\"}",
  "tool: ok get_weather#call_2_0 {\"city\":\"Lyon\",\"celsius\":19}",
  `assistant: ${finalText}`
]

const weatherChain = () => Chain.make({ system, user: question, toolkit })

const runOnce = (api: Api, turns: ReadonlyArray<OpenAiServer.ServerTurn>, options: Partial<Chain.RunOptions<ChatModel.ChatModel>> = {}) =>
  Effect.gen(function*() {
    const server = yield* OpenAiServer.make(turns)
    const outcome = yield* Chain.run(weatherChain(), { mode: Mode.whileNeedsResponse, ...options }).pipe(
      Effect.provide([bridge(server, api), handlers])
    )
    return { server, outcome }
  })

for (const api of apis) {
  describe(`${api} API: a two-tool, two-round loop`, () => {
    it.live("Chain.run: the exact requests (tool schemas, tool calls and results in order) and the final chain", () =>
      Effect.gen(function*() {
        const { outcome, server } = yield* runOnce(api, twoRounds)
        expect(outcome._tag === "Ok" && outcome.reason).toBe("done")
        expect(Chain.text(outcome.chain)).toBe(finalText)
        expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(Array(3).fill(`POST ${endpoint[api]}`))
        expect(server.requests[0].headers.authorization).toBe("Bearer test")
        expect(bodies(server)).toEqual([body(api, request1), body(api, request2), body(api, request3)])
        expect(transcript(outcome.chain.messages)).toEqual(finalTranscript)
        expect([outcome.chain.runCount, outcome.chain.failureCount]).toEqual([3, 0])
        expect(outcome.chain.lastResponse?.usage?.inputTokens.total).toBe(80)
      }))

    it.live("Chain.stream: text deltas, usage per call, tool events; the final chain equals Chain.run's", () =>
      Effect.gen(function*() {
        const { outcome } = yield* runOnce(api, twoRounds)
        const server = yield* OpenAiServer.make(twoRounds)
        const { error, events } = yield* collect(
          Chain.stream(weatherChain(), { mode: Mode.whileNeedsResponse }).pipe(Stream.provide(Layer.merge(bridge(server, api), handlers)))
        )
        expect(error).toBeUndefined()
        // the same requests as Chain.run, streaming
        expect(bodies(server)).toEqual([request1, request2, request3].map((lines) => body(api, lines, { stream: true })))
        expect(brief(events)).toEqual([
          "RunStarted",
          "ModelCallStarted",
          "delta \"Let \"",
          "delta \"me \"",
          "delta \"check.\"",
          "ModelCallFinished",
          "ToolCallStarted call_1_0",
          "ToolCallFinished call_1_0",
          "ToolCallStarted call_1_1",
          "ToolCallFinished call_1_1",
          "ModelCallStarted",
          "ModelCallFinished",
          "ToolCallStarted call_2_0",
          "ToolCallFinished call_2_0",
          "ModelCallStarted",
          "delta \"Paris: \"",
          "delta \"21 \"",
          "delta \"°C \"",
          "delta \"at \"",
          "delta \"14:00. \"",
          "delta \"Lyon: \"",
          "delta \"19 \"",
          "delta \"°C.\"",
          "ModelCallFinished",
          "RunFinished"
        ])
        const finished = events.flatMap((event) => event._tag === "ModelCallFinished" ? [event] : [])
        // the deltas of each call join to its text
        for (const call of finished) {
          const joined = events.flatMap((event) => event._tag === "TextDelta" && event.call === call.call ? [event.delta] : []).join("")
          expect(joined).toBe(call.text)
        }
        expect(finished.map((call) => ({ call: call.call, text: call.text, finishReason: call.finishReason, usage: call.usage, toolCalls: call.toolCalls })))
          .toEqual([
            {
              call: 1,
              text: "Let me check.",
              finishReason: "tool-calls",
              usage: { inputTokens: 31, outputTokens: 12 },
              toolCalls: [{ id: "call_1_0", name: "get_weather" }, { id: "call_1_1", name: "get_time" }]
            },
            {
              call: 2,
              text: "",
              finishReason: "tool-calls",
              usage: { inputTokens: 58, outputTokens: 9 },
              toolCalls: [{ id: "call_2_0", name: "get_weather" }]
            },
            { call: 3, text: finalText, finishReason: "stop", usage: { inputTokens: 80, outputTokens: 14 }, toolCalls: [] }
          ])
        expect(events.flatMap((event) => event._tag === "ToolCallStarted" ? [[event.id, event.name, event.params]] : [])).toEqual([
          ["call_1_0", "get_weather", { city: "Paris" }],
          ["call_1_1", "get_time", { zone: "Europe/Paris", format: "24h" }],
          ["call_2_0", "get_weather", { city: "Lyon" }]
        ])
        expect(events.flatMap((event) => event._tag === "ToolCallFinished" ? [[event.id, event.status, event.result]] : [])).toEqual([
          ["call_1_0", "succeeded", { city: "Paris", celsius: 21 }],
          ["call_1_1", "succeeded", "14:00 in Europe/Paris"],
          ["call_2_0", "succeeded", { city: "Lyon", celsius: 19 }]
        ])
        const last = events.at(-1)
        expect(last?._tag === "RunFinished" && [last.reason, last.text]).toEqual(["done", finalText])
        // the streamed run's chain document is the one Chain.run produces
        expect(finishedChain(events)).toEqual(yield* Chain.encode(outcome.chain))
      }))
  })
}

// -----------------------------------------------------------------------------
// Ensemble
// -----------------------------------------------------------------------------

describe("ensemble", () => {
  it.live("an agent whose llm is the bridge layer: a tool call, then the final answer", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([
        { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
        { text: "It is 21 °C in Paris." }
      ])
      // the agent's own model; the ensemble's default ChatModel has no turns and must not be called
      const unused = ChatModel.scripted([])
      const meteorologist = yield* Agent.make({
        role: "Meteorologist",
        goal: "Report the weather accurately",
        toolkit,
        llm: Layer.orDie(bridge(server, "chat"))
      })
      const report = yield* Task.make({ description: "Report the weather in {city}", expectedOutput: "One sentence", agent: meteorologist })
      const ensemble = yield* Ensemble.make({ agents: [meteorologist], tasks: [report] })
      const output = yield* Ensemble.run(ensemble, { city: "Paris" }).pipe(Effect.provide([handlers, unused.layer]))

      expect(output.raw).toBe("It is 21 °C in Paris.")
      expect(output.taskOutputs.map((task) => [task.agentRole, task.taskDescription, task.raw, task.toolCallCount])).toEqual([
        ["Meteorologist", "Report the weather in Paris", "It is 21 °C in Paris.", 1]
      ])
      expect(output.totalToolCalls).toBe(1)
      expect(unused.calls).toBe(0)
      const agentSystem = [
        "You are Meteorologist.",
        "Your goal: Report the weather accurately",
        "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
        "and leave out preamble and closing remarks."
      ].join("\n\n")
      const asked: ReadonlyArray<Line> = [
        { system: agentSystem },
        { user: "## Task\nReport the weather in Paris\n\n## Expected output\nOne sentence" }
      ]
      expect(bodies(server)).toEqual([
        body("chat", asked),
        body("chat", [
          ...asked,
          { calls: [["call_1_0", "get_weather", "{\"city\":\"Paris\"}"]] },
          { results: [["call_1_0", "{\"city\":\"Paris\",\"celsius\":21}"]] }
        ])
      ])
    }))
})

// -----------------------------------------------------------------------------
// Faults
// -----------------------------------------------------------------------------

const hello = () => Chain.make({ user: "Hi" })
const helloBody = (api: Api, options: { readonly stream?: boolean } = {}) => body(api, [{ user: "Hi" }], { ...options, tools: false })

for (const api of apis) {
  describe(`${api} API: faults`, () => {
    it.live("429 with retry-after-ms: without retry a typed, retryable error carrying the delay; with ModelRetry the same request is sent again no sooner", () =>
      Effect.gen(function*() {
        const limited: OpenAiServer.HttpFault = { status: 429, headers: { "retry-after-ms": "60" } }
        const once = yield* OpenAiServer.make([limited])
        const error = runError(
          yield* Effect.flip(Chain.run(hello(), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(bridge(once, api))))
        )
        const reason = reasonOf(error)
        expect([reason.status, reason.retryable, reason.retryAfterMillis, reason.description]).toEqual([429, true, 60, "Scripted error 429"])
        expect(reason.message).toBe("The model call failed (HTTP 429): Scripted error 429")
        expect(yield* Chain.encode(error.chain)).toEqual(yield* Chain.encode(hello()))
        expect(once.calls).toBe(1)

        const times: Array<number> = []
        const server = yield* OpenAiServer.make([stamped(times, limited), stamped(times, { text: "Hello!" })])
        const outcome = yield* Chain.run(hello(), {
          mode: Mode.whileNeedsResponse,
          retry: ModelRetry.schedule({ base: "1 millis" }) // the backoff alone would retry after 1 ms
        }).pipe(Effect.provide(bridge(server, api)))
        expect(transcript(outcome.chain.messages)).toEqual(["user: Hi", "assistant: Hello!"])
        expect(bodies(server)).toEqual([helloBody(api), helloBody(api)])
        expect(times[1] - times[0]).toBeGreaterThanOrEqual(60)
        expect(outcome.chain.runCount).toBe(1)
      }))

    it.live("500 mid-run, then success: retried with the same request; the recovered chain is the clean run's", () =>
      Effect.gen(function*() {
        const { outcome: clean } = yield* runOnce(api, twoRounds)
        const { outcome, server } = yield* runOnce(api, [twoRounds[0], { status: 500 }, ...twoRounds.slice(1)], {
          retry: ModelRetry.schedule({ base: "5 millis" })
        })
        expect(bodies(server)).toEqual([body(api, request1), body(api, request2), body(api, request2), body(api, request3)])
        expect(yield* Chain.encode(outcome.chain)).toEqual(yield* Chain.encode(clean.chain))
      }))

    it.live("400: not retried; RunError with ModelCallFailed (status 400, not retryable, the provider's message) and the chain as before the call", () =>
      Effect.gen(function*() {
        const message = "Invalid 'messages[3].content': string too long. Expected a string with maximum length 1048576."
        const badRequest: OpenAiServer.HttpFault = {
          status: 400,
          body: OpenAiServer.errorBody(message, "invalid_request_error", "string_above_max_length")
        }
        // the chain before the second call: the same first round, stopped before the model is called again
        const { outcome: before } = yield* runOnce(api, [twoRounds[0]], { maxRuns: 1, onMaxRuns: "stop" })
        expect(before._tag === "Ok" && before.reason).toBe("max-runs")

        const server = yield* OpenAiServer.make([twoRounds[0], badRequest, { text: "never sent" }])
        const error = runError(
          yield* Effect.flip(
            Chain.run(weatherChain(), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }).pipe(
              Effect.provide([bridge(server, api), handlers])
            )
          )
        )
        expect(server.calls).toBe(2)
        expect(bodies(server)).toEqual([body(api, request1), body(api, request2)])
        const reason = reasonOf(error)
        expect({ status: reason.status, retryable: reason.retryable, description: reason.description }).toEqual({
          status: 400,
          retryable: false,
          description: message
        })
        expect(error.message).toBe(`The model call failed (HTTP 400): ${message}`)
        expect(yield* Chain.encode(error.chain)).toEqual(yield* Chain.encode(before.chain))
        expect([error.chain.runCount, error.chain.pendingToolCalls.length, error.chain.messages.at(-1)?.role]).toEqual([1, 0, "tool"])
      }))

    it.live("a connection dropped mid-stream: a typed, retryable error (chain untouched); with a retry the run recovers without the partial text", () =>
      Effect.gen(function*() {
        const drop: OpenAiServer.Drop = { drop: "mid-stream", reply: { text: "Partial answer that breaks" } }
        const once = yield* OpenAiServer.make([drop])
        const failed = yield* collect(Chain.stream(hello(), { mode: Mode.whileNeedsResponse }).pipe(Stream.provide(bridge(once, api))))
        const failure = failed.error === undefined ? undefined : failed.error.reasons.find((reason) => reason._tag === "Fail")
        const error = failure?._tag === "Fail" ? failure.error : undefined
        if (!(error instanceof LoopError.RunError)) throw new Error("expected the stream to fail with a RunError")
        const reason = reasonOf(error)
        expect([reason.retryable, reason.description]).toEqual([true, "Failed to process successful response"])
        expect(yield* Chain.encode(error.chain)).toEqual(yield* Chain.encode(hello()))
        expect(brief(failed.events)).toEqual([
          "RunStarted",
          "ModelCallStarted",
          "delta \"Partial \"",
          `failed #1.1: ${reason.message}`,
          "RunFailed"
        ])

        const server = yield* OpenAiServer.make([drop, { text: "Whole answer." }])
        const { error: none, events } = yield* collect(
          Chain.stream(hello(), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }).pipe(
            Stream.provide(bridge(server, api))
          )
        )
        expect(none).toBeUndefined()
        expect(bodies(server)).toEqual([helloBody(api, { stream: true }), helloBody(api, { stream: true })])
        expect(brief(events)).toEqual([
          "RunStarted",
          "ModelCallStarted",
          "delta \"Partial \"",
          `failed #1.1: ${reason.message}`,
          "ModelCallStarted",
          "delta \"Whole \"",
          "delta \"answer.\"",
          "ModelCallFinished",
          "RunFinished"
        ])
        const chain = yield* Chain.decode(finishedChain(events))
        expect(transcript(chain.messages)).toEqual(["user: Hi", "assistant: Whole answer."])
        expect(chain.runCount).toBe(1)
      }))

    it.live("malformed tool-call JSON: fed back as an error result the next request carries; the run finishes", () =>
      Effect.gen(function*() {
        const malformed = "{\"city\": \"Par"
        const { outcome, server } = yield* runOnce(api, [
          { toolCalls: [{ name: "get_weather", arguments: malformed }] },
          { text: "Sorry — Paris is 21 °C." }
        ])
        expect(outcome._tag === "Ok" && [outcome.reason, Chain.text(outcome.chain)]).toEqual(["done", "Sorry — Paris is 21 °C."])
        const failure = "Invalid arguments for tool 'get_weather': Expected object"
        expect(transcript(outcome.chain.messages).slice(2)).toEqual([
          `assistant: call get_weather#call_1_0 ${JSON.stringify(malformed)}`,
          `tool: failed get_weather#call_1_0 ${JSON.stringify(failure)}`,
          "assistant: Sorry — Paris is 21 °C."
        ])
        // How the client re-sends a call whose arguments were not JSON is its own choice: Chat Completions
        // replaces them with "{}", Responses sends the raw text as a JSON string.
        const echoed = api === "chat" ? "{}" : JSON.stringify(malformed)
        expect(bodies(server)).toEqual([
          body(api, request1),
          body(api, [
            ...request1,
            { calls: [["call_1_0", "get_weather", echoed]] },
            { results: [["call_1_0", JSON.stringify({ error: failure })]] }
          ])
        ])
      }))

    it.live("a timeout: fromAiSdk({ timeout: 200 ms }) against a turn delayed 2 s fails retryable at once; with a retry the next turn answers", () =>
      Effect.gen(function*() {
        const late: OpenAiServer.Delay = { delayMs: 2_000, then: { text: "Too late." } }
        const once = yield* OpenAiServer.make([late])
        const started = performance.now()
        const error = runError(
          yield* Effect.flip(
            Chain.run(hello(), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(bridge(once, api, { timeout: "200 millis" })))
          )
        )
        expect(performance.now() - started).toBeLessThan(1_000)
        const reason = reasonOf(error)
        expect([reason.retryable, reason.status]).toEqual([true, undefined])
        expect(reason.description).toMatch(/^no complete response within 200/)
        expect(yield* Chain.encode(error.chain)).toEqual(yield* Chain.encode(hello()))

        // streamed this time: the timeout covers the whole stream too
        const server = yield* OpenAiServer.make([late, { text: "In time." }])
        const again = performance.now()
        const { error: none, events } = yield* collect(
          Chain.stream(hello(), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }).pipe(
            Stream.provide(bridge(server, api, { timeout: "200 millis" }))
          )
        )
        expect(none).toBeUndefined()
        expect(performance.now() - again).toBeLessThan(1_500)
        expect(server.calls).toBe(2)
        expect(brief(events).filter((line) => line.startsWith("failed"))).toEqual([
          "failed #1.1: The model call failed: no complete response within 200ms; raise the bridge's timeout option or retry"
        ])
        expect(transcript((yield* Chain.decode(finishedChain(events))).messages)).toEqual(["user: Hi", "assistant: In time."])
      }))
  })
}

describe("chat API: retry-after in seconds", () => {
  it.live("429 with retry-after: 1 — the retry comes no sooner than 1 s later (backoff alone: 1 ms)", () =>
    Effect.gen(function*() {
      const times: Array<number> = []
      const server = yield* OpenAiServer.make([
        stamped(times, { status: 429, headers: { "retry-after": "1" } }),
        stamped(times, { text: "Hello!" })
      ])
      const outcome = yield* Chain.run(hello(), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ base: "1 millis" }) }).pipe(
        Effect.provide(bridge(server, "chat"))
      )
      expect(Chain.text(outcome.chain)).toBe("Hello!")
      expect(server.calls).toBe(2)
      expect(times[1] - times[0]).toBeGreaterThanOrEqual(1_000)
      expect(times[1] - times[0]).toBeLessThan(1_500)
    }))
})

// -----------------------------------------------------------------------------
// Secrets
// -----------------------------------------------------------------------------

const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"

/** A 401 whose message echoes the Authorization header the request carried, as some gateways do. */
const echoing: OpenAiServer.ServerTurn = (request) => ({
  status: 401,
  body: OpenAiServer.errorBody(
    `Invalid authorization header '${request.headers.authorization}'`,
    "invalid_request_error",
    "invalid_api_key"
  )
})

/** The real client for `api` with `apiKey`, pointed at `server`. */
const clientModel = (server: OpenAiServer.OpenAiServer, api: Api, apiKey: string) => {
  const provider = createOpenAI({ baseURL: server.baseURL, apiKey })
  return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
}

/** What an OTLP exporter writes for each failed span: the exception's message and stack, causes included. */
const exported = (spans: ReadonlyArray<Tracer.NativeSpan>): ReadonlyArray<string> =>
  spans.flatMap((span) =>
    span.status._tag === "Ended" && Exit.isFailure(span.status.exit)
      ? Cause.prettyErrors(span.status.exit.cause, { includeCauseInStack: true }).map((error) => `${error.message}\n${error.stack}`)
      : []
  )

for (const api of apis) {
  describe(`${api} API: secrets`, () => {
    it.live("a 401 echoing the key: the key reaches the server, not the RunError, its printouts, the events or the spans", () =>
      Effect.gen(function*() {
        const server = yield* OpenAiServer.make([echoing])
        const { spans, tracer } = recording()
        const { error, events } = yield* collect(
          Chain.stream(hello(), { mode: Mode.whileNeedsResponse }).pipe(Stream.provide(ChatModel.fromAiSdk(clientModel(server, api, key))))
        ).pipe(Effect.withTracer(tracer))
        // the key was sent, and echoed back
        expect(server.requests[0].headers.authorization).toBe(`Bearer ${key}`)
        const failure = error === undefined ? undefined : Cause.squash(error)
        if (!(failure instanceof LoopError.RunError)) throw new Error("expected a RunError")
        const reason = reasonOf(failure)
        expect(failure.message).toBe("The model call failed (HTTP 401): Invalid authorization header 'Bearer [REDACTED]'")
        expect(reason.description).toBe("Invalid authorization header 'Bearer [REDACTED]'")
        expect([reason.status, reason.retryable]).toEqual([401, false])
        expect(brief(events)).toEqual([
          "RunStarted",
          "ModelCallStarted",
          `failed #1.1: ${failure.message}`,
          "RunFailed"
        ])
        // the provider's error is kept, and still readable (redacted), but left out of printouts
        const cause = reason.cause
        expect(APICallError.isInstance(cause)).toBe(true)
        if (!APICallError.isInstance(cause)) return
        expect(cause.statusCode).toBe(401)
        expect(cause.responseBody).toContain("Bearer [REDACTED]")
        expect(cause.requestBodyValues).toBeDefined()
        expect(Object.keys(cause)).not.toContain("requestBodyValues")
        const written = [
          failure.message,
          String(failure),
          JSON.stringify(failure),
          inspect(failure),
          inspect(reason),
          inspect(cause),
          cause.message,
          cause.stack ?? "",
          JSON.stringify(events),
          ...exported(spans)
        ]
        expect(exported(spans)).toHaveLength(2) // the chat span and the invoke_agent span failed
        expect(written.filter((text) => text.includes(key))).toEqual([])
      }))
  })
}

// -----------------------------------------------------------------------------
// A prompt the real client cannot serialise
// -----------------------------------------------------------------------------

/** A value nested `depth` levels deep. */
const nested = (depth: number): unknown => {
  let value: unknown = "bottom"
  for (let i = 0; i < depth; i++) value = { inner: value }
  return value
}

/** A history whose assistant turn called a tool with arguments nested 100,000 levels deep (JSON.stringify overflows). */
const deepArguments: ChatModel.GenerateRequest = {
  prompt: Prompt.fromMessages([
    Prompt.userMessage({ content: [Prompt.textPart({ text: "Weather?" })] }),
    Prompt.assistantMessage({
      content: [Prompt.toolCallPart({ id: "c1", name: "get_weather", params: nested(100_000), providerExecuted: false })]
    }),
    Prompt.toolMessage({
      content: [Prompt.toolResultPart({ id: "c1", name: "get_weather", isFailure: true, result: "bad arguments", providerExecuted: false })]
    })
  ]),
  tools: Object.values(toolkit.tools),
  toolChoice: "auto"
}

for (const api of apis) {
  describe(`${api} API: a prompt the client cannot serialise`, () => {
    it.live("tool arguments nested 100,000 levels deep: with ModelRetry, one attempt, not retryable, and no request sent", () =>
      Effect.gen(function*() {
        const server = yield* OpenAiServer.make([{ text: "never" }, { text: "never" }, { text: "never" }, { text: "never" }])
        const service = yield* AiSdkModel.make(clientModel(server, api, "test"))
        for (const call of [service.generate(deepArguments), Stream.runCollect(service.stream(deepArguments))]) {
          let attempts = 0
          const error = yield* Effect.flip(
            Effect.suspend(() => {
              attempts++
              return call as Effect.Effect<unknown, ChatModel.ChatModelError>
            }).pipe(Effect.retry(ModelRetry.schedule({ base: "1 millis" })))
          )
          expect(attempts).toBe(1)
          if (error._tag !== "ModelCallFailed") throw new Error(`expected ModelCallFailed, got ${error._tag}`)
          expect(error.retryable).toBe(false)
          expect(error.description).toMatch(
            /^the provider request could not be built from this prompt \(RangeError: Maximum call stack size exceeded\); it is not retried/
          )
        }
        expect(server.calls).toBe(0)
      }))
  })
}

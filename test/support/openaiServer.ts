/**
 * A local HTTP server that speaks OpenAI's wire protocols (Chat Completions and
 * Responses, JSON and SSE streaming) and answers from a script, so the real
 * `@ai-sdk/openai` client can be tested end to end without the network.
 *
 * Every POST to `/v1/chat/completions` or `/v1/responses` consumes the next
 * {@link ServerTurn} of one shared script; every request is recorded.
 *
 * @example
 * const server = yield* OpenAiServer.make([{ text: "Hello there" }, { status: 429, headers: { "retry-after": "1" } }])
 * const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test-key" })
 */
import { Effect } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

// ---------------------------------------------------------------------------
// The script
// ---------------------------------------------------------------------------

/** One tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** The call id sent to the client (default `call_<request number, from 1>_<index in the reply, from 0>`). */
  readonly id?: string
  /** The tool's name. */
  readonly name: string
  /**
   * The arguments. An object is JSON-encoded; a string is sent verbatim, so
   * malformed JSON can be scripted.
   */
  readonly arguments: string | object
}

/** Token counts reported for a reply. */
export interface ScriptedUsage {
  readonly input: number
  readonly output: number
  /** Of `input`, how many were read from the prompt cache (`cached_tokens`; default 0). */
  readonly cached?: number
  /** Of `output`, how many were reasoning (`reasoning_tokens`; default 0). */
  readonly reasoning?: number
}

/**
 * Why the model stopped, in Chat Completions vocabulary. On the Responses API
 * `"length"` and `"content_filter"` become an incomplete response with reason
 * `max_output_tokens` / `content_filter`; the others a completed response.
 */
export type ScriptedFinishReason = "stop" | "length" | "tool_calls" | "content_filter"

/** A successful answer: text and/or tool calls. */
export interface Reply {
  /** The assistant text (none when omitted). Streamed word by word. */
  readonly text?: string
  /** Tool calls, in order. Their arguments are streamed in a few deltas. */
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  /** Reported usage (default `{ input: 10, output: 5 }`). */
  readonly usage?: ScriptedUsage
  /** Default: `"tool_calls"` when there are tool calls, else `"stop"`. */
  readonly finishReason?: ScriptedFinishReason
}

/**
 * An HTTP error answer. Without a body an OpenAI-shaped
 * `{ error: { message: "Scripted error <status>", type, param: null, code } }`
 * is sent (429: type `requests`, code `rate_limit_exceeded`); `headers` are
 * added to the response (e.g. `retry-after`, `retry-after-ms`).
 */
export interface HttpFault {
  readonly status: number
  readonly body?: object
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A broken connection. `"before-response"` destroys the socket before any
 * byte of the response; `"mid-stream"` answers 200, sends the start of the
 * reply (for a streaming request: the SSE events up to and including the
 * first text or tool-argument delta; for a JSON request: half of the body),
 * then destroys the socket.
 */
export interface Drop {
  readonly drop: "before-response" | "mid-stream"
  /** What is being sent when the connection breaks (default: a short text). */
  readonly reply?: Reply
}

/** Waits (real time) before answering with `then`; a client that gives up meanwhile is fine. */
export interface Delay {
  readonly delayMs: number
  readonly then: ServerTurn
}

/**
 * One scripted answer: a {@link Reply}, an {@link HttpFault}, a {@link Drop},
 * a {@link Delay}, or a function choosing one from the request received.
 */
export type ServerTurn = Reply | HttpFault | Drop | Delay | ((request: RecordedRequest) => ServerTurn)

/** A request as the server received it. */
export interface RecordedRequest {
  /** E.g. `/v1/chat/completions`. */
  readonly path: string
  readonly method: string
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body (the raw text when it is not JSON, `undefined` when empty). */
  readonly body: unknown
}

/** A running server. */
export interface OpenAiServer {
  /** E.g. `http://127.0.0.1:54321/v1`: pass as `baseURL` to `createOpenAI`. */
  readonly baseURL: string
  /** Every request received, in order (including unknown routes). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** How many requests reached an endpoint, i.e. consumed (or found exhausted) a scripted turn. */
  readonly calls: number
}

/** A running server with a Promise-based `close` (for use outside Effect). */
export interface StartedOpenAiServer extends OpenAiServer {
  /** Stops listening, destroys open sockets and cancels pending delays. */
  readonly close: () => Promise<void>
}

// ---------------------------------------------------------------------------
// Starting and stopping
// ---------------------------------------------------------------------------

/**
 * The server as a scoped resource: listening on a random port of 127.0.0.1
 * while the scope is open, closed (open sockets destroyed) when it closes.
 */
export const make = (turns: ReadonlyArray<ServerTurn>): Effect.Effect<OpenAiServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(turns)),
    (server) => Effect.promise(() => server.close())
  )

/** Starts the server (Promise form of {@link make}); call `close` when done. */
export const start = (turns: ReadonlyArray<ServerTurn>): Promise<StartedOpenAiServer> => {
  const state: ServerState = { turns, requests: [], calls: 0, sockets: new Set(), timers: new Set() }
  const server = http.createServer((req, res) => {
    void handle(state, req, res)
  })
  server.on("connection", (socket) => {
    state.sockets.add(socket)
    socket.on("close", () => state.sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        baseURL: `http://127.0.0.1:${port}/v1`,
        get requests() {
          return [...state.requests]
        },
        get calls() {
          return state.calls
        },
        close: () => close(server, state)
      })
    })
  })
}

interface ServerState {
  readonly turns: ReadonlyArray<ServerTurn>
  readonly requests: Array<RecordedRequest>
  calls: number
  readonly sockets: Set<Socket>
  readonly timers: Set<NodeJS.Timeout>
}

const close = (server: http.Server, state: ServerState): Promise<void> =>
  new Promise((resolve) => {
    for (const timer of state.timers) clearTimeout(timer)
    state.timers.clear()
    for (const socket of state.sockets) socket.destroy()
    server.close(() => resolve())
  })

// ---------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------

type Api = "chat" | "responses"

const routes: ReadonlyMap<string, Api> = new Map([
  ["/v1/chat/completions", "chat"],
  ["/v1/responses", "responses"]
])

const handle = async (state: ServerState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
  req.on("error", () => {})
  res.on("error", () => {})
  const request = await readRequest(req)
  state.requests.push(request)
  const api = req.method === "POST" ? routes.get(request.path) : undefined
  if (api === undefined) {
    return sendJson(res, 404, errorBody(`openaiServer: no route ${request.method} ${request.path}`, "invalid_request_error", "not_found"))
  }
  const number = ++state.calls
  const turn = state.turns[number - 1]
  if (turn === undefined) {
    return sendJson(res, 500, errorBody(
      `openaiServer: script exhausted: request #${number} (${request.method} ${request.path}) has no scripted turn (${state.turns.length} scripted)`,
      "server_error",
      "script_exhausted"
    ))
  }
  answer(state, { api, number, request, stream: isStreaming(request.body) }, turn, res)
}

const readRequest = (req: http.IncomingMessage): Promise<RecordedRequest> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(record(req, Buffer.concat(chunks).toString("utf8"))))
    req.on("error", () => resolve(record(req, Buffer.concat(chunks).toString("utf8"))))
  })

const record = (req: http.IncomingMessage, text: string): RecordedRequest => ({
  path: new URL(req.url ?? "/", "http://localhost").pathname,
  method: req.method ?? "GET",
  headers: Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value]]
    )
  ),
  body: parseBody(text)
})

const parseBody = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isStreaming = (body: unknown): boolean => isRecord(body) && body.stream === true

/** Chat Completions sends the final usage chunk only when `stream_options.include_usage` is set. */
const includesUsage = (body: unknown): boolean =>
  isRecord(body) && isRecord(body.stream_options) && body.stream_options.include_usage === true

const modelOf = (body: unknown): string =>
  isRecord(body) && typeof body.model === "string" ? body.model : "gpt-test"

// ---------------------------------------------------------------------------
// Playing a turn
// ---------------------------------------------------------------------------

/** What the answer to one request depends on besides the turn. */
interface Exchange {
  readonly api: Api
  /** 1-based request number among endpoint requests: the basis of default ids. */
  readonly number: number
  readonly request: RecordedRequest
  readonly stream: boolean
}

/** Plays `turn`; a turn function that throws is answered with a 500 naming the request. */
const answer = (state: ServerState, exchange: Exchange, turn: ServerTurn, res: http.ServerResponse): void => {
  try {
    play(state, exchange, turn, res)
  } catch (error) {
    sendJson(res, 500, errorBody(
      `openaiServer: the turn for request #${exchange.number} threw: ${error instanceof Error ? error.message : String(error)}`,
      "server_error",
      "turn_threw"
    ))
  }
}

const play = (state: ServerState, exchange: Exchange, turn: ServerTurn, res: http.ServerResponse): void => {
  if (res.destroyed) return
  if (typeof turn === "function") return play(state, exchange, turn(exchange.request), res)
  if ("delayMs" in turn) return delay(state, turn.delayMs, res, () => answer(state, exchange, turn.then, res))
  if ("status" in turn) return sendFault(res, turn)
  if ("drop" in turn) return turn.drop === "before-response" ? dropBeforeResponse(res) : dropMidStream(exchange, turn, res)
  return sendReply(exchange, turn, res)
}

const delay = (state: ServerState, ms: number, res: http.ServerResponse, then: () => void): void => {
  const timer = setTimeout(() => {
    state.timers.delete(timer)
    then()
  }, ms)
  state.timers.add(timer)
  res.on("close", () => {
    clearTimeout(timer)
    state.timers.delete(timer)
  })
}

const sendFault = (res: http.ServerResponse, fault: HttpFault): void =>
  sendJson(res, fault.status, fault.body ?? defaultErrorBody(fault.status), fault.headers)

/** What OpenAI sends for a status when the turn gives no body (message `Scripted error <status>`). */
const defaultErrorBody = (status: number) =>
  status === 429
    ? errorBody(`Scripted error ${status}`, "requests", "rate_limit_exceeded")
    : errorBody(`Scripted error ${status}`, status >= 500 ? "server_error" : "invalid_request_error", null)

/** OpenAI's error envelope, e.g. for an {@link HttpFault} body: `errorBody("Rate limit reached", "requests", "rate_limit_exceeded")`. */
export const errorBody = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code }
})

const sendJson = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {}
): void => {
  if (res.destroyed || res.writableEnded) return
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

const sendReply = (exchange: Exchange, reply: Reply, res: http.ServerResponse): void => {
  if (!exchange.stream) return sendJson(res, 200, jsonBody(exchange, reply))
  if (res.destroyed || res.writableEnded) return
  startEventStream(res)
  for (const event of events(exchange, reply)) res.write(event.frame)
  res.end()
}

const dropBeforeResponse = (res: http.ServerResponse): void => {
  res.socket?.destroy()
}

const defaultDropReply: Reply = { text: "This answer is cut short" }

const dropMidStream = (exchange: Exchange, drop: Drop, res: http.ServerResponse): void => {
  const reply = drop.reply ?? defaultDropReply
  if (!exchange.stream) {
    const text = JSON.stringify(jsonBody(exchange, reply))
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) })
    return writeThenDestroy(res, text.slice(0, Math.floor(text.length / 2)))
  }
  startEventStream(res)
  const all = events(exchange, reply)
  const cut = all.findIndex((event) => event.delta)
  const sent = cut === -1 ? all.slice(0, 1) : all.slice(0, cut + 1)
  writeThenDestroy(res, sent.map((event) => event.frame).join(""))
}

/** Writes, and destroys the socket once the bytes are flushed (so the client sees them, then the break). */
const writeThenDestroy = (res: http.ServerResponse, text: string): void => {
  res.write(text, () => {
    setTimeout(() => res.socket?.destroy(), 5)
  })
}

const startEventStream = (res: http.ServerResponse): void => {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" })
  res.flushHeaders()
}

const jsonBody = (exchange: Exchange, reply: Reply): object =>
  exchange.api === "chat" ? chatCompletion(resolveReply(exchange, reply)) : response(resolveReply(exchange, reply))

const events = (exchange: Exchange, reply: Reply): ReadonlyArray<SseEvent> =>
  exchange.api === "chat"
    ? chatCompletionChunks(resolveReply(exchange, reply), includesUsage(exchange.request.body))
    : responseEvents(resolveReply(exchange, reply))

// ---------------------------------------------------------------------------
// A reply with every default filled in
// ---------------------------------------------------------------------------

interface ResolvedToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

interface ResolvedReply {
  readonly number: number
  readonly model: string
  readonly text: string | undefined
  readonly toolCalls: ReadonlyArray<ResolvedToolCall>
  readonly usage: ScriptedUsage
  readonly finishReason: ScriptedFinishReason
}

/** A fixed creation time (seconds), so answers are deterministic. */
const created = 1_700_000_000

const defaultUsage: ScriptedUsage = { input: 10, output: 5 }

const resolveReply = (exchange: Exchange, reply: Reply): ResolvedReply => {
  const toolCalls = (reply.toolCalls ?? []).map((call, index): ResolvedToolCall => ({
    id: call.id ?? `call_${exchange.number}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
  }))
  return {
    number: exchange.number,
    model: modelOf(exchange.request.body),
    text: reply.text,
    toolCalls,
    usage: reply.usage ?? defaultUsage,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop")
  }
}

/** Text split after each run of whitespace: `"a b c"` → `["a ", "b ", "c"]`. */
const splitWords = (text: string): ReadonlyArray<string> => text.split(/(?<=\s)(?=\S)/).filter((piece) => piece !== "")

/** A string split into (at most) `parts` contiguous pieces. */
const splitInto = (text: string, parts = 3): ReadonlyArray<string> => {
  const size = Math.max(1, Math.ceil(text.length / parts))
  const pieces: Array<string> = []
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size))
  return pieces
}

/** One SSE frame; `delta` marks a text or tool-argument delta (where a mid-stream drop cuts). */
interface SseEvent {
  readonly frame: string
  readonly delta: boolean
}

const dataFrame = (data: unknown, delta = false): SseEvent => ({ frame: `data: ${JSON.stringify(data)}\n\n`, delta })

const namedFrame = (data: Readonly<Record<string, unknown>> & { readonly type: string }, delta = false): SseEvent => ({
  frame: `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`,
  delta
})

// ---------------------------------------------------------------------------
// Chat Completions
// ---------------------------------------------------------------------------

const chatUsage = (usage: ScriptedUsage) => ({
  prompt_tokens: usage.input,
  completion_tokens: usage.output,
  total_tokens: usage.input + usage.output,
  prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: usage.reasoning ?? 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0
  }
})

/** A `chat.completion` object (non-streaming answer). */
const chatCompletion = (reply: ResolvedReply): object => ({
  id: `chatcmpl-${reply.number}`,
  object: "chat.completion",
  created,
  model: reply.model,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: reply.text ?? null,
      refusal: null,
      annotations: [],
      ...(reply.toolCalls.length > 0 && {
        tool_calls: reply.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments }
        }))
      })
    },
    logprobs: null,
    finish_reason: reply.finishReason
  }],
  usage: chatUsage(reply.usage),
  service_tier: "default",
  system_fingerprint: "fp_openaiserver"
})

/**
 * `chat.completion.chunk` events: the role, text deltas, each tool call (id
 * and name, then argument deltas), the finish reason, the usage chunk when
 * asked for, and `[DONE]`.
 */
const chatCompletionChunks = (reply: ResolvedReply, withUsage: boolean): ReadonlyArray<SseEvent> => {
  const chunk = (delta: object, finishReason: string | null = null) => ({
    id: `chatcmpl-${reply.number}`,
    object: "chat.completion.chunk",
    created,
    model: reply.model,
    service_tier: "default",
    system_fingerprint: "fp_openaiserver",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(withUsage && { usage: null })
  })
  const toolCallChunks = reply.toolCalls.flatMap((call, index) => [
    dataFrame(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })),
    ...splitInto(call.arguments).map((piece) => dataFrame(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), true))
  ])
  const usageChunk = {
    id: `chatcmpl-${reply.number}`,
    object: "chat.completion.chunk",
    created,
    model: reply.model,
    service_tier: "default",
    system_fingerprint: "fp_openaiserver",
    choices: [],
    usage: chatUsage(reply.usage)
  }
  return [
    dataFrame(chunk({ role: "assistant", content: reply.text === undefined ? null : "", refusal: null })),
    ...splitWords(reply.text ?? "").map((word) => dataFrame(chunk({ content: word }), true)),
    ...toolCallChunks,
    dataFrame(chunk({}, reply.finishReason)),
    ...(withUsage ? [dataFrame(usageChunk)] : []),
    { frame: "data: [DONE]\n\n", delta: false }
  ]
}

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

const responsesUsage = (usage: ScriptedUsage) => ({
  input_tokens: usage.input,
  input_tokens_details: { cached_tokens: usage.cached ?? 0 },
  output_tokens: usage.output,
  output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
  total_tokens: usage.input + usage.output
})

const incompleteReason = (finishReason: ScriptedFinishReason): string | undefined =>
  finishReason === "length" ? "max_output_tokens" : finishReason === "content_filter" ? "content_filter" : undefined

const messageId = (reply: ResolvedReply): string => `msg_${reply.number}`
const functionCallItemId = (reply: ResolvedReply, index: number): string => `fc_${reply.number}_${index}`

const outputText = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] })

const messageItem = (reply: ResolvedReply, text: string, status: "in_progress" | "completed") => ({
  id: messageId(reply),
  type: "message",
  status,
  role: "assistant",
  content: status === "completed" ? [outputText(text)] : []
})

const functionCallItem = (reply: ResolvedReply, call: ResolvedToolCall, index: number, status: "in_progress" | "completed") => ({
  id: functionCallItemId(reply, index),
  type: "function_call",
  status,
  arguments: status === "completed" ? call.arguments : "",
  call_id: call.id,
  name: call.name
})

/** The output items of a finished response: the message (if any text), then the function calls. */
const outputItems = (reply: ResolvedReply): ReadonlyArray<object> => [
  ...(reply.text === undefined ? [] : [messageItem(reply, reply.text, "completed")]),
  ...reply.toolCalls.map((call, index) => functionCallItem(reply, call, index, "completed"))
]

/** A `response` object; `final` false gives the in-progress shell sent by `response.created`. */
const response = (reply: ResolvedReply, final = true): object => {
  const reason = incompleteReason(reply.finishReason)
  return {
    id: `resp_${reply.number}`,
    object: "response",
    created_at: created,
    status: !final ? "in_progress" : reason === undefined ? "completed" : "incomplete",
    error: null,
    incomplete_details: final && reason !== undefined ? { reason } : null,
    instructions: null,
    model: reply.model,
    output: final ? outputItems(reply) : [],
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: final ? responsesUsage(reply.usage) : null,
    service_tier: "default",
    store: true
  }
}

/**
 * Responses stream events, each with its `sequence_number`: created, in
 * progress, the message item (added, content part, text deltas, done), each
 * function call item (added, argument deltas, arguments done, item done), and
 * `response.completed` (or `response.incomplete`).
 */
const responseEvents = (reply: ResolvedReply): ReadonlyArray<SseEvent> => {
  const events: Array<SseEvent> = []
  const emit = (event: { readonly type: string } & Record<string, unknown>, delta = false) =>
    events.push(namedFrame({ ...event, sequence_number: events.length }, delta))
  emit({ type: "response.created", response: response(reply, false) })
  emit({ type: "response.in_progress", response: response(reply, false) })
  let outputIndex = 0
  if (reply.text !== undefined) {
    const text = reply.text
    const item = { item_id: messageId(reply), output_index: outputIndex, content_index: 0 }
    emit({ type: "response.output_item.added", output_index: outputIndex, item: messageItem(reply, text, "in_progress") })
    emit({ type: "response.content_part.added", ...item, part: outputText("") })
    for (const word of splitWords(text)) emit({ type: "response.output_text.delta", ...item, delta: word, logprobs: [] }, true)
    emit({ type: "response.output_text.done", ...item, text, logprobs: [] })
    emit({ type: "response.content_part.done", ...item, part: outputText(text) })
    emit({ type: "response.output_item.done", output_index: outputIndex, item: messageItem(reply, text, "completed") })
    outputIndex++
  }
  reply.toolCalls.forEach((call, index) => {
    const item = { item_id: functionCallItemId(reply, index), output_index: outputIndex }
    emit({ type: "response.output_item.added", output_index: outputIndex, item: functionCallItem(reply, call, index, "in_progress") })
    for (const piece of splitInto(call.arguments)) emit({ type: "response.function_call_arguments.delta", ...item, delta: piece }, true)
    emit({ type: "response.function_call_arguments.done", ...item, arguments: call.arguments })
    emit({ type: "response.output_item.done", output_index: outputIndex, item: functionCallItem(reply, call, index, "completed") })
    outputIndex++
  })
  const final = response(reply)
  emit({ type: incompleteReason(reply.finishReason) === undefined ? "response.completed" : "response.incomplete", response: final })
  return events
}

/**
 * The bridge from Vercel AI SDK providers to the `ChatModel` port. Every
 * language model of the AI SDK's provider specification v4 (`@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google`, `@ai-sdk/openai-compatible` for
 * Ollama, vLLM or llama.cpp, … in their 4.x versions, used by `ai` 7) becomes
 * a `ChatModel`, for whole responses (`doGenerate`) and streams (`doStream`).
 *
 * The bridge calls the provider directly, without the `ai` package: it makes
 * exactly one HTTP request per model call. Retries are the run's business
 * (`retry: ModelRetry.schedule()`), so they run on Effect's clock.
 *
 * What is mapped:
 * - tools: each tool's parameter Schema becomes the JSON Schema the provider
 *   is sent; the tool choice is kept (`oneOf` sends only those tools);
 * - messages: system, user (text and files), assistant (text, reasoning,
 *   tool calls), tool results (JSON or text, failures as error results);
 * - the response: text, reasoning, tool calls (arguments parsed from JSON; a
 *   malformed argument text is passed on as a string, which the tool's
 *   Schema rejects, so the model is told and can correct itself), usage and
 *   the finish reason;
 * - errors: `LoopError.ModelCallFailed` with the provider's message, the HTTP
 *   `status`, `retryAfterMillis` (from `retry-after-ms` / `retry-after`) and
 *   `retryable`; an unfinished stream (no finish part, or the provider's
 *   "interrupted" finish) and a timeout are retryable failures. A prompt the
 *   request cannot be built from (a value nested too deeply to serialise, a
 *   cycle, a BigInt, a prompt the provider refuses before sending) is a
 *   failure that is not retried: the same prompt fails the same way.
 *
 * Secrets: the failure's `description` has credentials redacted, and so has
 * the provider's error kept as its `cause` (its `message`, `stack`, `url`
 * and `responseBody`), whose request and response bodies are made
 * non-enumerable: still readable, but left out when the error is printed.
 *
 * Provider-executed tools (web search run by the provider, …) are not part
 * of the loop: their calls and results are left out.
 *
 * @since 0.1.0
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage
} from "@ai-sdk/provider"
import { Duration, Effect, Layer, Stream } from "effect"
import { Response, Tool } from "effect/ai"
import type { Prompt } from "effect/ai"
import { ChatModel, type GenerateRequest } from "../ChatModel.ts"
import { describe } from "../internal/describe.ts"
import * as Parts from "../internal/parts.ts"
import { redactSecrets } from "../internal/redact.ts"
import { InvalidInput, ModelCallFailed } from "../LoopError.ts"

/**
 * Options of {@link fromAiSdk}.
 *
 * - `timeout`: the longest a model call may take (a whole stream included);
 *   past it the call fails with a retryable `ModelCallFailed` and the
 *   request is aborted.
 * - `callOptions`: passed to every call as they are (`temperature`,
 *   `maxOutputTokens`, `providerOptions`, `headers`, …).
 *
 * @example
 * ```ts
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const options: AiSdkModel.Options = { timeout: "60 seconds", callOptions: { temperature: 0 } }
 * ```
 *
 * @since 0.1.0
 */
export interface Options {
  readonly timeout?: Duration.Input | undefined
  readonly callOptions?: Omit<LanguageModelV4CallOptions, "prompt" | "tools" | "toolChoice" | "abortSignal"> | undefined
}

// -----------------------------------------------------------------------------
// Request: effect/ai prompt and tools → provider call options
// -----------------------------------------------------------------------------

const toolOutput = (isFailure: boolean, result: unknown): LanguageModelV4ToolResultOutput =>
  typeof result === "string"
    ? { type: isFailure ? "error-text" : "text", value: result }
    : { type: isFailure ? "error-json" : "json", value: toJson(result) }

/** The JSON value of `u` (tool results are stored encoded, so this is a copy only for odd values). */
const toJson = (u: unknown): NonNullable<LanguageModelV4ToolResultOutput & { type: "json" }>["value"] =>
  u === undefined ? null : JSON.parse(JSON.stringify(u))

const fileData = (data: string | Uint8Array | URL) =>
  data instanceof URL ? { type: "url" as const, url: data } : { type: "data" as const, data }

const userMessage = (message: Prompt.UserMessage): LanguageModelV4Message => ({
  role: "user",
  content: typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content.map((part) =>
      part.type === "text"
        ? { type: "text" as const, text: part.text }
        : {
          type: "file" as const,
          mediaType: part.mediaType,
          data: fileData(part.data),
          ...(part.fileName === undefined ? {} : { filename: part.fileName })
        }
    )
})

const assistantMessage = (message: Prompt.AssistantMessage): LanguageModelV4Message => {
  if (typeof message.content === "string") return { role: "assistant", content: [{ type: "text", text: message.content }] }
  const content: Array<Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number]> = []
  for (const part of message.content) {
    switch (part.type) {
      case "text":
        content.push({ type: "text", text: part.text })
        break
      case "reasoning":
        content.push({ type: "reasoning", text: part.text })
        break
      case "tool-call":
        if (!part.providerExecuted) {
          content.push({ type: "tool-call", toolCallId: part.id, toolName: part.name, input: part.params })
        }
        break
      case "file":
        content.push({ type: "file", mediaType: part.mediaType, data: fileData(part.data) })
        break
      default:
        break // provider-executed results and approval requests stay with their provider
    }
  }
  return { role: "assistant", content }
}

/**
 * The provider's tool message: tool results only, or `undefined` when none is
 * left. effect/ai's `tool-approval-response` parts are dropped: a provider
 * reads them as a human's decision (`@ai-sdk/openai` sends
 * `mcp_approval_response`, approving a hosted MCP call), and a transcript —
 * which may come from a client or a stored document — never grants one.
 */
const toolMessage = (message: Prompt.ToolMessage): LanguageModelV4Message | undefined => {
  const content: Array<Extract<LanguageModelV4Message, { role: "tool" }>["content"][number]> = []
  for (const part of message.content) {
    if (part.type !== "tool-result") continue
    content.push({
      type: "tool-result",
      toolCallId: part.id,
      toolName: part.name,
      output: toolOutput(part.isFailure, part.result)
    })
  }
  return content.length === 0 ? undefined : { role: "tool", content }
}

/**
 * The provider prompt of an `effect/ai` prompt. Provider-executed tool calls
 * and results stay with their provider, and effect/ai's approval parts
 * (`tool-approval-request`, `tool-approval-response`) are left out: a
 * transcript may come from a client or a stored document, and never grants
 * an approval. A tool message left with nothing is left out too.
 *
 * @example
 * ```ts
 * import { Prompt } from "effect/ai"
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * AiSdkModel.toProviderPrompt(Prompt.make("Hi"))
 * // [{ role: "user", content: [{ type: "text", text: "Hi" }] }]
 * ```
 *
 * @since 0.1.0
 */
export const toProviderPrompt = (prompt: Prompt.Prompt): LanguageModelV4Prompt => {
  const messages: Array<LanguageModelV4Message> = []
  for (const message of prompt.content) {
    switch (message.role) {
      case "system":
        messages.push({ role: "system", content: message.content })
        break
      case "user":
        messages.push(userMessage(message))
        break
      case "assistant":
        messages.push(assistantMessage(message))
        break
      case "tool": {
        const tool = toolMessage(message)
        if (tool !== undefined) messages.push(tool)
        break
      }
    }
  }
  return messages
}

const toolDefinitions = new WeakMap<ReadonlyArray<Tool.Any>, ReadonlyArray<LanguageModelV4FunctionTool>>()

/**
 * The provider's function tools for `tools`: name, description and the JSON
 * Schema of the parameters (computed once per tool list).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "effect/ai"
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const Search = Tool.make("search", { parameters: Schema.Struct({ query: Schema.String }) })
 * AiSdkModel.toProviderTools([Search])[0].inputSchema
 * // { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: true }
 * ```
 *
 * @since 0.1.0
 */
export const toProviderTools = (tools: ReadonlyArray<Tool.Any>): ReadonlyArray<LanguageModelV4FunctionTool> => {
  let defined = toolDefinitions.get(tools)
  if (defined === undefined) {
    defined = tools.filter((tool) => !Tool.isProviderDefined(tool)).map((tool): LanguageModelV4FunctionTool => ({
      type: "function",
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: Tool.getJsonSchema(tool) as LanguageModelV4FunctionTool["inputSchema"]
    }))
    toolDefinitions.set(tools, defined)
  }
  return defined
}

const callOptions = (request: GenerateRequest, options: Options | undefined): LanguageModelV4CallOptions => {
  const prompt = toProviderPrompt(request.prompt)
  let tools = toProviderTools(request.tools)
  const choice = request.toolChoice
  let toolChoice: LanguageModelV4ToolChoice
  if (typeof choice === "string") {
    toolChoice = { type: choice }
  } else if ("tool" in choice) {
    toolChoice = { type: "tool", toolName: choice.tool }
  } else {
    const allowed = new Set<string>(choice.oneOf)
    tools = tools.filter((tool) => allowed.has(tool.name))
    toolChoice = { type: choice.mode ?? "auto" }
  }
  return {
    ...options?.callOptions,
    prompt,
    ...(tools.length === 0 ? {} : { tools: [...tools], toolChoice })
  }
}

// -----------------------------------------------------------------------------
// Response: provider content → effect/ai response parts
// -----------------------------------------------------------------------------

/** Arguments as JSON, or the raw text when it is not JSON (the tool's Schema then rejects it). */
const parseArguments = (input: string): unknown => {
  if (input.trim() === "") return {}
  try {
    return JSON.parse(input)
  } catch {
    return input
  }
}

const finishReasonOf = (reason: LanguageModelV4FinishReason): Response.FinishReason =>
  reason.unified === "interrupted" ? "other" : reason.unified

const usageOf = (usage: LanguageModelV4Usage): Response.Usage =>
  new Response.Usage({
    inputTokens: {
      uncached: usage.inputTokens.noCache,
      total: usage.inputTokens.total,
      cacheRead: usage.inputTokens.cacheRead,
      cacheWrite: usage.inputTokens.cacheWrite
    },
    outputTokens: {
      total: usage.outputTokens.total,
      text: usage.outputTokens.text,
      reasoning: usage.outputTokens.reasoning
    }
  })

const contentPart = (part: LanguageModelV4Content): Response.AnyPart | undefined => {
  switch (part.type) {
    case "text":
      return Parts.responseText(part.text)
    case "reasoning":
      return Response.makePart("reasoning", { text: part.text })
    case "tool-call":
      return part.providerExecuted === true
        ? undefined
        : Parts.responseToolCall(part.toolCallId, part.toolName, parseArguments(part.input))
    default:
      return undefined
  }
}

/**
 * The response parts of a provider's whole response.
 *
 * @example
 * ```ts
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const parts = AiSdkModel.fromProviderContent(
 *   [{ type: "text", text: "Hi!" }],
 *   { unified: "stop", raw: "stop" },
 *   { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } }
 * )
 * ```
 *
 * @since 0.1.0
 */
export const fromProviderContent = (
  content: ReadonlyArray<LanguageModelV4Content>,
  finishReason: LanguageModelV4FinishReason,
  usage: LanguageModelV4Usage
): ReadonlyArray<Response.AnyPart> => {
  const parts: Array<Response.AnyPart> = []
  for (const part of content) {
    const mapped = contentPart(part)
    if (mapped !== undefined) parts.push(mapped)
  }
  parts.push(Parts.responseFinish(finishReasonOf(finishReason), usageOf(usage)))
  return parts
}

/** A stream part as a response part; `undefined` for parts the loop does not use. */
const streamPart = (part: LanguageModelV4StreamPart): Response.AnyPart | ModelCallFailed | undefined => {
  switch (part.type) {
    case "text-start":
    case "reasoning-start":
    case "text-end":
    case "reasoning-end":
      return Response.makePart(part.type, { id: part.id })
    case "text-delta":
    case "reasoning-delta":
      return Response.makePart(part.type, { id: part.id, delta: part.delta })
    case "tool-call":
      return part.providerExecuted === true
        ? undefined
        : Parts.responseToolCall(part.toolCallId, part.toolName, parseArguments(part.input))
    case "finish":
      return Parts.responseFinish(finishReasonOf(part.finishReason), usageOf(part.usage))
    case "error":
      return failureOf(part.error)
    default:
      return undefined
  }
}

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

interface ApiCallErrorLike {
  readonly message: string
  readonly statusCode?: number | undefined
  readonly responseHeaders?: Record<string, string> | undefined
  readonly isRetryable: boolean
}

/**
 * An `APICallError`, or the plain error object providers put in a stream's
 * `error` part (`{ message, statusCode?, isRetryable? }`).
 */
const isApiCallError = (u: unknown): u is ApiCallErrorLike =>
  typeof u === "object" && u !== null && typeof (u as { message?: unknown }).message === "string" &&
  typeof (u as { isRetryable?: unknown }).isRetryable === "boolean"

/**
 * How long the headers ask to wait, in milliseconds: `retry-after-ms`, then
 * `retry-after` as seconds or as an HTTP date.
 *
 * @example
 * ```ts
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * AiSdkModel.retryAfterMillis({ "retry-after": "2" }, 0) // 2000
 * ```
 *
 * @since 0.1.0
 */
export const retryAfterMillis = (headers: Record<string, string> | undefined, now: number): number | undefined => {
  if (headers === undefined) return undefined
  const ms = Number.parseFloat(header(headers, "retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return ms
  const after = header(headers, "retry-after")
  if (after === undefined) return undefined
  const seconds = Number.parseFloat(after)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** A header the response has itself (never one inherited from `Object.prototype`), if it is a string. */
const header = (headers: Record<string, string>, name: string): string | undefined => {
  if (!Object.hasOwn(headers, name)) return undefined
  const value: unknown = headers[name]
  return typeof value === "string" ? value : undefined
}

/** The message of an error object that is not an `Error` (providers stream such objects), else `describe`'s text. */
const describeFailure = (u: unknown): string =>
  !(u instanceof Error) && typeof u === "object" && u !== null && typeof (u as { message?: unknown }).message === "string"
    ? (u as { message: string }).message
    : describe(u)

/**
 * The typed failure for anything a provider call threw or streamed. The
 * error is kept as `cause`, with credentials redacted from its `message`,
 * `stack`, `url` and `responseBody`, and its `requestBodyValues`,
 * `responseBody`, `responseHeaders` and `data` made non-enumerable (readable,
 * but not printed).
 *
 * @example
 * ```ts
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * AiSdkModel.failureOf(new Error("socket hang up")).retryable // true
 * ```
 *
 * @since 0.1.0
 */
export const failureOf = (error: unknown): ModelCallFailed => {
  if (error instanceof ModelCallFailed) return error
  scrub(error)
  if (isApiCallError(error)) {
    const after = retryAfterMillis(error.responseHeaders, Date.now())
    return new ModelCallFailed({
      description: error.message,
      cause: error,
      retryable: error.isRetryable,
      ...(error.statusCode === undefined ? {} : { status: error.statusCode }),
      ...(after === undefined ? {} : { retryAfterMillis: after })
    })
  }
  // Network errors, unfinished streams, unparsable responses: trying again may help.
  return new ModelCallFailed({ description: describeFailure(error), cause: error, retryable: true })
}

/** Own string properties of a provider error that may hold a credential. */
const scrubbed = ["message", "stack", "url", "responseBody"] as const

/** Own properties of a provider error that hold the request or response: readable, not printed. */
const unprinted = ["requestBodyValues", "responseBody", "responseHeaders", "data"] as const

/**
 * Redacts credentials from `error`'s own text properties and hides its
 * request and response bodies from printing, in place (the error was made
 * for this one call). Properties that cannot be changed are left as they are.
 */
const scrub = (error: unknown): void => {
  if (typeof error !== "object" || error === null) return
  for (const key of scrubbed) {
    // Read, not looked up: V8's `stack` is an accessor, and a message may be a getter.
    const value = read(error, key)
    if (typeof value !== "string") continue
    const safe = redactSecrets(value)
    if (safe === value) continue
    const enumerable = Object.getOwnPropertyDescriptor(error, key)?.enumerable ?? false
    redefine(error, key, { value: safe, writable: true, configurable: true, enumerable })
  }
  for (const key of unprinted) {
    const descriptor = Object.getOwnPropertyDescriptor(error, key)
    if (descriptor?.enumerable === true) redefine(error, key, { ...descriptor, enumerable: false })
  }
}

/** `target[key]`, or `undefined` when reading it throws. */
const read = (target: object, key: string): unknown => {
  try {
    return Reflect.get(target, key)
  } catch {
    return undefined
  }
}

const redefine = (target: object, key: string, descriptor: PropertyDescriptor): void => {
  try {
    Object.defineProperty(target, key, descriptor)
  } catch {
    // a frozen or sealed error: nothing to do
  }
}

const isErrorNamed = (u: unknown, names: ReadonlySet<string>): u is Error => u instanceof Error && names.has(u.name)

/** Errors JavaScript throws for a value it cannot serialise (too deep, cyclic, a BigInt, …). */
const serialisationErrors: ReadonlySet<string> = new Set(["RangeError", "TypeError"])

/** The AI SDK's errors for a prompt or call options the provider refuses before sending anything. */
const refusedPromptErrors: ReadonlySet<string> = new Set([
  "AI_InvalidPromptError",
  "AI_UnsupportedFunctionalityError",
  "AI_InvalidArgumentError"
])

/** A `TypeError` from the network (`fetch failed`, a reset socket, …): trying again may help. */
const isNetworkError = (error: Error): boolean =>
  /fetch|network|socket|terminated|connect|timed? ?out|abort/i.test(error.message) ||
  typeof (error.cause as { readonly code?: unknown } | undefined)?.code === "string"

/**
 * The failure for a request that could not be built from `prompt`: our own
 * mapping threw, or the provider threw while serialising it. Not retryable.
 */
const unbuildable = (error: unknown): ModelCallFailed => {
  scrub(error)
  const what = error instanceof Error ? `${error.name}: ${error.message}` : describe(error)
  return new ModelCallFailed({
    description: isErrorNamed(error, refusedPromptErrors)
      ? `the provider refused this prompt before sending it (${what}); it is not retried, since the same ` +
        "prompt fails the same way: change the prompt or the call options"
      : `the provider request could not be built from this prompt (${what}); it is not retried, since the same ` +
        "prompt fails the same way: look in the chain for tool arguments or results that are nested too deeply, " +
        "cyclic, or hold values JSON cannot represent (a BigInt, a function)",
    cause: error,
    retryable: false
  })
}

/** The failure for what `doGenerate` / `doStream` rejected with. */
const callFailureOf = (error: unknown): ModelCallFailed =>
  isErrorNamed(error, refusedPromptErrors) ||
    (isErrorNamed(error, serialisationErrors) && !isNetworkError(error))
    ? unbuildable(error)
    : failureOf(error)

// -----------------------------------------------------------------------------
// The ChatModel
// -----------------------------------------------------------------------------

const timedOut = (timeout: Duration.Duration) =>
  new ModelCallFailed({
    description: `no complete response within ${Duration.format(timeout)}; raise the bridge's timeout option or retry`,
    cause: undefined,
    retryable: true
  })

/**
 * A `ChatModel` calling `model`. Fails with `InvalidInput` when `model` is
 * not a v4 language model (`model.specificationVersion`).
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai"
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const model = AiSdkModel.make(createOpenAI({ apiKey: "sk-..." }).chat("gpt-4.1-mini"))
 * ```
 *
 * @since 0.1.0
 */
export const make = (
  model: LanguageModelV4,
  options?: Options
): Effect.Effect<ChatModel["Service"], InvalidInput> => {
  const version: unknown = (model as { readonly specificationVersion?: unknown } | null)?.specificationVersion
  if (version !== "v4") {
    return Effect.fail(
      new InvalidInput({
        field: "model",
        rule: "an AI SDK language model of specification v4 (the @ai-sdk/* 4.x providers used by ai 7); " +
          "upgrade the provider package",
        value: version
      })
    )
  }
  const timeout = options?.timeout === undefined ? undefined : Duration.fromInputUnsafe(options.timeout)
  const bounded = <A>(effect: Effect.Effect<A, ModelCallFailed>): Effect.Effect<A, ModelCallFailed> =>
    timeout === undefined
      ? effect
      : Effect.timeoutOrElse(effect, { duration: timeout, orElse: () => Effect.fail(timedOut(timeout)) })
  // The request is built before the call: a prompt it cannot be built from fails at once, not retried.
  const built = (request: GenerateRequest) => Effect.try({ try: () => callOptions(request, options), catch: unbuildable })
  const generate = (request: GenerateRequest) =>
    bounded(
      built(request).pipe(
        Effect.flatMap((call) =>
          Effect.tryPromise({
            try: (signal) => model.doGenerate({ ...call, abortSignal: signal }),
            catch: callFailureOf
          })
        ),
        Effect.flatMap((result) =>
          result.finishReason.unified === "interrupted"
            ? Effect.fail(unfinished)
            : Effect.succeed(fromProviderContent(result.content, result.finishReason, result.usage))
        )
      )
    )
  const stream = (request: GenerateRequest): Stream.Stream<Response.AnyPart, ModelCallFailed> => {
    const parts = Stream.unwrap(
      built(request).pipe(
        Effect.flatMap((call) =>
          Effect.tryPromise({
            try: (signal) => model.doStream({ ...call, abortSignal: signal }),
            catch: callFailureOf
          })
        ),
        Effect.map((result) => {
          let finished = false
          return Stream.fromReadableStream({ evaluate: () => result.stream, onError: failureOf }).pipe(
            Stream.mapEffect((part) => {
              // A stream the provider saw cut off ends with an "interrupted" finish: not an answer.
              if (part.type === "finish" && part.finishReason.unified === "interrupted") return Effect.fail(unfinished)
              const mapped = streamPart(part)
              if (mapped instanceof ModelCallFailed) return Effect.fail(mapped)
              if (mapped?.type === "finish") finished = true
              return Effect.succeed(mapped)
            }),
            Stream.filter((part): part is Response.AnyPart => part !== undefined),
            Stream.concat(Stream.suspend(() => finished ? Stream.empty : Stream.fail(unfinished)))
          )
        })
      )
    )
    // The whole stream is bounded, not each wait for the next part.
    return timeout === undefined
      ? parts
      : Stream.interruptWhen(parts, Effect.andThen(Effect.sleep(timeout), Effect.fail(timedOut(timeout))))
  }
  return Effect.succeed(ChatModel.of({ info: { provider: model.provider, model: model.modelId }, generate, stream }))
}

const unfinished = new ModelCallFailed({
  description: "the response stream ended before its finish part; the response is incomplete",
  cause: undefined,
  retryable: true
})

/**
 * A layer providing `ChatModel` through an AI SDK language model.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { createOpenAI } from "@ai-sdk/openai"
 * import { Chain, Mode, ModelRetry } from "loopwork"
 * import { ChatModel } from "loopwork/ai-sdk"
 *
 * const Model = ChatModel.fromAiSdk(createOpenAI({ apiKey: process.env.OPENAI_API_KEY ?? "" }).chat("gpt-4.1-mini"))
 * const answer = Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule() }).pipe(
 *   Effect.provide(Model)
 * )
 * ```
 *
 * @since 0.1.0
 */
export const fromAiSdk = (model: LanguageModelV4, options?: Options): Layer.Layer<ChatModel, InvalidInput> =>
  Layer.effect(ChatModel, make(model, options))

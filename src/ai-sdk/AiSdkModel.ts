/**
 * The bridge from Vercel AI SDK providers to the `ChatModel` port. Every
 * language model of the AI SDK's provider specifications v2, v3 and v4
 * becomes a `ChatModel`, for whole responses (`doGenerate`) and streams
 * (`doStream`):
 *
 * | `@ai-sdk/*` providers | used by | specification |
 * |---|---|---|
 * | 4.x | `ai` 7 | v4 |
 * | 3.x | `ai` 6 | v3 |
 * | 2.x | `ai` 5 | v2 |
 *
 * The providers are `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/google`,
 * `@ai-sdk/openai-compatible` (for Ollama, vLLM or llama.cpp), and so on.
 *
 * The three versions give the same results, usage, finish reasons and
 * failures, and the provider is sent the same request: a v2 or v3 model is
 * seen as a v4 one, once, in `make` (file data goes bare; a failed tool
 * result goes as the JSON `{ "error": … }` the 4.x packages send, where the
 * older OpenAI packages would send the bare value; v2's string finish
 * reasons and flat usage come back in v4's shape). A v4 model is called as
 * it is. Anything else (a v1
 * model of `ai` 4, a plain object) is a type error, and from JavaScript an
 * `InvalidInput`. The types come from `@ai-sdk/provider` 4, which exports
 * all three; a provider's own nested copy of `@ai-sdk/provider` 2 or 3 is
 * fine.
 *
 * The bridge calls the provider directly, without the `ai` package: it makes
 * exactly one HTTP request per model call. Retries are the run's business
 * (`retry: ModelRetry.schedule()`), so they run on Effect's clock.
 *
 * What is mapped:
 * - tools: each tool's parameter Schema becomes the JSON Schema the provider
 *   is sent; the tool choice is kept (`oneOf` sends only those tools);
 * - a run's `output` in the native strategy: the request's `responseFormat`
 *   becomes the provider's JSON response format with the Schema;
 * - messages: system, user (text and files), assistant (text, reasoning,
 *   tool calls), tool results (JSON or text, failures as error results). A
 *   long conversation is converted a step at a time: each call converts only
 *   the messages added since the last, so the conversion does not grow with
 *   the history. The provider gets a new array each call, but its
 *   messages are shared between calls and frozen: a middleware that changes
 *   a message must copy it;
 * - the response: text, reasoning, tool calls (arguments parsed from JSON; a
 *   malformed argument text is passed on as a string, which the tool's
 *   Schema rejects, so the model is told and can correct itself), usage,
 *   the finish reason (one of effect/ai's: a `unified` reason the provider
 *   makes up, or none, is "other"), and the response's id, model and time (a
 *   `response-metadata` part, whole or streamed, from which a traced run's
 *   `chat` span takes `gen_ai.response.id` and `gen_ai.response.model`; the
 *   id and model are cut to 256 characters, credentials redacted);
 * - errors: `LoopError.ModelCallFailed` with the provider's message, the HTTP
 *   `status` (when the error's `statusCode` is one: an integer from 100 to
 *   599), `retryAfterMillis` (from `retry-after-ms` / `retry-after`) and
 *   `retryable`; an error whose fields cannot be read, and a response or
 *   stream part that cannot be (`null`, a getter that throws), fail the call
 *   too, never die; an unfinished stream (no finish part, or the provider's
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
  LanguageModelV2,
  LanguageModelV3,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import { Duration, Effect, Layer, Stream } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import { ChatModel, type GenerateRequest } from "../ChatModel.ts"
import { InvalidInput, ModelCallFailed } from "../LoopError.ts"
import * as Errors from "./internal/errors.ts"
import * as FromProvider from "./internal/fromProvider.ts"
import { convertedOrInvalid } from "./internal/convertedOrInvalid.ts"
import * as OlderSpecs from "./internal/olderSpecs.ts"
import { makePromptCache } from "./internal/promptCache.ts"
import * as ToProvider from "./internal/toProvider.ts"

/**
 * Options of {@link fromAiSdk}.
 *
 * - `timeout`: the longest a model call may take (a whole stream included);
 *   past it the call fails with a retryable `ModelCallFailed` and the
 *   request is aborted.
 * - `structuredOutputs`: the model has a JSON mode for a run's `output`
 *   (default: true for `openai.*` providers).
 * - `strictTools`: every tool is sent in OpenAI's strict form (all
 *   properties required, no others allowed) and marked `strict`, so the
 *   provider's constrained decoding always produces arguments its Schema
 *   accepts. A call whose tools include one without that form (an optional
 *   key, a record) fails before it is sent, naming the tool; it is not
 *   retried. Specification v3 and v4 models send the mark; a v2 model has
 *   no place for it, so `@ai-sdk/openai` 2.x is told through its own
 *   `providerOptions.openai.strictJsonSchema`, set to true unless you set
 *   it — or a run's `output` in the provider's JSON mode did: on 2.x that one
 *   option covers the response format and the tools, so a format with no
 *   strict form leaves the tools unmarked too.
 * - `callOptions`: passed to every call as they are (`temperature`,
 *   `maxOutputTokens`, `providerOptions`, `headers`, …). `reasoning` is a
 *   v4 option: a v2 or v3 model ignores it (use its `providerOptions`).
 *
 * @example
 * ```ts
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const options: AiSdkModel.Options = { timeout: "60 seconds", strictTools: true, callOptions: { temperature: 0 } }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly timeout?: Duration.Input | undefined
  /**
   * Whether the model answers in the provider's JSON mode with a Schema
   * (`responseFormat`), which `StructuredOutput`'s `"auto"` strategy then
   * uses. Default: true for OpenAI's models (`openai.*` providers), false
   * for others.
   */
  readonly structuredOutputs?: boolean | undefined
  /** Tools in OpenAI's strict form, marked `strict` (default false). */
  readonly strictTools?: boolean | undefined
  readonly callOptions?: Omit<LanguageModelV4CallOptions, "prompt" | "tools" | "toolChoice" | "abortSignal"> | undefined
}

/**
 * The AI SDK language models the bridge takes: those of provider
 * specifications v2 (`@ai-sdk/*` 2.x, `ai` 5), v3 (3.x, `ai` 6) and v4
 * (4.x, `ai` 7). A model typed by its provider's own nested copy of
 * `@ai-sdk/provider` 2 or 3 is one too.
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai"
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * const model: AiSdkModel.LanguageModel = createOpenAI({ apiKey: "sk-..." }).chat("gpt-4.1-mini")
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type LanguageModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4

// -----------------------------------------------------------------------------
// Request: effect/ai prompt and tools → provider call options
// -----------------------------------------------------------------------------

/**
 * The provider prompt of an `effect/ai` prompt. Provider-executed tool calls
 * and results stay with their provider, and effect/ai's approval parts
 * (`tool-approval-request`, `tool-approval-response`) are left out: a
 * transcript may come from a client or a stored document, and never grants
 * an approval. A tool message left with nothing is left out too. Throws
 * `InvalidInput` for what is not a prompt (from JavaScript).
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
 * @category utils
 * @since 0.1.0
 */
export const toProviderPrompt: (prompt: Prompt.Prompt) => LanguageModelV4Prompt = convertedOrInvalid(
  "prompt",
  "must be an effect/ai Prompt (Prompt.make)",
  ToProvider.toProviderPrompt
)

/**
 * The provider's function tools for `tools`: name, description and the JSON
 * Schema of the parameters (computed once per tool list). Throws
 * `InvalidInput` for what is not a list of tools (from JavaScript).
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
 * @category utils
 * @since 0.1.0
 */
export const toProviderTools: (tools: ReadonlyArray<Tool.Any>) => ReadonlyArray<LanguageModelV4FunctionTool> = convertedOrInvalid(
  "tools",
  "must be a list of effect/ai tools (Tool.make)",
  (tools: ReadonlyArray<Tool.Any>) => ToProvider.toProviderTools(tools)
)

// -----------------------------------------------------------------------------
// Response: provider content → effect/ai response parts
// -----------------------------------------------------------------------------

/**
 * The response parts of a provider's whole response; given the result's
 * `response` (its id, model id and time), a `response-metadata` part comes
 * first. The finish reason is one of effect/ai's: the provider's when it is
 * one (v4's `unified`, or a bare v2-style string), else "other" (a made-up,
 * missing or "interrupted" `unified` reason). Throws `InvalidInput` for
 * content, or a finish reason, of the wrong shape (from JavaScript); usage
 * counts that are not integers are left out.
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
 * @category constructors
 * @since 0.1.0
 */
export const fromProviderContent: typeof FromProvider.fromProviderContent = convertedOrInvalid(
  "content",
  "must be a provider's content parts with its finish reason and usage",
  FromProvider.fromProviderContent
)

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

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
 * @category utils
 * @since 0.1.0
 */
export const retryAfterMillis = Errors.retryAfterMillis

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
 * @category utils
 * @since 0.1.0
 */
export const failureOf = Errors.failureOf

// -----------------------------------------------------------------------------
// The ChatModel
// -----------------------------------------------------------------------------

/**
 * A `ChatModel` calling `model`, a language model of provider specification
 * v2, v3 or v4 (see {@link LanguageModel}). A v4 model is called as it is; a
 * v2 or v3 model is seen as a v4 one through a small adapter made once, here,
 * so a run gets the same results, usage, finish reasons and failures, and the
 * provider is sent the same requests, whichever line the package is of.
 * Fails with `InvalidInput` for anything else: a model of another
 * specification (`specificationVersion` "v1" of `ai` 4, …), or a value
 * without `doGenerate` and `doStream` methods.
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai"
 * import { AiSdkModel } from "loopwork/ai-sdk"
 *
 * // @ai-sdk/openai 4.x (v4), 3.x (v3) or 2.x (v2): the same call
 * const model = AiSdkModel.make(createOpenAI({ apiKey: "sk-..." }).chat("gpt-4.1-mini"))
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (model: LanguageModel, options?: Options): Effect.Effect<ChatModel["Service"], InvalidInput> => {
  const refused = refusal(model)
  return refused === undefined ? Effect.succeed(service(OlderSpecs.asV4(model), options)) : Effect.fail(refused)
}

/** `object[key]`, or `undefined` for a value that is not an object or a property that throws when read. */
const property = (object: unknown, key: string): unknown => {
  if ((typeof object !== "object" && typeof object !== "function") || object === null) return undefined
  try {
    return (object as Record<string, unknown>)[key]
  } catch {
    return undefined
  }
}

/** Why `model` (from a JavaScript caller, perhaps) is not a language model the bridge takes, if it is not. */
const refusal = (model: unknown): InvalidInput | undefined => {
  const version = property(model, "specificationVersion")
  if (version !== "v2" && version !== "v3" && version !== "v4") {
    return new InvalidInput({
      field: "model",
      rule: "an AI SDK language model of specification v2, v3 or v4 (the @ai-sdk/* 2.x, 3.x or 4.x providers " +
        "used by ai 5, 6 and 7); its specificationVersion is not one of them",
      value: version
    })
  }
  const doGenerate = typeof property(model, "doGenerate")
  const doStream = typeof property(model, "doStream")
  if (doGenerate !== "function" || doStream !== "function") {
    return new InvalidInput({
      field: "model",
      rule: `an AI SDK language model of specification ${version} has doGenerate and doStream methods; ` +
        "pass the model a provider returns (e.g. createOpenAI(...).chat(id)), not a plain object",
      // What was found, not the value itself: a model object may hold its provider's settings.
      value: { specificationVersion: version, doGenerate, doStream }
    })
  }
  return undefined
}

/**
 * How many conversations' provider prompts a model keeps, to convert only
 * each step's new messages (internal/promptCache.ts); beyond that, a new
 * conversation takes the oldest one's place.
 */
const promptCacheSize = 32

/** The `ChatModel` of a (v4, or seen as v4) model. */
const service = (model: LanguageModelV4, options: Options | undefined): ChatModel["Service"] => {
  const timeout = options?.timeout === undefined ? undefined : Duration.fromInputUnsafe(options.timeout)
  // The request is built before the call: a prompt it cannot be built from fails at once, not retried.
  const convert = makePromptCache(promptCacheSize)
  const strictTools = options?.strictTools === true
  // Built when the call is asked for (generate and stream are called by a running loop): an Exit, not a step of the runtime.
  const built: Build = (request) => {
    try {
      return Effect.succeed(ToProvider.callOptions(request, options?.callOptions, convert, strictTools))
    } catch (error) {
      return Effect.fail(error instanceof ToProvider.NotStrictTool ? Errors.notStrict(error.tool, error.reason) : Errors.unbuildable(error))
    }
  }
  return ChatModel.of({
    info: {
      provider: model.provider,
      model: model.modelId,
      structuredOutputs: options?.structuredOutputs ?? (typeof model.provider === "string" && model.provider.startsWith("openai."))
    },
    generate: generateWith(model, built, timeout),
    stream: streamWith(model, built, timeout)
  })
}

/** Builds the provider call of a request (failing, not retryable, when it cannot be built). */
type Build = (request: GenerateRequest) => Effect.Effect<LanguageModelV4CallOptions, ModelCallFailed>

/** `effect`, failing with a retryable `ModelCallFailed` past `timeout` (when there is one). */
const bounded = <A>(
  timeout: Duration.Duration | undefined,
  effect: Effect.Effect<A, ModelCallFailed>
): Effect.Effect<A, ModelCallFailed> =>
  timeout === undefined
    ? effect
    : Effect.timeoutOrElse(effect, { duration: timeout, orElse: () => Effect.fail(Errors.timedOut(timeout)) })

/** `ChatModel.generate` through `doGenerate`: one whole response; an "interrupted" finish is a retryable failure. */
const generateWith = (model: LanguageModelV4, built: Build, timeout: Duration.Duration | undefined) =>
  (request: GenerateRequest): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelCallFailed> =>
    bounded(
      timeout,
      built(request).pipe(
        Effect.flatMapEager((call) =>
          Effect.tryPromise({
            try: (signal) => model.doGenerate({ ...call, abortSignal: signal }),
            catch: Errors.callFailureOf
          })
        ),
        Effect.flatMap(responseOf)
      )
    )

/**
 * A whole response's parts. The provider's result is hostile: one that
 * cannot be read (a `finishReason` or `content` missing or of the wrong
 * type) fails the call, not retried, instead of dying; a `unified` reason
 * effect/ai does not have (or none) is "other".
 */
const responseOf = (result: LanguageModelV4GenerateResult): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelCallFailed> => {
  try {
    return FromProvider.isInterrupted(result.finishReason)
      ? Effect.fail(Errors.unfinished)
      : Effect.succeed(FromProvider.fromProviderContent(result.content, result.finishReason, result.usage, result.response))
  } catch (error) {
    return Effect.fail(Errors.unreadable(error))
  }
}

/**
 * A stream part as a response part (see `FromProvider.streamPart`). The
 * provider's part is hostile: one that cannot be read (a getter that throws)
 * fails the call, not retried, instead of dying.
 */
const arrived = (part: LanguageModelV4StreamPart): Response.AnyPart | ModelCallFailed | undefined => {
  try {
    return FromProvider.streamPart(part)
  } catch (error) {
    return Errors.unreadable(error)
  }
}

/**
 * `ChatModel.stream` through `doStream`: the parts as they come; a stream
 * without its finish part (or with an "interrupted" one) fails, retryable,
 * and the whole stream is bounded by `timeout`.
 */
const streamWith = (model: LanguageModelV4, built: Build, timeout: Duration.Duration | undefined) =>
  (request: GenerateRequest): Stream.Stream<Response.AnyPart, ModelCallFailed> => {
    const parts = Stream.unwrap(
      built(request).pipe(
        Effect.flatMap((call) =>
          Effect.tryPromise({
            try: (signal) => model.doStream({ ...call, abortSignal: signal }),
            catch: Errors.callFailureOf
          })
        ),
        Effect.map((result) => {
          let finished = false
          return Stream.fromReadableStream({ evaluate: () => result.stream, onError: Errors.failureOf }).pipe(
            Stream.mapEffect((part) => {
              const mapped = arrived(part)
              if (mapped instanceof ModelCallFailed) return Effect.fail(mapped)
              if (mapped?.type === "finish") finished = true
              return Effect.succeed(mapped)
            }),
            Stream.filter((part): part is Response.AnyPart => part !== undefined),
            Stream.concat(Stream.suspend(() => finished ? Stream.empty : Stream.fail(Errors.unfinished)))
          )
        })
      )
    )
    // The whole stream is bounded, not each wait for the next part.
    return timeout === undefined
      ? parts
      : Stream.interruptWhen(parts, Effect.andThen(Effect.sleep(timeout), Effect.fail(Errors.timedOut(timeout))))
  }

/**
 * A layer providing `ChatModel` through an AI SDK language model of
 * specification v2, v3 or v4 (`@ai-sdk/*` 2.x, 3.x or 4.x): {@link make} as
 * a layer, failing with `InvalidInput` for anything else.
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
 * @category constructors
 * @since 0.1.0
 */
export const fromAiSdk = (model: LanguageModel, options?: Options): Layer.Layer<ChatModel, InvalidInput> =>
  Layer.effect(ChatModel, make(model, options))

/**
 * The one port to a language model.
 *
 * `generate` takes the conversation so far, the tools the model may call and a
 * tool choice, and returns one model turn as `effect/ai` `Response` parts. Tool
 * calls come back **unresolved**: running tools is the loop's job, not the
 * model's.
 *
 * Layers:
 * - {@link layerLanguageModel}: every `effect/ai` `LanguageModel`.
 * - {@link scripted}: a deterministic model for tests and demos.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Layer, Stream } from "effect"
import { LanguageModel, Prompt, Response, Toolkit } from "effect/ai"
import type { Tool } from "effect/ai"
import * as Parts from "./internal/parts.ts"
import { ModelCallFailed, ScriptExhausted } from "./LoopError.ts"

/**
 * Which tools the model may or must call, as in `effect/ai`.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const choice: ChatModel.ToolChoice = { tool: "search" }
 * ```
 *
 * @since 0.1.0
 */
export type ToolChoice = LanguageModel.ToolChoice<string>

/**
 * One request to the model.
 *
 * @example
 * ```ts
 * import { Prompt } from "effect/ai"
 * import { ChatModel } from "loopwork"
 *
 * const request: ChatModel.GenerateRequest = { prompt: Prompt.make("Hi"), tools: [], toolChoice: "auto" }
 * ```
 *
 * @since 0.1.0
 */
export interface GenerateRequest {
  readonly prompt: Prompt.Prompt
  readonly tools: ReadonlyArray<Tool.Any>
  readonly toolChoice: ToolChoice
}

export {
  /** The scripted model was called more often than it has turns (defined with the loop's other errors). */
  ScriptExhausted
} from "./LoopError.ts"

/**
 * What a model call can fail with.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const tagOf = (error: ChatModel.ChatModelError) => error._tag
 * ```
 *
 * @since 0.1.0
 */
export type ChatModelError = ModelCallFailed | ScriptExhausted

/**
 * Which provider and model a `ChatModel` calls, for traces
 * (`gen_ai.provider.name`, `gen_ai.request.model`) and logs.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const info: ChatModel.ModelInfo = { provider: "openai", model: "gpt-4.1-mini" }
 * ```
 *
 * @since 0.1.0
 */
export interface ModelInfo {
  readonly provider: string
  readonly model: string
}

/**
 * The `ChatModel` service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Prompt } from "effect/ai"
 * import { ChatModel } from "loopwork"
 *
 * const turn = Effect.gen(function*() {
 *   const model = yield* ChatModel.ChatModel
 *   return yield* model.generate({ prompt: Prompt.make("Hi"), tools: [], toolChoice: "auto" })
 * })
 * ```
 *
 * @since 0.1.0
 */
export class ChatModel extends Context.Service<ChatModel, {
  /** Which provider and model answer (used in traces and events), when known. */
  readonly info?: ModelInfo | undefined
  /** One model turn: response parts, tool calls unresolved. */
  readonly generate: (request: GenerateRequest) => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>
  /** The same turn as a stream of parts (text deltas, tool calls, finish). */
  readonly stream: (request: GenerateRequest) => Stream.Stream<Response.AnyPart, ChatModelError>
}>()("loopwork/ChatModel") {}

// -----------------------------------------------------------------------------
// effect/ai LanguageModel adapter
// -----------------------------------------------------------------------------

const toolkits = new WeakMap<ReadonlyArray<Tool.Any>, Toolkit.Any>()
const toolkitOf = (tools: ReadonlyArray<Tool.Any>): Toolkit.Any => {
  let toolkit = toolkits.get(tools)
  if (toolkit === undefined) {
    toolkit = Toolkit.make(...tools)
    toolkits.set(tools, toolkit)
  }
  return toolkit
}

const fromAiError = (error: { readonly message: string }): ModelCallFailed =>
  new ModelCallFailed({ description: error.message, cause: error })

interface DeferredGenerate {
  readonly generateText: (options: {
    readonly prompt: Prompt.Prompt
    readonly toolkit: Toolkit.Any
    readonly toolChoice: ToolChoice
    readonly disableToolCallResolution: true
    readonly toolCallValidation: "deferred"
  }) => Effect.Effect<{ readonly content: ReadonlyArray<Response.AnyPart> }, { readonly message: string }>
  readonly streamText: (options: {
    readonly prompt: Prompt.Prompt
    readonly toolkit: Toolkit.Any
    readonly toolChoice: ToolChoice
    readonly disableToolCallResolution: true
    readonly toolCallValidation: "deferred"
  }) => Stream.Stream<Response.AnyPart, { readonly message: string }>
}

/**
 * The prompt without effect/ai's own approval parts (`tool-approval-request`
 * in assistant messages, `tool-approval-response` in tool messages). The
 * loop owns approvals; left in, effect/ai's `generateText` would run a call
 * the prompt shows as "approved" with the handlers of the run's context,
 * before the provider is called and outside the loop's approval check. A
 * chain's messages may come from a client or a stored document, so they are
 * never trusted to grant that.
 */
const withoutApprovalParts = (prompt: Prompt.Prompt): Prompt.Prompt => {
  let found = false
  for (const message of prompt.content) {
    if (message.role !== "assistant" && message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type === "tool-approval-request" || part.type === "tool-approval-response") found = true
    }
  }
  if (!found) return prompt
  const messages: Array<Prompt.Message> = []
  for (const message of prompt.content) {
    if (message.role === "assistant") {
      const content = message.content.filter((part) => part.type !== "tool-approval-request")
      if (content.length > 0) messages.push(Prompt.makeMessage("assistant", { content, options: message.options }))
    } else if (message.role === "tool") {
      const content = message.content.filter((part) => part.type !== "tool-approval-response")
      if (content.length > 0) messages.push(Prompt.makeMessage("tool", { content, options: message.options }))
    } else messages.push(message)
  }
  return Prompt.fromMessages(messages)
}

/**
 * Adapts any `effect/ai` `LanguageModel` to the `ChatModel` port.
 *
 * It calls `generateText` / `streamText` with `disableToolCallResolution: true`
 * and `toolCallValidation: "deferred"`: an unknown tool name or arguments that
 * fail the tool's schema come back as an ordinary tool call, which the loop
 * answers with an error result the model can correct, instead of failing the
 * request. Provider errors become `ModelCallFailed` (the `AiError` is kept as
 * `cause`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ChatModel } from "loopwork"
 *
 * // `MyProvider` is any layer providing effect/ai's LanguageModel
 * declare const MyProvider: Layer.Layer<import("effect/ai").LanguageModel.LanguageModel>
 * const Model = ChatModel.layerLanguageModel.pipe(Layer.provide(MyProvider))
 * ```
 *
 * @since 0.1.0
 */
export const layerLanguageModel: Layer.Layer<ChatModel, never, LanguageModel.LanguageModel> = Layer.effect(
  ChatModel,
  Effect.map(Effect.service(LanguageModel.LanguageModel), (languageModel) => {
    // The LanguageModel's overloads are generic over the toolkit's tool record;
    // the port works with tools known only at run time, so it uses the
    // deferred-validation shape directly.
    const model = languageModel as unknown as DeferredGenerate
    const optionsOf = (request: GenerateRequest) => ({
      prompt: withoutApprovalParts(request.prompt),
      toolkit: toolkitOf(request.tools),
      toolChoice: request.toolChoice,
      disableToolCallResolution: true as const,
      toolCallValidation: "deferred" as const
    })
    return ChatModel.of({
      generate: (request) =>
        model.generateText(optionsOf(request)).pipe(
          Effect.map((response) => response.content),
          Effect.mapError(fromAiError)
        ),
      stream: (request) => model.streamText(optionsOf(request)).pipe(Stream.mapError(fromAiError))
    })
  })
)

// -----------------------------------------------------------------------------
// Scripted model
// -----------------------------------------------------------------------------

/**
 * One scripted reply: text, tool calls, or both; `fail` makes the call fail
 * with `ModelCallFailed`; `latency` delays it through `Effect.sleep`, so
 * `TestClock` drives it.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const reply: ChatModel.ScriptedReply = {
 *   text: "Let me look that up",
 *   toolCalls: [{ name: "search", params: { query: "effect" } }]
 * }
 * ```
 *
 * @since 0.1.0
 */
export interface ScriptedReply {
  readonly text?: string | undefined
  readonly toolCalls?: ReadonlyArray<{
    readonly name: string
    readonly params?: unknown
    readonly id?: string | undefined
  }> | undefined
  readonly finishReason?: Response.FinishReason | undefined
  /** Token counts to report for this turn (the default reports none). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number } | undefined
  readonly latency?: Duration.Input | undefined
  readonly fail?: string | undefined
}

/**
 * A turn of the script: a fixed reply, or a function of the request (and the
 * 0-based turn index) returning a reply or an Effect of one.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const echoLast: ChatModel.ScriptedTurn = (request) => ({
 *   text: `I saw ${request.prompt.content.length} messages`
 * })
 * ```
 *
 * @since 0.1.0
 */
export type ScriptedTurn =
  | ScriptedReply
  | ((request: GenerateRequest, turn: number) => ScriptedReply | Effect.Effect<ScriptedReply, ModelCallFailed>)

/**
 * Options of {@link scripted}.
 *
 * - `latency`: default delay of every turn (a turn's own `latency` wins).
 * - `repeat`: start over at the first turn when the script runs out, instead
 *   of failing with `ScriptExhausted` (for benchmarks and soak tests).
 * - `record`: how many of the most recent requests to keep (default 1000).
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const options: ChatModel.ScriptedOptions = { latency: "50 millis", record: 10 }
 * ```
 *
 * @since 0.1.0
 */
export interface ScriptedOptions {
  readonly latency?: Duration.Input | undefined
  readonly repeat?: boolean | undefined
  readonly record?: number | undefined
}

/**
 * A scripted model: its `layer` provides `ChatModel`; `requests` lists the
 * requests it received since the layer was last built (oldest first).
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello!" }])
 * // ... run with Effect.provide(model.layer), then:
 * model.requests.length
 * ```
 *
 * @since 0.1.0
 */
export interface ScriptedModel {
  readonly layer: Layer.Layer<ChatModel>
  readonly requests: ReadonlyArray<GenerateRequest>
  readonly calls: number
}

const scriptedInfo: ModelInfo = { provider: "loopwork", model: "scripted" }

const emptyUsage = new Response.Usage({
  inputTokens: { uncached: undefined, total: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined }
})

const usageOf = (usage: { readonly inputTokens: number; readonly outputTokens: number }): Response.Usage =>
  new Response.Usage({
    inputTokens: { uncached: usage.inputTokens, total: usage.inputTokens, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: usage.outputTokens, text: usage.outputTokens, reasoning: undefined }
  })

const replyParts = (reply: ScriptedReply, turn: number): ReadonlyArray<Response.AnyPart> => {
  const parts: Array<Response.AnyPart> = []
  if (reply.text !== undefined) parts.push(Parts.responseText(reply.text))
  const calls = reply.toolCalls ?? []
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]
    parts.push(Parts.responseToolCall(call.id ?? `call_${turn + 1}_${i + 1}`, call.name, call.params ?? {}))
  }
  parts.push(Parts.responseFinish(
    reply.finishReason ?? (calls.length > 0 ? "tool-calls" : "stop"),
    reply.usage === undefined ? emptyUsage : usageOf(reply.usage)
  ))
  return parts
}

const isReply = (turn: unknown): turn is ScriptedReply => typeof turn === "object" && turn !== null && !Array.isArray(turn)

const streamParts = (parts: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> => {
  const out: Array<Response.AnyPart> = []
  for (const part of parts) {
    if (part.type === "text") {
      const id = `text_${out.length}`
      out.push(Response.makePart("text-start", { id }))
      for (const word of part.text.split(/(?<= )/)) out.push(Response.makePart("text-delta", { id, delta: word }))
      out.push(Response.makePart("text-end", { id }))
    } else {
      out.push(part)
    }
  }
  return out
}

const describeLastMessage = (prompt: Prompt.Prompt): string => {
  const last = prompt.content[prompt.content.length - 1]
  if (last === undefined) return "none"
  if (typeof last.content === "string") return `${last.role}: ${last.content}`
  const texts: Array<string> = []
  for (const part of last.content) {
    if (part.type === "text") texts.push(part.text)
    else if (part.type === "tool-result") texts.push(`result of ${part.name}`)
    else if (part.type === "tool-call") texts.push(`call to ${part.name}`)
  }
  return `${last.role}: ${texts.join(" ")}`
}

/**
 * A deterministic model for tests, demos and your own tests.
 *
 * Each call consumes the next turn. Fixed replies are turned into response
 * parts once, up front. Every request (prompt and tools) is recorded for
 * assertions. Running out of turns fails with `ScriptExhausted`, which says
 * how many turns were scripted and which request overran.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode } from "loopwork"
 *
 * const model = ChatModel.scripted([
 *   { toolCalls: [{ name: "search", params: { query: "effect" } }] },
 *   { text: "Effect is a TypeScript library." }
 * ])
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
 * ```
 *
 * @since 0.1.0
 */
export const scripted = (given: ReadonlyArray<ScriptedTurn>, options?: ScriptedOptions): ScriptedModel => {
  // A JavaScript caller may pass anything: the model then fails each call with a message, never throws here.
  const turns: ReadonlyArray<unknown> = Array.isArray(given) ? given : []
  const misuse = Array.isArray(given) ? undefined : `ChatModel.scripted: turns must be an array of replies or functions`
  const fixed = turns.map((turn, index) => isReply(turn) ? replyParts(turn, index) : undefined)
  const record = options?.record ?? 1000
  const defaultLatency = options?.latency
  const repeat = options?.repeat === true
  let requests: Array<GenerateRequest> = []
  let calls = 0

  /** The turn for `request`: resolved at once for fixed and plain function turns, an Effect otherwise. */
  const resolve = (
    request: GenerateRequest
  ): Resolved | Effect.Effect<Resolved, ChatModelError> => {
    const index = repeat && turns.length > 0 ? calls % turns.length : calls
    calls++
    if (record > 0) {
      if (requests.length >= record) requests.shift()
      requests.push(request)
    }
    if (misuse !== undefined) return Effect.fail(new ModelCallFailed({ description: misuse, cause: undefined, retryable: false }))
    const turn = turns[index]
    if (turn === undefined) {
      return Effect.fail(
        new ScriptExhausted({
          scripted: turns.length,
          request: index + 1,
          lastMessage: describeLastMessage(request.prompt)
        })
      )
    }
    if (typeof turn !== "function") {
      if (!isReply(turn)) {
        return Effect.fail(new ModelCallFailed({
          description: `ChatModel.scripted: turn ${index + 1} must be a reply object or a function of the request`,
          cause: undefined,
          retryable: false
        }))
      }
      return { parts: fixed[index]!, reply: turn }
    }
    const produced = (turn as Exclude<ScriptedTurn, ScriptedReply>)(request, index)
    return Effect.isEffect(produced)
      ? Effect.map(produced, (reply) => ({ parts: replyParts(reply, index), reply }))
      : { parts: replyParts(produced, index), reply: produced }
  }

  interface Resolved {
    readonly parts: ReadonlyArray<Response.AnyPart>
    readonly reply: ScriptedReply
  }

  const settle = <A>(reply: ScriptedReply, value: A): Effect.Effect<A, ModelCallFailed> => {
    const latency = reply.latency ?? defaultLatency
    const outcome: Effect.Effect<A, ModelCallFailed> = reply.fail === undefined
      ? Effect.succeed(value)
      : Effect.fail(new ModelCallFailed({ description: reply.fail, cause: undefined }))
    return latency === undefined ? outcome : Effect.andThen(Effect.sleep(latency), outcome)
  }

  const layer = Layer.sync(ChatModel, () => {
    requests = []
    calls = 0
    return ChatModel.of({
      info: scriptedInfo,
      // Suspended: each run of the returned effect consumes a turn, so a
      // caller's Effect.retry / Effect.repeat gets the next turn.
      generate: (request) =>
        Effect.suspend(() => {
          const resolved = resolve(request)
          return Effect.isEffect(resolved)
            ? Effect.flatMap(resolved, ({ parts, reply }) => settle(reply, parts))
            : settle(resolved.reply, resolved.parts)
        }),
      stream: (request) =>
        Stream.unwrap(Effect.suspend(() => {
          const resolved = resolve(request)
          return Effect.isEffect(resolved)
            ? Effect.flatMap(resolved, ({ parts, reply }) => settle(reply, Stream.fromIterable(streamParts(parts))))
            : settle(resolved.reply, Stream.fromIterable(streamParts(resolved.parts)))
        }))
    })
  })

  return {
    layer,
    get requests() {
      return requests
    },
    get calls() {
      return calls
    }
  }
}

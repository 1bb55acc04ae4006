/**
 * The model port: the `ChatModel` service and the request it takes. The
 * public `ChatModel` module re-exports it with the effect/ai adapter.
 *
 * @internal
 */
import { Context } from "effect"
import type { Effect, Stream } from "effect"
import type { JsonSchema } from "effect"
import type * as LanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import type { ModelCallFailed, ScriptExhausted } from "../LoopError.ts"

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
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface GenerateRequest {
  readonly prompt: Prompt.Prompt
  readonly tools: ReadonlyArray<Tool.Any>
  readonly toolChoice: ToolChoice
  /**
   * Present when the run asks for its answer as JSON matching a Schema in
   * the provider's own JSON mode (`StructuredOutput` with the `"native"`
   * strategy). A model that has no such mode ignores it; the run still
   * decodes and, on a mismatch, asks again.
   */
  readonly responseFormat?: ResponseFormat | undefined
}

/**
 * The JSON answer a request asks for: the JSON Schema of the run's output,
 * a name for it, and a description.
 *
 * @example
 * ```ts
 * import { ChatModel } from "loopwork"
 *
 * const format: ChatModel.ResponseFormat = {
 *   name: "person",
 *   schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false }
 * }
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export interface ResponseFormat {
  readonly name: string
  readonly description?: string | undefined
  readonly schema: JsonSchema.JsonSchema
  /** Whether `schema` is in OpenAI's strict form: a provider that enforces schemas should only then (default false). */
  readonly strict?: boolean | undefined
}

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
 * @category errors
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
 * @category models
 * @since 0.1.0
 */
export interface ModelInfo {
  readonly provider: string
  readonly model: string
  /**
   * The model answers a request's `responseFormat` in the provider's own
   * JSON mode; `StructuredOutput`'s `"auto"` strategy then uses it instead
   * of a final-answer tool.
   */
  readonly structuredOutputs?: boolean | undefined
}

/**
 * @internal a model's `info` as the loop reads it: a copy, or `undefined`
 * when there is none or it cannot be read (a JavaScript model's getter that
 * throws); a name that is not a string reads as "unknown"
 */
export const infoOf = (model: { readonly info?: ModelInfo | undefined } | undefined): ModelInfo | undefined => {
  try {
    const info: unknown = model?.info
    if (typeof info !== "object" || info === null) return undefined
    const { model: name, provider, structuredOutputs } = info as Partial<Record<keyof ModelInfo, unknown>>
    return {
      provider: typeof provider === "string" ? provider : "unknown",
      model: typeof name === "string" ? name : "unknown",
      structuredOutputs: structuredOutputs === true
    }
  } catch {
    return undefined
  }
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
 * @category services
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

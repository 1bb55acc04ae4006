/**
 * The effect/ai `LanguageModel` adapter: `layerLanguageModel` provides the
 * `ChatModel` port over any `LanguageModel`, tool calls left unresolved.
 *
 * @internal
 */
import { Effect, Layer, Option, Stream } from "effect"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Model from "effect/ai/Model"
import * as Prompt from "effect/ai/Prompt"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import { ChatModel, type GenerateRequest, type ModelInfo, type ToolChoice } from "./chatModel.ts"
import { ModelCallFailed } from "../LoopError.ts"

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
 * The provider and model a `Model.make` layer reports (`Model.ProviderName`,
 * `Model.ModelName`), for spans and logs; `undefined` when it reports no
 * provider.
 */
const modelInfo: Effect.Effect<ModelInfo | undefined> = Effect.map(
  Effect.all([Effect.serviceOption(Model.ProviderName), Effect.serviceOption(Model.ModelName)]),
  ([provider, model]) =>
    Option.isSome(provider) ? { provider: provider.value, model: Option.getOrElse(model, () => "unknown") } : undefined
)

/**
 * Adapts any `effect/ai` `LanguageModel` to the `ChatModel` port.
 *
 * It calls `generateText` / `streamText` with `disableToolCallResolution: true`
 * and `toolCallValidation: "deferred"`: an unknown tool name or arguments that
 * fail the tool's schema come back as an ordinary tool call, which the loop
 * answers with an error result the model can correct, instead of failing the
 * request. Provider errors become `ModelCallFailed` (the `AiError` is kept as
 * `cause`). The provider and model names a `Model.make` layer reports
 * (`Model.ProviderName`, `Model.ModelName`) become the port's `info`, so
 * spans name them.
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
 * @category constructors
 * @since 0.1.0
 */
export const layerLanguageModel: Layer.Layer<ChatModel, never, LanguageModel.LanguageModel> = Layer.effect(
  ChatModel,
  Effect.map(Effect.all([Effect.service(LanguageModel.LanguageModel), modelInfo]), ([languageModel, info]) => {
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
      ...(info === undefined ? {} : { info }),
      generate: (request) =>
        model.generateText(optionsOf(request)).pipe(
          Effect.map((response) => response.content),
          Effect.mapError(fromAiError)
        ),
      stream: (request) => model.streamText(optionsOf(request)).pipe(Stream.mapError(fromAiError))
    })
  })
)

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
 * - `loopwork/ai-sdk`'s `ChatModel.fromAiSdk`: every AI SDK provider model.
 * - For tests and demos, `ScriptedModel` from `loopwork/testing`: a
 *   deterministic model (`ScriptedModel.make(turns)`) and one answering exact
 *   response parts (`ScriptedModel.raw(turns)`). The `scripted` family here
 *   are its deprecated aliases, kept for one version.
 *
 * @since 0.1.0
 */
import { ScriptExhausted as ScriptExhaustedClass } from "./LoopError.ts"
import * as Scripted from "./internal/scripted.ts"

export {
  ChatModel,
  type ChatModelError,
  type GenerateRequest,
  type ModelInfo,
  type ResponseFormat,
  type ToolChoice
} from "./internal/chatModel.ts"
export { layerLanguageModel } from "./internal/languageModel.ts"

// -----------------------------------------------------------------------------
// Deprecated: the scripted model, now `ScriptedModel` in loopwork/testing
// -----------------------------------------------------------------------------

/**
 * One scripted reply: text, tool calls, or both.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.Reply` from "loopwork/testing"
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const reply: ScriptedModel.Reply = { text: "Let me look that up", toolCalls: [{ name: "search" }] }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type ScriptedReply = Scripted.Reply

/**
 * A turn of the script: a fixed reply, or a function of the request.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.Turn` from "loopwork/testing"
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const turn: ScriptedModel.Turn = (request) => ({ text: `${request.prompt.content.length} messages` })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type ScriptedTurn = Scripted.Turn

/**
 * Options of the scripted model: `latency`, `repeat`, `record`.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.Options` from "loopwork/testing"
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const options: ScriptedModel.Options = { latency: "50 millis", record: 10 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type ScriptedOptions = Scripted.Options

/**
 * A scripted model: its `layer`, the `requests` it received, its `calls`.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.ScriptedModel` from "loopwork/testing"
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model: ScriptedModel.ScriptedModel = ScriptedModel.make([{ text: "Hello!" }])
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type ScriptedModel = Scripted.ScriptedModel

/**
 * The scripted model was called more often than it has turns (defined with
 * the loop's other errors, `LoopError.ScriptExhausted`).
 *
 * @deprecated since 0.2.0: use `ScriptedModel.ScriptExhausted` from "loopwork/testing" (or `LoopError.ScriptExhausted`)
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const isExhausted = (error: unknown) => error instanceof ScriptedModel.ScriptExhausted
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const ScriptExhausted: typeof ScriptExhaustedClass = ScriptExhaustedClass

/**
 * The scripted model was called more often than it has turns.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.ScriptExhausted` from "loopwork/testing" (or `LoopError.ScriptExhausted`)
 *
 * @category models
 * @since 0.1.0
 */
export type ScriptExhausted = ScriptExhaustedClass

/**
 * A deterministic model for tests and demos: `ScriptedModel.make`, whose
 * misuse messages name `ChatModel.scripted`.
 *
 * @deprecated since 0.2.0: use `ScriptedModel.make` from "loopwork/testing"
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model = ScriptedModel.make([{ text: "Effect is a TypeScript library." }])
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const scripted = (given: ReadonlyArray<ScriptedTurn>, options?: ScriptedOptions): ScriptedModel =>
  Scripted.makeNamed("ChatModel.scripted", given, options)

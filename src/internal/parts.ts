/**
 * Prompt and Response parts for the hot path, built as object literals of one
 * fixed shape. `Prompt.makePart` / `Response.makePart` spread their
 * parameters into a new object with a computed key on every call, which cost
 * ~14% of a loop step in the W1 profile. The objects made here are equal to
 * theirs (same keys and values); `test/internal/parts.test.ts` checks that, so a
 * change in effect/ai fails a test instead of drifting silently.
 *
 * @internal
 */
import * as Response from "effect/ai/Response"
import type * as Prompt from "effect/ai/Prompt"

const PromptPart = "~effect/ai/Prompt/Part" as const
const PromptMessage = "~effect/ai/Prompt/Message" as const
const ResponsePart = "~effect/ai/Response/Part" as const

const none = {}

/** @internal */
export const textPart = (text: string, options: Prompt.ProviderOptions | undefined): Prompt.TextPart =>
  ({ text, options: options ?? none, [PromptPart]: PromptPart, type: "text" }) as unknown as Prompt.TextPart

/** @internal */
export const toolCallPart = (
  id: string,
  name: string,
  params: unknown,
  providerExecuted: boolean,
  options: Prompt.ProviderOptions | undefined
): Prompt.ToolCallPart =>
  ({ id, name, params, providerExecuted, options: options ?? none, [PromptPart]: PromptPart, type: "tool-call" }) as unknown as Prompt.ToolCallPart

/** @internal */
export const toolResultPart = (id: string, name: string, isFailure: boolean, result: unknown): Prompt.ToolResultPart =>
  ({
    id,
    name,
    isFailure,
    result,
    providerExecuted: false,
    options: none,
    [PromptPart]: PromptPart,
    type: "tool-result"
  }) as unknown as Prompt.ToolResultPart

/** @internal */
export const assistantMessage = (content: ReadonlyArray<Prompt.AssistantMessagePart>): Prompt.AssistantMessage =>
  ({ content, options: none, [PromptMessage]: PromptMessage, role: "assistant" }) as unknown as Prompt.AssistantMessage

/** @internal */
export const toolMessage = (content: ReadonlyArray<Prompt.ToolMessagePart>): Prompt.ToolMessage =>
  ({ content, options: none, [PromptMessage]: PromptMessage, role: "tool" }) as unknown as Prompt.ToolMessage

/** @internal */
export const responseText = (text: string): Response.TextPart =>
  ({ text, metadata: none, [ResponsePart]: ResponsePart, type: "text" }) as unknown as Response.TextPart

/** @internal the start of a streamed text (`Response.makePart("text-start", { id })`) */
export const responseTextStart = (id: string): Response.TextStartPart =>
  ({ id, metadata: none, [ResponsePart]: ResponsePart, type: "text-start" }) as unknown as Response.TextStartPart

/** @internal a piece of a streamed text (`Response.makePart("text-delta", { id, delta })`) */
export const responseTextDelta = (id: string, delta: string): Response.TextDeltaPart =>
  ({ id, delta, metadata: none, [ResponsePart]: ResponsePart, type: "text-delta" }) as unknown as Response.TextDeltaPart

/** @internal the end of a streamed text (`Response.makePart("text-end", { id })`) */
export const responseTextEnd = (id: string): Response.TextEndPart =>
  ({ id, metadata: none, [ResponsePart]: ResponsePart, type: "text-end" }) as unknown as Response.TextEndPart

/** @internal */
export const responseToolCall = (id: string, name: string, params: unknown): Response.ToolCallPart<string, unknown> =>
  ({
    id,
    name,
    params,
    providerExecuted: false,
    metadata: none,
    [ResponsePart]: ResponsePart,
    type: "tool-call"
  }) as unknown as Response.ToolCallPart<string, unknown>

/** @internal */
export const responseFinish = (reason: Response.FinishReason, usage: Response.Usage): Response.FinishPart =>
  ({
    reason,
    usage,
    response: undefined,
    metadata: none,
    [ResponsePart]: ResponsePart,
    type: "finish"
  }) as unknown as Response.FinishPart

/** A token count as `Response.Usage` holds it (a whole number, not below 0), else `undefined`: a provider's count is hostile input. */
const count = (value: unknown): number | undefined => Number.isSafeInteger(value) && (value as number) >= 0 ? value as number : undefined

/** @internal Token counts, as given or `undefined` (a count that is not a whole number of 0 or more is left out). */
export interface Counts {
  readonly inputTotal?: unknown
  readonly inputUncached?: unknown
  readonly cacheRead?: unknown
  readonly cacheWrite?: unknown
  readonly outputTotal?: unknown
  readonly outputText?: unknown
  readonly reasoning?: unknown
}

/**
 * A `Response.Usage` built without running its schema (`new Response.Usage`
 * parses its argument: about 1.3 µs, a fifth of a loop step through the AI
 * SDK bridge). Every count is checked here, as the schema would (an integer
 * or nothing); the instance equals the constructor's (test/internal/parts.test.ts).
 *
 * @internal
 */
export const usage = (counts: Counts): Response.Usage =>
  Object.assign(Object.create(Response.Usage.prototype) as Response.Usage, {
    inputTokens: {
      uncached: count(counts.inputUncached),
      total: count(counts.inputTotal),
      cacheRead: count(counts.cacheRead),
      cacheWrite: count(counts.cacheWrite)
    },
    outputTokens: { total: count(counts.outputTotal), text: count(counts.outputText), reasoning: count(counts.reasoning) }
  })


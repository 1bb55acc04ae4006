/**
 * The response side of the AI SDK bridge: a provider's content (whole
 * responses) and stream parts mapped to `effect/ai` response parts, with the
 * finish reason and usage, and the response's id, model and time as a
 * `response-metadata` part (which the telemetry reads for
 * `gen_ai.response.id` and `gen_ai.response.model`). `AiSdkModel`
 * re-exports `fromProviderContent`.
 *
 * @internal
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4ResponseMetadata,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage
} from "@ai-sdk/provider"
import { DateTime } from "effect"
import * as Response from "effect/ai/Response"
import { isFinishReason } from "../../internal/arrival.ts"
import * as Parts from "../../internal/parts.ts"
import { spanText } from "../../internal/tracing.ts"
import type { ModelCallFailed } from "../../LoopError.ts"
import { failureOf, read, unfinished, unreadable } from "./errors.ts"

/** Arguments as JSON, or the raw text when it is not JSON (the tool's Schema then rejects it). */
const parseArguments = (input: string): unknown => {
  if (input.trim() === "") return {}
  try {
    return JSON.parse(input)
  } catch {
    return input
  }
}


/**
 * The provider's finish reason, its value read once: "interrupted" for v4's
 * cut-off response, else one of effect/ai's reasons: the provider's when it
 * is one (v4's `unified`, or the reason itself when it is a bare string, the
 * v2 shape, from a model that claims v4), else "other" (a made-up, missing
 * or unreadable `unified` is never passed on: it could be anything, a
 * credential included). `undefined` when the finish reason is neither an
 * object nor a string: the response cannot be read. Never throws.
 */
const reasonOf = (reason: unknown): Response.FinishReason | "interrupted" | undefined => {
  if (typeof reason !== "string" && (typeof reason !== "object" || reason === null)) return undefined
  const unified = typeof reason === "string" ? reason : read(reason, "unified")
  if (unified === "interrupted" && typeof reason === "object") return "interrupted"
  return isFinishReason(unified) ? unified : "other"
}

/** What a finish reason that is neither an object nor a string is said to be, in a failure. */
const notAReason = (reason: unknown): string =>
  `the finish reason is ${reason === null ? "null" : typeof reason}, not an object with a unified reason`

/** @internal whether the provider reports its response as cut off (v4's "interrupted" finish) */
export const isInterrupted = (reason: unknown): boolean => reasonOf(reason) === "interrupted"

/**
 * One of effect/ai's finish reasons for the provider's (see
 * {@link reasonOf}); "interrupted" is "other". Throws for one that is
 * neither an object nor a string.
 */
const finishReasonOf = (reason: unknown): Response.FinishReason => {
  const known = reasonOf(reason)
  if (known === undefined) throw new TypeError(notAReason(reason))
  return known === "interrupted" ? "other" : known
}

/** The provider's usage; a count that is not an integer, or a part of it that is missing, is left out. */
const usageOf = (usage: LanguageModelV4Usage): Response.Usage => {
  const input: Partial<LanguageModelV4Usage["inputTokens"]> = typeof usage?.inputTokens === "object" && usage.inputTokens !== null ? usage.inputTokens : {}
  const output: Partial<LanguageModelV4Usage["outputTokens"]> = typeof usage?.outputTokens === "object" && usage.outputTokens !== null ? usage.outputTokens : {}
  return Parts.usage({
    inputUncached: input.noCache,
    inputTotal: input.total,
    cacheRead: input.cacheRead,
    cacheWrite: input.cacheWrite,
    outputTotal: output.total,
    outputText: output.text,
    reasoning: output.reasoning
  })
}

/** A provider's id or model id, if it is a non-empty string: bounded and redacted like other span text. */
const reported = (value: unknown): string | undefined =>
  typeof value === "string" && value.length > 0 ? spanText(value) : undefined

/** The provider's response id, model id and time as a `response-metadata` part; `undefined` when it reports none. */
const responseMetadata = (
  response: LanguageModelV4ResponseMetadata | undefined
): Response.ResponseMetadataPart | undefined => {
  if (typeof response !== "object" || response === null) return undefined
  const id = reported(response.id)
  const modelId = reported(response.modelId)
  const time = response.timestamp
  const timestamp = time instanceof Date && Number.isFinite(time.getTime()) ? DateTime.fromDateUnsafe(time) : undefined
  if (id === undefined && modelId === undefined && timestamp === undefined) return undefined
  return Response.makePart("response-metadata", { id, modelId, timestamp })
}

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
 * @internal the response parts of a provider's whole response, its
 * `response` metadata first when there is some (public, documented, as
 * `AiSdkModel.fromProviderContent`)
 */
export const fromProviderContent = (
  content: ReadonlyArray<LanguageModelV4Content>,
  finishReason: LanguageModelV4FinishReason,
  usage: LanguageModelV4Usage,
  response?: LanguageModelV4ResponseMetadata | undefined
): ReadonlyArray<Response.AnyPart> => {
  const parts: Array<Response.AnyPart> = []
  const metadata = responseMetadata(response)
  if (metadata !== undefined) parts.push(metadata)
  for (const part of content) {
    const mapped = contentPart(part)
    if (mapped !== undefined) parts.push(mapped)
  }
  parts.push(Parts.responseFinish(finishReasonOf(finishReason), usageOf(usage)))
  return parts
}

/**
 * @internal a stream part as a response part; `undefined` for parts the loop
 * does not use; the failure for an error part, an "interrupted" finish or a
 * part that is not an object. May throw (a hostile getter): the caller
 * catches.
 */
export const streamPart = (part: LanguageModelV4StreamPart): Response.AnyPart | ModelCallFailed | undefined => {
  // From a hostile provider a part may be anything: what is not an object fails the call.
  if (typeof part !== "object" || part === null) {
    return unreadable(`a stream part is ${part === null ? "null" : typeof part}, not an object`)
  }
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
    case "response-metadata":
      return responseMetadata(part)
    case "finish": {
      // A stream the provider saw cut off ends with an "interrupted" finish: not an answer.
      const given: unknown = part.finishReason
      const reason = reasonOf(given)
      if (reason === undefined) return unreadable(notAReason(given))
      return reason === "interrupted" ? unfinished : Parts.responseFinish(reason, usageOf(part.usage))
    }
    case "error":
      return failureOf(part.error)
    default:
      return undefined
  }
}

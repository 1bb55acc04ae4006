/**
 * What a model turn's response parts say about the call, for events, spans
 * and metrics: the finish part's reason and token usage, and the
 * `response-metadata` part's response id and model.
 *
 * @internal
 */
import type * as Response from "effect/ai/Response"
import type { Usage } from "../../RunEvent.ts"
import { spanText } from "../tracing.ts"

/** `usage[key].total` when it is a count, else `undefined`. */
const totalOf = (usage: unknown, key: "inputTokens" | "outputTokens"): number | undefined => {
  if (typeof usage !== "object" || usage === null) return undefined
  const tokens: unknown = (usage as Record<typeof key, unknown>)[key]
  if (typeof tokens !== "object" || tokens === null) return undefined
  const total: unknown = (tokens as { readonly total?: unknown }).total
  return typeof total === "number" && Number.isFinite(total) && total >= 0 ? total : undefined
}

/**
 * The finish part's reason and usage, if any.
 *
 * @internal
 */
export const finishOf = (
  parts: ReadonlyArray<Response.AnyPart>
): { readonly reason: Response.FinishReason; readonly usage: Usage } => {
  try {
    return finishIn(parts)
  } catch {
    return unknownFinish() // a JavaScript model's getter that throws
  }
}

const unknownFinish = (): { readonly reason: Response.FinishReason; readonly usage: Usage } => ({ reason: "unknown", usage: {} })

const finishIn = (parts: ReadonlyArray<Response.AnyPart>): { readonly reason: Response.FinishReason; readonly usage: Usage } => {
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]
    if (part.type === "finish") {
      // Read with care: a model written in JavaScript may leave any of it out.
      const given: unknown = part.usage
      const usage: { inputTokens?: number; outputTokens?: number } = {}
      const input = totalOf(given, "inputTokens")
      const output = totalOf(given, "outputTokens")
      if (input !== undefined) usage.inputTokens = input
      if (output !== undefined) usage.outputTokens = output
      return { reason: typeof part.reason === "string" ? part.reason : "unknown", usage }
    }
  }
  return unknownFinish()
}

/**
 * The response's id and model as the provider reported them (the first
 * `response-metadata` part that has each), bounded and redacted for spans
 * and metrics.
 *
 * @internal
 */
export const metadataOf = (
  parts: ReadonlyArray<Response.AnyPart>
): { readonly id: string | undefined; readonly model: string | undefined } => {
  let id: string | undefined
  let model: string | undefined
  for (const part of parts) {
    if (part.type !== "response-metadata") continue
    if (id === undefined && typeof part.id === "string" && part.id.length > 0) id = spanText(part.id)
    if (model === undefined && typeof part.modelId === "string" && part.modelId.length > 0) model = spanText(part.modelId)
  }
  return { id, model }
}

/**
 * A finish reason as the conventions spell it (`tool_call`,
 * `content_filter`); other reasons as effect/ai gives them.
 *
 * @internal
 */
export const conventionalReason = (reason: string): string =>
  reason === "tool-calls" ? "tool_call" : reason === "content-filter" ? "content_filter" : reason

/**
 * The `chat` span of a model call (retries included), for a context that is
 * traced: named `chat <model>`, kind client, with the conventions'
 * attributes — `gen_ai.provider.name` (a well-known value where there is
 * one), `gen_ai.request.model`, then `gen_ai.response.finish_reasons`,
 * `gen_ai.response.id`, `gen_ai.response.model` and `gen_ai.usage.*` from the
 * answer, `error.type` on a failure — and, when `Telemetry.CaptureContent` is
 * on and `Privacy.OmitContent` off, the messages. The call's metrics are
 * recorded inside it (unless `Telemetry.Metrics` is `"off"`); effect/ai's own
 * span under it does not repeat the usage.
 *
 * @internal
 */
import { Context, Effect, Tracer } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import type { ChatModelError, ModelInfo } from "../chatModel.ts"
import { OmitContent } from "../../Privacy.ts"
import { CaptureContent } from "../../Telemetry.ts"
import { withCallSpan } from "../tracing.ts"
import { inputAttributes, outputAttribute } from "./content.ts"
import { metered, metricsOn } from "./metrics.ts"
import { modelName, providerName } from "./providerName.ts"
import { conventionalReason, finishOf, metadataOf } from "./response.ts"
import { usageOnce } from "./usageOnce.ts"

/** The span's attributes from the answer. */
const annotate = (parts: ReadonlyArray<Response.AnyPart>, capture: boolean): Effect.Effect<void> => {
  const finish = finishOf(parts)
  const metadata = metadataOf(parts)
  const attributes: Record<string, unknown> = { "gen_ai.response.finish_reasons": [conventionalReason(finish.reason)] }
  if (metadata.id !== undefined) attributes["gen_ai.response.id"] = metadata.id
  if (metadata.model !== undefined) attributes["gen_ai.response.model"] = metadata.model
  if (finish.usage.inputTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = finish.usage.inputTokens
  if (finish.usage.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = finish.usage.outputTokens
  if (capture) {
    const output = captured(() => ({ "gen_ai.output.messages": outputAttribute(parts) }))
    Object.assign(attributes, output)
  }
  return Effect.annotateCurrentSpan(attributes)
}

/** Captured messages, or none when a hostile value makes them throw: capture never fails a call. */
const captured = (make: () => Record<string, string>): Record<string, string> => {
  try {
    return make()
  } catch {
    return {}
  }
}

/**
 * The labels of a model's calls in metrics: its provider (mapped) and model.
 *
 * @internal
 */
export const labelsOf = (info: ModelInfo | undefined) => ({
  provider: providerName(info?.provider),
  requestModel: info === undefined ? undefined : modelName(info.model)
})

/**
 * `call` (a model call, retries included) in its `chat` span; for a
 * `context` that is traced (the caller checks).
 *
 * @internal
 */
export const chatSpan = (
  context: Context.Context<never>,
  info: ModelInfo | undefined,
  prompt: Prompt.Prompt,
  callNumber: number,
  call: Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const labels = labelsOf(info)
  const capture = Context.get(context, CaptureContent) === true && !Context.get(context, OmitContent)
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": labels.provider,
    "gen_ai.request.model": labels.requestModel ?? "unknown",
    "loopwork.call": callNumber
  }
  if (capture) Object.assign(attributes, captured(() => inputAttributes(prompt)))
  const annotated = Effect.tap(call, (parts) => annotate(parts, capture))
  const body = metricsOn(context, true) ? metered(annotated, labels) : annotated
  return withCallSpan(
    context,
    usageOnce(body, Context.get(context, Tracer.Tracer)),
    labels.requestModel === undefined ? "chat" : `chat ${labels.requestModel}`,
    { kind: "client", attributes }
  )
}

/**
 * The GenAI client metrics of a model call, through Effect's `Metric`
 * module: `gen_ai.client.operation.duration` (seconds) and
 * `gen_ai.client.token.usage` (by `gen_ai.token.type`), with the
 * conventions' attributes and bucket boundaries. One model call (its retries
 * included, as its `chat` span) is one operation.
 *
 * Each series' metric is made once and kept (a process calls few providers
 * and models), so a recorded call costs two clock reads and up to three
 * histogram updates.
 *
 * @internal
 */
import { Cause, Clock, Context, Effect, type Exit, Metric } from "effect"
import type * as Response from "effect/ai/Response"
import { Metrics } from "../../Telemetry.ts"
import { finishOf, metadataOf } from "./response.ts"
import { errorTypeOf } from "./errorType.ts"

const tokenUsage = Metric.histogram("gen_ai.client.token.usage", {
  description: "Number of input and output tokens used.",
  // Effect's OTLP exporter takes a metric's unit from its `unit` attribute.
  attributes: { unit: "{token}" },
  boundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
})

const duration = Metric.histogram("gen_ai.client.operation.duration", {
  description: "GenAI operation duration.",
  attributes: { unit: "s" },
  boundaries: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
})

/** What every series of a call is labelled with (already bounded and mapped). */
export interface CallLabels {
  readonly provider: string
  readonly requestModel: string | undefined
}

/** The metrics of each series, by its attributes. */
const series = new Map<string, Metric.Metric<number, Metric.HistogramState>>()

const seriesOf = (
  base: Metric.Metric<number, Metric.HistogramState>,
  labels: CallLabels,
  responseModel: string | undefined,
  extra: readonly [key: string, value: string] | undefined
): Metric.Metric<number, Metric.HistogramState> => {
  const key = `${base.id}\u0000${labels.provider}\u0000${labels.requestModel ?? ""}\u0000${responseModel ?? ""}\u0000${
    extra === undefined ? "" : extra.join("\u0000")
  }`
  let metric = series.get(key)
  if (metric === undefined) {
    const attributes: Record<string, string> = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": labels.provider }
    if (labels.requestModel !== undefined) attributes["gen_ai.request.model"] = labels.requestModel
    if (responseModel !== undefined) attributes["gen_ai.response.model"] = responseModel
    if (extra !== undefined) attributes[extra[0]] = extra[1]
    metric = Metric.withAttributes(base, attributes)
    if (series.size >= 1024) series.clear()
    series.set(key, metric)
  }
  return metric
}

/**
 * How many distinct response models get a series of their own. The model a
 * response names is the provider's string: every new one would add series
 * that effect's metric registry keeps for the life of the process. Past
 * the limit, a response model not seen before is left off its series (the
 * request model and provider still say what was called).
 *
 * @internal
 */
export const maxResponseModels = 32

const responseModels = new Set<string>()

/** `model` if it may label a series: one already seen, or a new one while there is room. */
const seriesModel = (model: string | undefined): string | undefined => {
  if (model === undefined || responseModels.has(model)) return model
  if (responseModels.size >= maxResponseModels) return undefined
  responseModels.add(model)
  return model
}

/** Records a finished call: its duration, and its tokens when it succeeded with usage. */
const record = (
  labels: CallLabels,
  exit: Exit.Exit<ReadonlyArray<Response.AnyPart>, unknown>,
  seconds: number
): Effect.Effect<void> => {
  if (exit._tag === "Failure") {
    if (Cause.hasInterruptsOnly(exit.cause)) return Effect.void
    return Metric.update(seriesOf(duration, labels, undefined, ["error.type", errorTypeOf(exit.cause)]), seconds)
  }
  const model = seriesModel(metadataOf(exit.value).model)
  const { usage } = finishOf(exit.value)
  const updates = [Metric.update(seriesOf(duration, labels, model, undefined), seconds)]
  if (usage.inputTokens !== undefined) {
    updates.push(Metric.update(seriesOf(tokenUsage, labels, model, ["gen_ai.token.type", "input"]), usage.inputTokens))
  }
  if (usage.outputTokens !== undefined) {
    updates.push(Metric.update(seriesOf(tokenUsage, labels, model, ["gen_ai.token.type", "output"]), usage.outputTokens))
  }
  return Effect.all(updates, { discard: true })
}

/**
 * `call` (a model call, retries included), its duration and token usage
 * recorded when it ends.
 *
 * @internal
 */
export const metered = <E>(
  call: Effect.Effect<ReadonlyArray<Response.AnyPart>, E>,
  labels: CallLabels
): Effect.Effect<ReadonlyArray<Response.AnyPart>, E> =>
  Effect.flatMap(Clock.currentTimeNanos, (started) =>
    Effect.onExit(call, (exit) =>
      Effect.flatMap(Clock.currentTimeNanos, (ended) => record(labels, exit, Number(ended - started) / 1e9))))

/**
 * Whether model calls under `context` are recorded: `traced` (a tracing
 * backend is installed) unless `Telemetry.Metrics` is `"off"`, or
 * `Telemetry.Metrics` is `"on"`.
 *
 * @internal
 */
export const metricsOn = (context: Context.Context<never>, traced: boolean): boolean => {
  const mode = Context.get(context, Metrics)
  return mode === "on" || (traced && mode !== "off")
}

/**
 * The run events as Schema data (the public `RunEvent` module re-exports
 * them, with the observer that receives them).
 *
 * @internal
 */
import { Schema } from "effect"
import { PauseReason } from "../Outcome.ts"

/**
 * Token counts of one model call, as the provider reported them.
 *
 * @example
 * ```ts
 * import { RunEvent } from "loopwork"
 *
 * const usage: RunEvent.Usage = { inputTokens: 120, outputTokens: 14 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Usage = Schema.Struct({
  inputTokens: Schema.optionalKey(Schema.Number),
  outputTokens: Schema.optionalKey(Schema.Number)
}).annotate({ identifier: "Usage" })

/**
 * @category models
 * @since 0.1.0
 */
export type Usage = typeof Usage.Type

const Millis = Schema.Number
const CallNumber = Schema.Int

/**
 * The run began. `runCount` is the chain's count of model calls so far (not
 * zero when a paused chain resumes).
 *
 * @category models
 * @since 0.1.0
 */
export const RunStarted = Schema.TaggedStruct("RunStarted", { messages: Schema.Int, runCount: Schema.Int })

/**
 * A model call began, with the number of messages and the tools it is sent.
 * It ends with `ModelCallFinished` or `ModelCallFailed`, or, when
 * `StopSignal.interrupt` abandons it, with the `RunPaused` that follows.
 *
 * @category models
 * @since 0.1.0
 */
export const ModelCallStarted = Schema.TaggedStruct("ModelCallStarted", {
  call: CallNumber,
  messages: Schema.Int,
  tools: Schema.Array(Schema.String)
})

/**
 * A piece of the model's text, as it streams (only when the model streams,
 * e.g. under `Chain.stream`). When the attempt then fails
 * (`ModelCallFailed`), its deltas are not part of the chain: a UI should
 * drop them. Not sent when `Privacy.OmitContent` is on.
 *
 * @category models
 * @since 0.1.0
 */
export const TextDelta = Schema.TaggedStruct("TextDelta", { call: CallNumber, delta: Schema.String })

/**
 * A model call ended with a response. `text` is the response's text (`""`
 * when `Privacy.OmitContent` is on).
 *
 * @category models
 * @since 0.1.0
 */
export const ModelCallFinished = Schema.TaggedStruct("ModelCallFinished", {
  call: CallNumber,
  finishReason: Schema.String,
  usage: Usage,
  text: Schema.String,
  toolCalls: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })),
  durationMillis: Millis
})

/**
 * An attempt of a model call failed. With a `retry` schedule more attempts
 * may follow; otherwise the run fails next. `message` is the error's
 * message, credentials redacted; with `Privacy.OmitContent` on, a
 * content-free one (`"The model call failed (HTTP 400): details omitted
 * (Privacy.OmitContent)"`): a provider's error text may quote the prompt.
 *
 * @category models
 * @since 0.1.0
 */
export const ModelCallFailed = Schema.TaggedStruct("ModelCallFailed", {
  call: CallNumber,
  attempt: Schema.Int,
  error: Schema.String,
  message: Schema.String,
  durationMillis: Millis
})

/**
 * The loop began settling a tool call: checking its tool and arguments,
 * asking whether it needs approval, then running its handler. Every call
 * that starts gets exactly one `ToolCallFinished`. A call that still waits
 * for a decision or a result when a run resumes is not reported again.
 * `params` are the call's arguments (absent when `Privacy.OmitContent` is
 * on).
 *
 * @category models
 * @since 0.1.0
 */
export const ToolCallStarted = Schema.TaggedStruct("ToolCallStarted", {
  id: Schema.String,
  name: Schema.String,
  params: Schema.optionalKey(Schema.Unknown)
})

/**
 * How a tool call settled: a result, a failure (fed back or failing the run
 * by its policy), rejected by a human, interrupted by `StopSignal.interrupt`
 * (it runs again on resume), or held for a decision or an external result.
 *
 * @category models
 * @since 0.1.0
 */
export const ToolCallStatus = Schema.Literals([
  "succeeded",
  "failed",
  "rejected",
  "interrupted",
  "awaiting-approval",
  "awaiting-result"
])

/**
 * A tool call settled. `result` is the encoded result (or failure) the model
 * is sent; held calls have none, and no call has one when
 * `Privacy.OmitContent` is on.
 *
 * @category models
 * @since 0.1.0
 */
export const ToolCallFinished = Schema.TaggedStruct("ToolCallFinished", {
  id: Schema.String,
  name: Schema.String,
  status: ToolCallStatus,
  result: Schema.optionalKey(Schema.Unknown),
  durationMillis: Millis
})

/**
 * What stands in for a chain's document in `RunPaused`, `RunFinished` and
 * `RunFailed` when `Privacy.OmitContent` is on: how many messages the chain
 * has and its `runCount`, nothing of their content.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const isSummary = Schema.is(RunEvent.ChainSummary)
 * isSummary({ _tag: "ChainSummary", messages: 4, runCount: 2 }) // true
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const ChainSummary = Schema.TaggedStruct("ChainSummary", { messages: Schema.Int, runCount: Schema.Int })

/**
 * @category models
 * @since 0.1.0
 */
export type ChainSummary = typeof ChainSummary.Type

/**
 * The run paused at a clean checkpoint. `chain` is the chain's JSON
 * document (`Chain.encode`'s form): store it, and `Chain.decode` it to resume.
 * With `Privacy.OmitContent` on it is a {@link ChainSummary} instead, and
 * the waiting calls of `reason` have `params: null`.
 *
 * @category models
 * @since 0.1.0
 */
export const RunPaused = Schema.TaggedStruct("RunPaused", { reason: PauseReason, chain: Schema.Unknown })

/**
 * The run finished: why (an `Outcome.OkReason`), the final text, the
 * chain's JSON document (`""` and a {@link ChainSummary} when
 * `Privacy.OmitContent` is on) and, for a run with `output`, the decoded
 * value encoded again as JSON by its schema (left out with
 * `Privacy.OmitContent`, or when it cannot be encoded as JSON).
 *
 * @category models
 * @since 0.1.0
 */
export const RunFinished = Schema.TaggedStruct("RunFinished", {
  reason: Schema.String,
  text: Schema.String,
  chain: Schema.Unknown,
  output: Schema.optionalKey(Schema.Unknown)
})

/**
 * The run failed: the error's tag and message (credentials redacted), and
 * the chain's JSON document as it stood. With `Privacy.OmitContent` on, the
 * chain is a {@link ChainSummary} and the message is content-free: the
 * error's tag, for a failed tool call its kind and the tool
 * (`"Tool 'lookup' failed (handler): details omitted (Privacy.OmitContent)"`),
 * for a model call the HTTP status (the `RunError` the run fails with keeps
 * its whole message).
 *
 * @category models
 * @since 0.1.0
 */
export const RunFailed = Schema.TaggedStruct("RunFailed", {
  error: Schema.String,
  message: Schema.String,
  chain: Schema.Unknown
})

/**
 * Any event of a run.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const json = Schema.encodeSync(RunEvent.RunEvent)({ _tag: "TextDelta", call: 1, delta: "Hel" })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const RunEvent = Schema.Union([
  RunStarted,
  ModelCallStarted,
  TextDelta,
  ModelCallFinished,
  ModelCallFailed,
  ToolCallStarted,
  ToolCallFinished,
  RunPaused,
  RunFinished,
  RunFailed
]).annotate({ identifier: "RunEvent" })

/**
 * @category models
 * @since 0.1.0
 */
export type RunEvent = typeof RunEvent.Type

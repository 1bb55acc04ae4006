/**
 * What a durable run's workflow ends with. It succeeds with `Finished` (the
 * run's `Ok`: its reason, the chain's JSON document and, for a workflow with
 * an `output` Schema, the decoded answer's JSON) or `Paused` (a pause
 * no one can answer through the store: a stop, a request for user input, a
 * mode's own pause), and fails with {@link DurableRunFailed} (the run's
 * `RunError`: its reason, message and the chain's document). Documents are
 * the text of `Chain.encode`: `Chain.decode(JSON.parse(document), { toolkit })`
 * gives the chain back.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { redactSecrets } from "../internal/redact.ts"

/**
 * A run that ended `Ok`. `output` is there when the workflow has an
 * `output` Schema: the decoded answer encoded by that Schema's JSON codec
 * (`Schema.toCodecJson`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { DurableResult } from "loopwork/durable"
 *
 * const Verdict = Schema.Struct({ approved: Schema.Boolean })
 * const done: DurableResult.Finished = { _tag: "Finished", reason: "done", document: "{}", output: { approved: true } }
 * const verdict = Schema.decodeUnknownEffect(Schema.toCodecJson(Verdict))(done.output)
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Finished = Schema.TaggedStruct("Finished", {
  reason: Schema.String,
  document: Schema.String,
  output: Schema.optionalKey(Schema.Json)
})

/**
 * @category models
 * @since 0.1.0
 */
export type Finished = typeof Finished.Type

/**
 * @example
 * ```ts
 * import { DurableResult } from "loopwork/durable"
 *
 * const paused: DurableResult.Paused = { _tag: "Paused", reason: "StopRequested", document: "{}" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Paused = Schema.TaggedStruct("Paused", { reason: Schema.String, document: Schema.String })

/**
 * @category models
 * @since 0.1.0
 */
export type Paused = typeof Paused.Type

/**
 * The success of a durable run's workflow.
 *
 * @example
 * ```ts
 * import { DurableResult } from "loopwork/durable"
 *
 * const text = (result: DurableResult.DurableResult) => result._tag === "Finished" ? result.reason : "paused"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DurableResult = Schema.Union([Finished, Paused]).annotate({ identifier: "DurableResult" })

/**
 * @category models
 * @since 0.1.0
 */
export type DurableResult = typeof DurableResult.Type

/**
 * A durable run failed: `reason` is the tag of the run's `LoopError`
 * reason, or `OutputNotStorable` (a decoded `output` whose JSON encoding
 * failed), or `CorruptRecord` (what the run read back from its store is not
 * what it wrote: a recorded step that does not match its schema, or calls
 * it waits on that are not the calls it posted); `description` is its
 * message, `document` the chain at the failure.
 *
 * @example
 * ```ts
 * import { DurableResult } from "loopwork/durable"
 *
 * new DurableResult.DurableRunFailed({ reason: "MaxRunsExceeded", description: "Exceeded maximum number of runs (3/3)", document: "{}" }).message
 * // "The durable run failed (MaxRunsExceeded): Exceeded maximum number of runs (3/3)"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class DurableRunFailed extends Schema.TaggedError<DurableRunFailed>()("DurableRunFailed", {
  reason: Schema.String,
  description: Schema.String,
  document: Schema.String
}) {
  override get message(): string {
    return redactSecrets(`The durable run failed (${this.reason}): ${this.description}`)
  }
}

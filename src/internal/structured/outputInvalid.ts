/**
 * The typed failure of a run whose answer never decoded into its `output`
 * Schema. `LoopError` re-exports it as one of the run's reasons.
 *
 * @internal
 */
import { Schema } from "effect"
import { redactSecrets } from "../redact.ts"

/**
 * A run with an `output` Schema ended, but its answer did not decode into
 * that Schema after every allowed attempt (`StructuredOutput`'s `retries`
 * re-asks). `raw` is the last answer as the model gave it (the final-answer
 * tool's arguments as JSON, or the text), `error` the last decode error, and
 * `attempts` the number of answers tried.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.OutputInvalid({ raw: "{}", error: "Missing key at [\"name\"]", attempts: 3 }).message
 * // "The run's answer did not match its output Schema after 3 attempt(s); last error: Missing key at [\"name\"] ..."
 * ```
 *
 * @category errors
 * @since 0.3.0
 */
export class OutputInvalid extends Schema.TaggedError<OutputInvalid>()("OutputInvalid", {
  raw: Schema.String,
  error: Schema.String,
  attempts: Schema.Number
}) {
  override get message(): string {
    return redactSecrets(
      `The run's answer did not match its output Schema after ${this.attempts} attempt(s); last error: ${this.error} ` +
        "(raise the output's retries, simplify the Schema, or read the answer in error.reason.raw)"
    )
  }
}


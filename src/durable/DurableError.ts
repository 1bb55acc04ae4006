/**
 * The typed failures of answering a durable run from outside it.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { CallNotAwaiting, InvalidInput, InvalidResumeValue } from "../LoopError.ts"

/**
 * A call already has a different answer: the first answer wins.
 *
 * @example
 * ```ts
 * import { DurableError } from "loopwork/durable"
 *
 * new DurableError.AlreadyAnswered({ executionId: "e1", callId: "call_1" }).message
 * // "Call 'call_1' of execution 'e1' already has a different answer: the first answer wins"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class AlreadyAnswered extends Schema.TaggedError<AlreadyAnswered>()("AlreadyAnswered", {
  executionId: Schema.String,
  callId: Schema.String
}) {
  override get message(): string {
    return `Call '${this.callId}' of execution '${this.executionId}' already has a different answer: the first answer wins`
  }
}

/**
 * The workflow was not made by `DurableChain.workflow`, so it has no chain
 * to answer for.
 *
 * @example
 * ```ts
 * import { DurableError } from "loopwork/durable"
 *
 * new DurableError.NotDurableChain({ workflow: "Other" }).message
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class NotDurableChain extends Schema.TaggedError<NotDurableChain>()("NotDurableChain", {
  workflow: Schema.String,
  /** The constructor the workflow should come from (default `DurableChain.workflow`). */
  expected: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    const maker = this.expected ?? "DurableChain.workflow"
    return `Workflow '${this.workflow}' was not made by ${maker}: pass the workflow ${maker} returned`
  }
}

/**
 * Why `DurableChain.decide` or `DurableChain.supply` refused an answer;
 * nothing was written.
 *
 * @example
 * ```ts
 * import type { DurableError } from "loopwork/durable"
 *
 * const tagOf = (error: DurableError.AnswerError) => error._tag
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export type AnswerError = NotDurableChain | InvalidInput | CallNotAwaiting | InvalidResumeValue | AlreadyAnswered | SqlError

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
 * The call waits again, on arguments given after an earlier answer (a
 * repair function retried it, and its new arguments need a decision of
 * their own), and the answer was for another of its waits: `given` (1 when
 * the answer named none) instead of `current`. An answer that names no wait
 * may be a retry of the earlier one, so it is not taken for the new wait:
 * read `DurableChain.pending` again, and answer the new wait with
 * `{ waits: { [callId]: current } }`.
 *
 * @example
 * ```ts
 * import { DurableError } from "loopwork/durable"
 *
 * new DurableError.WaitChanged({ executionId: "e1", callId: "call_1", given: 1, current: 2 }).message
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class WaitChanged extends Schema.TaggedError<WaitChanged>()("WaitChanged", {
  executionId: Schema.String,
  callId: Schema.String,
  given: Schema.Int,
  current: Schema.Int
}) {
  override get message(): string {
    const id = JSON.stringify(this.callId)
    return `Call '${this.callId}' of execution '${this.executionId}' is at its wait ${this.current}, and the answer was for wait ` +
      `${this.given}${this.given === 1 ? " (an answer that names no wait is for the first)" : ""}: read DurableChain.pending again, ` +
      `and answer wait ${this.current} with { waits: { ${id}: ${this.current} } }`
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
 * The answers are recorded — they are the calls' answers now, and a
 * different one is refused — but the engine could not be told to wake the
 * run (`why`: its store failed). Send the same answers again (with the
 * same `waits`), or ask the execution to stop: either wakes it, and a stop
 * applies the recorded answers too (an approved call runs) before the run
 * stops.
 *
 * @example
 * ```ts
 * import { DurableError } from "loopwork/durable"
 *
 * new DurableError.NotDelivered({ executionId: "e1", callIds: ["call_1"], why: "database is locked" }).message
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class NotDelivered extends Schema.TaggedError<NotDelivered>()("NotDelivered", {
  executionId: Schema.String,
  callIds: Schema.Array(Schema.String),
  why: Schema.String
}) {
  override get message(): string {
    return `The answers to ${this.callIds.map((id) => `'${id}'`).join(", ")} of execution '${this.executionId}' are recorded, ` +
      `but the run could not be woken (${this.why}): send the same answers again (with the same waits), or stop the execution, ` +
      "which applies them too; a different answer is refused"
  }
}

/**
 * Why `DurableChain.decide` or `DurableChain.supply` failed: every one but
 * `NotDelivered` (and a `SqlError`) refused the answers with nothing
 * written.
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
export type AnswerError =
  | NotDurableChain
  | InvalidInput
  | CallNotAwaiting
  | InvalidResumeValue
  | AlreadyAnswered
  | WaitChanged
  | NotDelivered
  | SqlError

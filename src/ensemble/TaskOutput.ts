/**
 * The output of one task, and of a whole ensemble run. Plain Schema data, so
 * they can be stored or sent as JSON.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { DelegationRecord } from "./Delegation.ts"

/**
 * One task's output: the agent's full text (`raw`), the task and agent it
 * belongs to, when it completed, how long it took, the number of tool calls,
 * and the decoded value when the task has an `outputType`.
 *
 * @example
 * ```ts
 * import { TaskOutput } from "loopwork/ensemble"
 *
 * const summary = (output: TaskOutput.TaskOutput) => `${output.agentRole}: ${output.raw}`
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const TaskOutput = Schema.Struct({
  raw: Schema.String,
  taskDescription: Schema.String,
  agentRole: Schema.String,
  completedAt: Schema.DateTimeUtcFromString,
  duration: Schema.DurationFromMillis,
  toolCallCount: Schema.Int,
  parsedOutput: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "TaskOutput" })

/**
 * @category models
 * @since 0.1.0
 */
export interface TaskOutput extends Schema.Schema.Type<typeof TaskOutput> {}

/**
 * A whole run's output: the final text (`raw`: the last task's, or the
 * manager's in a HIERARCHICAL run), every task output in execution order,
 * the wall-clock time, the tool calls of all tasks, and every delegation
 * attempt.
 *
 * @example
 * ```ts
 * import { TaskOutput } from "loopwork/ensemble"
 *
 * const report = (output: TaskOutput.EnsembleOutput) => output.raw
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const EnsembleOutput = Schema.Struct({
  raw: Schema.String,
  taskOutputs: Schema.Array(TaskOutput),
  totalDuration: Schema.DurationFromMillis,
  totalToolCalls: Schema.Int,
  /** Every delegation attempt of the run (manager and peer), in the order they ended (a nested attempt before the one containing it). */
  delegations: Schema.Array(DelegationRecord)
}).annotate({ identifier: "EnsembleOutput" })

/**
 * @category models
 * @since 0.1.0
 */
export interface EnsembleOutput extends Schema.Schema.Type<typeof EnsembleOutput> {}

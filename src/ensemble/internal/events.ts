/**
 * The ensemble events as Schema data (the public `EnsembleEvent` module
 * re-exports them, with the sink that receives them).
 *
 * @internal
 */
import { Schema } from "effect"
import { RunEvent } from "../../RunEvent.ts"
import { EnsembleOutput } from "../TaskOutput.ts"

/**
 * Any event.
 *
 * @example
 * ```ts
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const line = (event: EnsembleEvent.EnsembleEvent) => event._tag
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const EnsembleEvent = Schema.Union([
  Schema.TaggedStruct("TaskStarted", { taskDescription: Schema.String, agentRole: Schema.String }),
  Schema.TaggedStruct("TaskCompleted", {
    taskDescription: Schema.String,
    agentRole: Schema.String,
    durationMillis: Schema.Number,
    toolCallCount: Schema.Int
  }),
  Schema.TaggedStruct("TaskFailed", { taskDescription: Schema.String, agentRole: Schema.String, reason: Schema.String }),
  Schema.TaggedStruct("DelegationStarted", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    taskDescription: Schema.String,
    depth: Schema.Int
  }),
  Schema.TaggedStruct("DelegationCompleted", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("DelegationFailed", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    reason: Schema.String
  }),
  Schema.TaggedStruct("DelegationRejected", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    agentRole: Schema.String,
    reason: Schema.String
  }),
  Schema.TaggedStruct("ToolCalled", {
    agentRole: Schema.String,
    taskDescription: Schema.String,
    tool: Schema.String,
    callId: Schema.String,
    isFailure: Schema.Boolean
  }),
  // What an agent's run does as it happens: model calls, text deltas, tool calls (see RunEvent).
  Schema.TaggedStruct("AgentRun", { agentRole: Schema.String, taskDescription: Schema.String, event: RunEvent }),
  Schema.TaggedStruct("EnsembleCompleted", { output: EnsembleOutput }),
  Schema.TaggedStruct("EnsembleFailed", { error: Schema.String, message: Schema.String })
]).annotate({ identifier: "EnsembleEvent" })

/**
 * @category models
 * @since 0.1.0
 */
export type EnsembleEvent = typeof EnsembleEvent.Type

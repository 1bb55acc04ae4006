/**
 * Ensemble events without content, for `Privacy.OmitContent`: what
 * `EnsembleEvent.publish` sends when the setting is on.
 *
 * Taken out or replaced: task descriptions (`""`: they are filled from run
 * inputs), failure reasons and messages (a content-free note: they quote
 * tool failures, model answers and bad values), raw and parsed outputs,
 * delegation task texts, expected-output schemas, scopes, metadata,
 * artifacts and errors of delegation records, and the content of agents' run
 * events (as `RunEvent` leaves it out; a text delta is not sent). Kept: ids,
 * roles, tool names, counts, depths, durations, statuses, times.
 *
 * A `DelegationRejected` reason is kept: the library writes it from roles
 * and numbers (a refused role, a depth or cap, a budget).
 *
 * @internal
 */
import type { DelegationRecord } from "../Delegation.ts"
import type { EnsembleEvent } from "./events.ts"
import type { EnsembleOutput, TaskOutput } from "../TaskOutput.ts"
import { generic, omittedDetails, runEventWithoutContent } from "../../internal/contentFree.ts"

const taskOutputWithoutContent = (output: TaskOutput): TaskOutput => ({
  raw: "",
  taskDescription: "",
  agentRole: output.agentRole,
  completedAt: output.completedAt,
  duration: output.duration,
  toolCallCount: output.toolCallCount
})

/**
 * A delegation record without content. The role a failed delegation asked
 * for may name no agent, and is then the model's text: it is left out of
 * failed records (the `DelegationFailed` event of a worker that failed
 * names it).
 */
const recordWithoutContent = (record: DelegationRecord): DelegationRecord => {
  const failed = record.response.status === "FAILURE"
  return {
    kind: record.kind,
    delegatingRole: record.delegatingRole,
    depth: record.depth,
    request: {
      taskId: record.request.taskId,
      agentRole: failed ? "" : record.request.agentRole,
      taskDescription: "",
      scope: {},
      priority: record.request.priority,
      maxOutputRetries: record.request.maxOutputRetries,
      metadata: {}
    },
    response: {
      taskId: record.response.taskId,
      status: record.response.status,
      workerRole: failed ? "" : record.response.workerRole,
      rawOutput: record.response.rawOutput === null ? null : "",
      artifacts: {},
      errors: record.response.errors.map(() => omittedDetails),
      metadata: {},
      duration: record.response.duration
    }
  }
}

const outputWithoutContent = (output: EnsembleOutput): EnsembleOutput => ({
  raw: "",
  taskOutputs: output.taskOutputs.map(taskOutputWithoutContent),
  totalDuration: output.totalDuration,
  totalToolCalls: output.totalToolCalls,
  delegations: output.delegations.map(recordWithoutContent)
})

/**
 * `event` without content: `undefined` when nothing of it is left to send
 * (an agent's text delta). Fields in the Schema's order. Applying it twice
 * changes nothing.
 *
 * @internal
 */
export const ensembleEventWithoutContent = (event: EnsembleEvent): EnsembleEvent | undefined => {
  switch (event._tag) {
    case "TaskStarted":
      return { _tag: "TaskStarted", taskDescription: "", agentRole: event.agentRole }
    case "TaskCompleted":
      return {
        _tag: "TaskCompleted",
        taskDescription: "",
        agentRole: event.agentRole,
        durationMillis: event.durationMillis,
        toolCallCount: event.toolCallCount
      }
    case "TaskFailed":
      return { _tag: "TaskFailed", taskDescription: "", agentRole: event.agentRole, reason: omittedDetails }
    case "DelegationStarted":
      return {
        _tag: "DelegationStarted",
        taskId: event.taskId,
        delegatingRole: event.delegatingRole,
        workerRole: event.workerRole,
        taskDescription: "",
        depth: event.depth
      }
    case "DelegationCompleted":
      return event
    case "DelegationRejected":
      // The role is what the model asked for, which may name no agent (then it is the model's text), and the
      // reason quotes it.
      return { _tag: "DelegationRejected", taskId: event.taskId, delegatingRole: event.delegatingRole, agentRole: "", reason: omittedDetails }
    case "DelegationFailed":
      return {
        _tag: "DelegationFailed",
        taskId: event.taskId,
        delegatingRole: event.delegatingRole,
        workerRole: event.workerRole,
        reason: omittedDetails
      }
    case "ToolCalled":
      return {
        _tag: "ToolCalled",
        agentRole: event.agentRole,
        taskDescription: "",
        tool: event.tool,
        callId: event.callId,
        isFailure: event.isFailure
      }
    case "AgentRun": {
      const inner = runEventWithoutContent(event.event)
      return inner === undefined
        ? undefined
        : { _tag: "AgentRun", agentRole: event.agentRole, taskDescription: "", event: inner }
    }
    case "EnsembleCompleted":
      return { _tag: "EnsembleCompleted", output: outputWithoutContent(event.output) }
    case "EnsembleFailed":
      return { _tag: "EnsembleFailed", error: event.error, message: generic(event.error) }
  }
}

/**
 * Fixtures of the peer-delegation tests (test/ensemble/Delegation*.test.ts): agents that may
 * or may not delegate, scripted models that call the delegate tool, and helpers that read the
 * delegation records and the requests each agent's model saw.
 */
import { expect } from "@effect/vitest"
import { Duration } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Delegation, EnsembleError } from "../../src/ensemble/index.ts"
import type { TaskOutput } from "../../src/ensemble/index.ts"
import { transcript } from "./transcript.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

export const goals: Readonly<Record<string, string>> = {
  Researcher: "Find reliable facts",
  Writer: "Write clear prose",
  Reviewer: "Catch mistakes"
}

/** The fixed closing paragraph of every system prompt. */
export const closing = "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."
export const systemOf = (role: string) => `system: ${[`You are ${role}.`, `Your goal: ${goals[role]}`, closing].join("\n\n")}`
export const userOf = (description: string, expectedOutput: string) =>
  `user: ## Task\n${description}\n\n## Expected output\n${expectedOutput}`

/** The expected output every peer-delegated subtask gets. */
export const subtaskExpected = "Complete the assigned subtask thoroughly"

export const makeAgent = (role: "Researcher" | "Writer" | "Reviewer", allowDelegation: boolean) =>
  Agent.make({ role, goal: goals[role], allowDelegation })

export const delegateCall = (agentRole: string, taskDescription: string): ChatModel.ScriptedReply => ({
  toolCalls: [{ name: "delegate", params: { agentRole, taskDescription } }]
})

/** One line per message: role and content, tool calls and results included. */
/** The names of the tools offered in each request. */
export const offered = (model: ChatModel.ScriptedModel): ReadonlyArray<ReadonlyArray<string>> =>
  model.requests.map((request) => request.tools.map((tool) => tool.name))

export const lastLine = (request: ChatModel.GenerateRequest): string => {
  const lines = transcript(request.prompt.content)
  return lines[lines.length - 1] ?? ""
}

export const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Checks that every record's request and response share an id, and that ids are distinct. */
export const expectPairedIds = (records: ReadonlyArray<Delegation.DelegationRecord>) => {
  for (const record of records) {
    expect(record.request.taskId).toBeTypeOf("string")
    expect(record.response.taskId).toBe(record.request.taskId)
  }
  expect(new Set(records.map((record) => record.request.taskId)).size).toBe(records.length)
}

/** A record with its ids blanked and its duration in millis, for exact comparisons. */
export const plain = (record: Delegation.DelegationRecord) => ({
  ...record,
  request: { ...record.request, taskId: "<id>" },
  response: { ...record.response, taskId: "<id>", duration: Duration.toMillis(record.response.duration) }
})

export const expectedRequest = (agentRole: string, taskDescription: string) => ({
  taskId: "<id>",
  agentRole,
  taskDescription,
  scope: {},
  priority: "NORMAL",
  maxOutputRetries: 0,
  metadata: {}
})

/** A FAILURE record: `workerRole` is the agent that failed, or the role as asked when a guard blocked it. */
export const failedRecord = (
  delegatingRole: string,
  depth: number,
  agentRole: string,
  taskDescription: string,
  workerRole: string,
  error: string,
  duration = 0
) => ({
  kind: "peer",
  delegatingRole,
  depth,
  request: expectedRequest(agentRole, taskDescription),
  response: {
    taskId: "<id>",
    status: "FAILURE",
    workerRole,
    rawOutput: null,
    artifacts: {},
    errors: [error],
    metadata: {},
    duration
  }
})

export const blockedRecord = (delegatingRole: string, depth: number, agentRole: string, taskDescription: string, error: string) =>
  failedRecord(delegatingRole, depth, agentRole, taskDescription, agentRole, error)

export const successRecord = (
  kind: "peer" | "manager",
  delegatingRole: string,
  depth: number,
  agentRole: string,
  taskDescription: string,
  workerRole: string,
  rawOutput: string,
  duration = 0
) => ({
  kind,
  delegatingRole,
  depth,
  request: expectedRequest(agentRole, taskDescription),
  response: {
    taskId: "<id>",
    status: "SUCCESS",
    workerRole,
    rawOutput,
    artifacts: {},
    errors: [],
    metadata: {},
    duration
  }
})

export const brief = (output: TaskOutput.TaskOutput) => ({ agentRole: output.agentRole, raw: output.raw })

export const asConstraintViolation = (error: EnsembleError.EnsembleError): EnsembleError.ConstraintViolationError => {
  if (error._tag !== "ConstraintViolationError") {
    throw new globalThis.Error(`expected ConstraintViolationError, got ${error._tag}: ${error.message}`)
  }
  return error
}

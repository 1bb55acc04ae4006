/**
 * Fixtures of the SEQUENTIAL workflow tests (test/ensemble/Sequential.test.ts,
 * test/ensemble/StructuredOutput.test.ts): agents, tasks, and the exact prompts each agent is sent.
 */
import { DateTime, Duration } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, EnsembleError } from "../../src/ensemble/index.ts"
import type { TaskOutput } from "../../src/ensemble/index.ts"
import { toolkit } from "./ensemble.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The fixed closing paragraph of every system prompt. */
export const closing = "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."

export const researcherSystem = [
  "You are Researcher.",
  "You have read every paper on the subject.",
  "Your goal: Find reliable facts",
  closing
].join("\n\n")
export const writerSystem = [
  "You are Writer.",
  "Your goal: Write clear prose",
  closing,
  "Format your answer as follows: Use short sentences."
].join("\n\n")
export const reviewerSystem = ["You are Reviewer.", "Your goal: Catch mistakes", closing].join("\n\n")

export const makeResearcher = () =>
  Agent.make({
    role: "Researcher",
    goal: "Find reliable facts",
    background: "You have read every paper on the subject.",
    toolkit
  })
export const makeWriter = () => Agent.make({ role: "Writer", goal: "Write clear prose", responseFormat: "Use short sentences." })
export const makeReviewer = () => Agent.make({ role: "Reviewer", goal: "Catch mistakes", background: "   ", responseFormat: " " })

/** One line per message: role and content, tool calls and results included. */
/** The transcript of every request the model received. */
/** What the model was offered in each request. */
export const offered = (model: ChatModel.ScriptedModel) =>
  model.requests.map((request) => ({ tools: request.tools.map((tool) => tool.name), toolChoice: request.toolChoice }))

/** A task's output without its time fields, for exact comparisons. */
export const summary = (output: TaskOutput.TaskOutput) => {
  const { completedAt: _completedAt, duration: _duration, ...rest } = output
  return rest
}

export const millis = (output: TaskOutput.TaskOutput) => ({
  duration: Duration.toMillis(output.duration),
  completedAt: DateTime.toEpochMillis(output.completedAt)
})

export const asTaskExecutionError = (error: EnsembleError.EnsembleError): EnsembleError.TaskExecutionError => {
  if (error._tag !== "TaskExecutionError") throw new globalThis.Error(`expected TaskExecutionError, got ${error._tag}`)
  return error
}

/** A model that calls `lookup` whenever it may, and otherwise answers `finalText`. */
export const finalText = "Best guess: 42"
export const toolCaller: ChatModel.ScriptedTurn = (request, turn) =>
  request.tools.length > 0 && request.toolChoice !== "none"
    ? { toolCalls: [{ name: "lookup", params: { query: `q${turn + 1}` } }] }
    : { text: finalText }

export const turns = (n: number, turn: ChatModel.ScriptedTurn): ReadonlyArray<ChatModel.ScriptedTurn> =>
  Array.from({ length: n }, () => turn)

/**
 * The prompts an agent gets for a task: a system prompt from its role, goal,
 * background and response format, and a user prompt with the outputs of its
 * context tasks, the task, the expected output and (for structured output)
 * the JSON Schema to answer in.
 *
 * @since 0.1.0
 */
import type { Any as AnyAgent } from "./Agent.ts"
import type { TaskOutput } from "./TaskOutput.ts"
import { ValidationError } from "./EnsembleError.ts"
import { show } from "./internal/rules.ts"

/** Throws `ValidationError` unless `value` is an object whose `fields` are strings (a JavaScript caller may pass anything). */
const requireStrings = (value: unknown, fields: ReadonlyArray<string>, what: string): void => {
  if (typeof value !== "object" || value === null) throw new ValidationError({ message: `${what} must be an object (got ${show(value)})` })
  for (const field of fields) {
    const read: unknown = (value as Readonly<Record<string, unknown>>)[field]
    if (typeof read !== "string") throw new ValidationError({ message: `${what}: ${field} must be a string (got ${show(read)})` })
  }
}

/**
 * The system prompt of an agent.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentPrompt } from "loopwork/ensemble"
 *
 * const writer = Effect.runSync(Agent.make({ role: "Writer", goal: "Write clearly" }))
 * AgentPrompt.system(writer).startsWith("You are Writer.") // true
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const system = (agent: AnyAgent): string => {
  requireStrings(agent, ["role", "goal", "background", "responseFormat"], "AgentPrompt.system agent")
  const parts = [`You are ${agent.role}.`]
  if (agent.background.trim().length > 0) parts.push(agent.background)
  parts.push(`Your goal: ${agent.goal}`)
  parts.push(
    "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
      "and leave out preamble and closing remarks."
  )
  if (agent.responseFormat.trim().length > 0) parts.push(`Format your answer as follows: ${agent.responseFormat}`)
  return parts.join("\n\n")
}

/**
 * What the user prompt of a task is built from.
 *
 * @example
 * ```ts
 * import { AgentPrompt } from "loopwork/ensemble"
 *
 * const input: AgentPrompt.TaskInput = { description: "Summarise", expectedOutput: "One paragraph", context: [] }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskInput {
  readonly description: string
  readonly expectedOutput: string
  readonly context: ReadonlyArray<TaskOutput>
  /** The JSON Schema the answer must match, when the task has an `outputType`. */
  readonly jsonSchema?: unknown
}

/**
 * The user prompt of a task: context first (each earlier output under its
 * agent and task), then the task, the expected output, and the output format.
 *
 * @example
 * ```ts
 * import { AgentPrompt } from "loopwork/ensemble"
 *
 * AgentPrompt.user({ description: "Summarise", expectedOutput: "One paragraph", context: [] })
 * // "## Task\nSummarise\n\n## Expected output\nOne paragraph"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const user = (input: TaskInput): string => {
  requireStrings(input, ["description", "expectedOutput"], "AgentPrompt.user input")
  if (!Array.isArray(input.context)) throw new ValidationError({ message: "AgentPrompt.user input: context must be an array of task outputs" })
  const sections: Array<string> = []
  if (input.context.length > 0) {
    sections.push(
      "## Context from earlier tasks\n" +
        input.context.map((output) => `### ${output.agentRole}: ${output.taskDescription}\n${output.raw}`).join("\n\n")
    )
  }
  sections.push(`## Task\n${input.description}`)
  sections.push(`## Expected output\n${input.expectedOutput}`)
  if (input.jsonSchema !== undefined) sections.push(`## Output format\n${outputFormat(input.jsonSchema)}`)
  return sections.join("\n\n")
}

/**
 * The instruction for structured output.
 *
 * @example
 * ```ts
 * import { AgentPrompt } from "loopwork/ensemble"
 *
 * AgentPrompt.outputFormat({ type: "number" }).includes("\"type\": \"number\"") // true
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const outputFormat = (jsonSchema: unknown): string =>
  "Answer with JSON only: no markdown fences, no text before or after it. " +
  `It must match this JSON Schema:\n${JSON.stringify(jsonSchema, null, 2)}`

/**
 * The message asking again after an answer did not decode.
 *
 * @example
 * ```ts
 * import { AgentPrompt } from "loopwork/ensemble"
 *
 * AgentPrompt.correction("Expected number", "ten", { type: "number" }).startsWith("Your answer could not be read") // true
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const correction = (error: string, previous: string, jsonSchema: unknown): string =>
  `Your answer could not be read as the required JSON.\n\nError: ${error}\n\nYour answer was:\n${previous}\n\n${
    outputFormat(jsonSchema)
  }`

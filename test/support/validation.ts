/**
 * Fixtures of the ensemble config tests (test/ensemble/Validation.test.ts, Template.test.ts,
 * Role.test.ts): valid agents and tasks to vary one field at a time, and a model that must never be
 * called.
 */
import { expect } from "@effect/vitest"
import { Effect, Logger } from "effect"
import type { Prompt } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, EnsembleError } from "../../src/ensemble/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The text of a message: a system string, or the text parts of any other message. */
export const messageText = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")

/** Each request the model received, as `role: text` lines. */
export const prompts = (model: ChatModel.ScriptedModel): ReadonlyArray<ReadonlyArray<string>> =>
  model.requests.map((request) => request.prompt.content.map((message) => `${message.role}: ${messageText(message)}`))

/** The user prompt of a task without context or outputType (see AgentPrompt.user). */
export const userPrompt = (description: string, expectedOutput: string): string =>
  `user: ## Task\n${description}\n\n## Expected output\n${expectedOutput}`

/** The system prompt of an agent without background or response format (see AgentPrompt.system). */
export const systemPrompt = (role: string, goal: string): string =>
  `system: You are ${role}.\n\nYour goal: ${goal}\n\n` +
  "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."

export const researcherOf = () => Agent.make({ role: "Researcher", goal: "Find reliable facts" })
export const writerOf = () => Agent.make({ role: "Writer", goal: "Write clear prose" })

/** A writable view of a task, to build what `Task.make` cannot (a context cycle). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Runs a failing build and returns its ValidationError (fails the test on success or on another error). */
export const validationError = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect).pipe(Effect.map((error) => {
    expect(error).toBeInstanceOf(EnsembleError.ValidationError)
    return error as EnsembleError.ValidationError
  }))

/** A logger that keeps every log line as `LEVEL message`. */
export const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push(`${logLevel} ${parts.map(String).join(" ")}`)
  })
  return { lines, layer: Logger.layer([logger]) }
}

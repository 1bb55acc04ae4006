/**
 * The Task config as one Schema: `Task.make` decodes its options with it, and
 * `Ensemble.make` checks task values with it. Messages follow the
 * specification where it has them ("Task description must not be blank",
 * "Task agent must not be null", …).
 *
 * @internal
 */
import { Predicate, Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import type { Any as AnyAgent } from "../Agent.ts"
import { messageOf } from "../../internal/describe.ts"
import { agentProblem } from "./agentConfig.ts"
import { type Check, count, isNonBlank, list, missingField, optional, problem, required, show } from "./rules.ts"

const blank = (field: string): Check => (u) => (isNonBlank(u) ? undefined : `Task ${field} must not be blank`)

const agent: Check = (u) => {
  if (u === undefined || u === null) return "Task agent must not be null"
  const wrong = agentProblem(u)
  return wrong === undefined ? undefined : `Task agent ${wrong}`
}

/** What a task is to this module (`Task` itself is declared above it, in `ensemble/Task.ts`). */
interface TaggedTask {
  readonly _tag: "Task"
}

const isTask = (u: unknown): u is TaggedTask => Predicate.isTagged(u, "Task")

const context: Check = (u) =>
  u === undefined
    ? undefined
    : list("Task context", "tasks", (entry) => (isTask(entry) ? undefined : `must be a task made by Task.make, got: ${show(entry)}`))(u)

/** Any Schema whose JSON Schema form can be written into the prompt. */
const outputType: Check = (u) => {
  if (u === undefined) return undefined
  if (!Schema.isSchema(u)) return `Task outputType must be a Schema (for example Schema.Struct({ ... })), got: ${show(u)}`
  try {
    Tool.getJsonSchemaFromSchema(u)
    return undefined
  } catch (error) {
    return `Task outputType has no JSON Schema form to show the agent: ${messageOf(error)}`
  }
}

const retries = count("Task maxOutputRetries", 0)

/**
 * Task options; the order of the fields is the order problems are reported in.
 *
 * @internal
 */
export const TaskOptions = Schema.Struct({
  description: required<string>(blank("description")),
  expectedOutput: required<string>(blank("expectedOutput")),
  agent: required<AnyAgent>(agent),
  // Checked to be tasks made by Task.make (taggedTask); Task.ts reads them as its own type.
  context: optional<ReadonlyArray<TaggedTask>>(context),
  outputType: optional<Schema.Codec<unknown, unknown>>(outputType),
  maxOutputRetries: optional<number>((u) => (u === undefined ? undefined : retries(u)))
}).annotate({ message: "Task.make expects an options object with description, expectedOutput and agent" })

/**
 * What is wrong with a value given as a task, or `undefined` for a task
 * (tagged "Task", every field present and valid).
 *
 * @internal
 */
export const taskProblem: Check = (u) => {
  if (!isTask(u)) return `must be a task made by Task.make, got: ${show(u)}`
  const wrong = problem(TaskOptions, u)
  if (wrong !== undefined) return `is not a valid task: ${wrong}`
  const missing = missingField(u, ["context", "maxOutputRetries"])
  return missing === undefined ? undefined : `is not a valid task: its ${missing} is missing (build tasks with Task.make)`
}

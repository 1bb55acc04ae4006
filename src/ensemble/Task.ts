/**
 * A task: what an agent should do, what the result should look like, which
 * earlier tasks' outputs it needs (`context`), and optionally a Schema its
 * output must decode to.
 *
 * `description` and `expectedOutput` may hold `{name}` placeholders, filled
 * from `run(inputs)` (see `Template`). Tasks are frozen and a task exists
 * only after its context, so `Task.make` cannot build one that lists itself
 * (`Ensemble.make` still checks hand-built objects: "Task cannot reference
 * itself in context"). `outputType` is a Schema, so the "not a primitive
 * type" rule of the specification does not apply: every Schema that decodes
 * without services works, including strings, numbers and arrays (a plain
 * text answer is accepted for a string schema).
 *
 * @since 0.1.0
 */
import { Effect, type Schema } from "effect"
import type { Any as AnyAgent } from "./Agent.ts"
import { ValidationError } from "./EnsembleError.ts"

/**
 * A task.
 *
 * @example
 * ```ts
 * import { Task } from "loopwork/ensemble"
 *
 * const describe = (task: Task.Task) => `${task.agent.role}: ${task.description}`
 * ```
 *
 * @since 0.1.0
 */
export interface Task {
  readonly _tag: "Task"
  readonly description: string
  readonly expectedOutput: string
  readonly agent: AnyAgent
  readonly context: ReadonlyArray<Task>
  /** The Schema the output must decode to (from JSON); absent: raw text. */
  readonly outputType: Schema.Codec<unknown, unknown> | undefined
  /** Extra attempts when the output does not decode (>= 0). */
  readonly maxOutputRetries: number
}

/**
 * What {@link make} takes.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Agent, Task } from "loopwork/ensemble"
 *
 * declare const analyst: Agent.Any
 * const options: Task.Options = {
 *   description: "Score {company}",
 *   expectedOutput: "A score from 0 to 10",
 *   agent: analyst,
 *   outputType: Schema.Struct({ score: Schema.Number })
 * }
 * ```
 *
 * @since 0.1.0
 */
export interface Options {
  readonly description: string
  readonly expectedOutput: string
  readonly agent: AnyAgent
  readonly context?: ReadonlyArray<Task> | undefined
  /** Any Schema that decodes without services (its JSON form is what the agent writes). */
  readonly outputType?: (Schema.Top & { readonly "DecodingServices": never }) | undefined
  readonly maxOutputRetries?: number | undefined
}

/**
 * The defaults of the specification.
 *
 * @example
 * ```ts
 * import { Task } from "loopwork/ensemble"
 *
 * Task.defaults.maxOutputRetries // 3
 * ```
 *
 * @since 0.1.0
 */
export const defaults = { maxOutputRetries: 3 } as const

const blank = (s: unknown): boolean => typeof s !== "string" || s.trim().length === 0

/**
 * Builds a task, checking the specification's rules: "Task description must
 * not be blank", "Task expectedOutput must not be blank", "Task
 * maxOutputRetries must be >= 0, got: N".
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Task } from "loopwork/ensemble"
 *
 * const program = Effect.gen(function*() {
 *   const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
 *   return yield* Task.make({ description: "Write about {topic}", expectedOutput: "Three paragraphs", agent: writer })
 * })
 * ```
 *
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Task, ValidationError> => {
  if (blank(options.description)) return Effect.fail(new ValidationError({ message: "Task description must not be blank" }))
  if (blank(options.expectedOutput)) {
    return Effect.fail(new ValidationError({ message: "Task expectedOutput must not be blank" }))
  }
  const maxOutputRetries = options.maxOutputRetries ?? defaults.maxOutputRetries
  if (!Number.isInteger(maxOutputRetries) || maxOutputRetries < 0) {
    return Effect.fail(new ValidationError({ message: `Task maxOutputRetries must be >= 0, got: ${maxOutputRetries}` }))
  }
  // Immutable: a task cannot be added to its own context after it is made.
  return Effect.succeed(Object.freeze({
    _tag: "Task",
    description: options.description,
    expectedOutput: options.expectedOutput,
    agent: options.agent,
    context: Object.freeze([...(options.context ?? [])]),
    outputType: options.outputType as Schema.Codec<unknown, unknown> | undefined,
    maxOutputRetries
  }))
}

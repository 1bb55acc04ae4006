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
 * The agent is prompted with the output's JSON Schema. When the task's
 * model answers in the provider's own JSON mode (`info.structuredOutputs`,
 * as `loopwork/ai-sdk` reports for OpenAI's models), every request of the
 * task also carries that JSON Schema as `responseFormat`, as a chain's
 * `output` does (`StructuredOutput`): in OpenAI's strict form when the
 * Schema has one, and as `{ "value": … }` around a Schema whose answer is
 * not an object. Either way an answer that does not decode is asked for
 * again, showing the error and the schema, at most `maxOutputRetries` times.
 *
 * @since 0.1.0
 */
import { Effect, type Schema } from "effect"
import { decodeOptions } from "./internal/rules.ts"
import { TaskOptions } from "./internal/taskConfig.ts"
import type { Any as AnyAgent } from "./Agent.ts"
import type { ValidationError } from "./EnsembleError.ts"

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
 * @category models
 * @since 0.1.0
 */
export interface Task {
  readonly _tag: "Task"
  readonly description: string
  readonly expectedOutput: string
  readonly agent: AnyAgent
  readonly context: ReadonlyArray<Task>
  /** The Schema the output must decode to (from JSON; in the provider's JSON mode when the model has one); absent: raw text. */
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
 * @category models
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
 * @category utils
 * @since 0.1.0
 */
export const defaults = { maxOutputRetries: 3 } as const

/**
 * Builds a task, checking the specification's rules: "Task description must
 * not be blank", "Task expectedOutput must not be blank", "Task agent must
 * not be null", "Task maxOutputRetries must be >= 0, got: N"; the agent must
 * be one `Agent.make` built, every context entry a task, and `outputType` a
 * Schema with a JSON Schema form. Options loaded from JSON, YAML or
 * JavaScript are checked the same way (a `ValidationError` naming the field,
 * never a thrown error).
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
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<Task, ValidationError> =>
  // Immutable: a task cannot be added to its own context after it is made.
  Effect.map(decodeOptions("Task.make", TaskOptions, options), (valid): Task =>
    Object.freeze({
      _tag: "Task",
      description: valid.description,
      expectedOutput: valid.expectedOutput,
      agent: valid.agent,
      // Each entry was checked to be a task made by Task.make.
      context: Object.freeze([...(valid.context ?? [])] as Array<Task>),
      outputType: valid.outputType,
      maxOutputRetries: valid.maxOutputRetries ?? defaults.maxOutputRetries
    }))

/**
 * How an ensemble's tasks are executed.
 *
 * - `"SEQUENTIAL"`: in list order; each task's output is available to later
 *   tasks that list it in their `context`.
 * - `"PARALLEL"`: tasks as a graph of their `context` references; a task
 *   starts when the tasks it depends on are done, independent tasks run at
 *   the same time (option `concurrency`); list order does not matter.
 * - `"HIERARCHICAL"`: a manager agent, built for the run, delegates the tasks
 *   to the workers with a `delegateTask` tool (under the ensemble's
 *   `constraints`) and writes the final answer.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The workflows this version runs.
 *
 * @example
 * ```ts
 * import { Workflow } from "loopwork/ensemble"
 *
 * const workflow: Workflow.Workflow = "SEQUENTIAL"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Workflow = Schema.Literals(["SEQUENTIAL", "PARALLEL", "HIERARCHICAL"]).annotate({ identifier: "Workflow" })

/**
 * @category models
 * @since 0.1.0
 */
export type Workflow = typeof Workflow.Type

/**
 * The typed failures of an ensemble. Messages follow the ensemble domain
 * specification word for word where it gives them.
 *
 * - `ValidationError`: a configuration rule is broken (at build time or when
 *   `run` starts, before any model call).
 * - `PromptTemplateError`: `{name}` placeholders have no value in `run(inputs)`;
 *   every missing name is reported at once.
 * - `TaskExecutionError`: a task failed; it carries the outputs of the tasks
 *   completed before it, so nothing is lost.
 * - `ParallelExecutionError`: a PARALLEL run with `onError: "continue"` had
 *   failures; it lists them, the skipped tasks and every completed output.
 * - `ConstraintViolationError`: a HIERARCHICAL run broke its constraints.
 * - `BudgetExceededError`: a run used up one of its run-wide budgets
 *   (`maxModelCalls`, `maxDelegations`) and was stopped; it carries the
 *   outputs completed so far.
 *
 * The run errors also carry the run's delegation records (`delegations`).
 *
 * @since 0.1.0
 */
import { Inspectable, Schema } from "effect"
import { printed } from "../internal/errorText.ts"
import { redactedShort, redactSecrets } from "../internal/redact.ts"
import { DelegationRecord } from "./Delegation.ts"
import { TaskOutput } from "./TaskOutput.ts"

/**
 * A configuration rule is broken; `message` says which.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.ValidationError({ message: "Agent role must not be blank" }).message
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  message: Schema.String
}) {}

/**
 * Template variables without a value.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.PromptTemplateError({ missing: ["topic"], template: "Research {topic}" }).message
 * // "Missing template variables: [topic]. Provide them in run(inputs). Template: 'Research {topic}'"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class PromptTemplateError extends Schema.TaggedError<PromptTemplateError>()("PromptTemplateError", {
  missing: Schema.Array(Schema.String),
  template: Schema.String
}) {
  override get message(): string {
    const shown = redactedShort(this.template, 100)
    return redactSecrets(`Missing template variables: [${this.missing.join(", ")}]. Provide them in run(inputs). Template: '${shown}'`)
  }

  /** Printed (`console.log`, `util.inspect`): its tag and redacted message, not the template itself. */
  override [Inspectable.NodeInspectSymbol](): string {
    return printed(`PromptTemplateError: ${this.message}`, [], this.stack)
  }
}

/** How many outputs and delegation records an error carries, as its printout lists them. */
const counts = (error: { readonly completedOutputs: ReadonlyArray<unknown>; readonly delegations?: ReadonlyArray<unknown> | undefined }) => [
  `completedOutputs: ${error.completedOutputs.length}`,
  ...(error.delegations === undefined ? [] : [`delegations: ${error.delegations.length}`])
]

/**
 * A task failed. `reason` says why (the loop's error message, or the
 * structured-output failure); `completedOutputs` are the outputs of the tasks
 * that completed before it, in execution order.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.TaskExecutionError({
 *   taskDescription: "Write the report",
 *   agentRole: "Writer",
 *   reason: "The model call failed: overloaded",
 *   completedOutputs: []
 * }).message
 * // "Task 'Write the report' (agent 'Writer') failed: The model call failed: overloaded"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class TaskExecutionError extends Schema.TaggedError<TaskExecutionError>()("TaskExecutionError", {
  taskDescription: Schema.String,
  agentRole: Schema.String,
  reason: Schema.String,
  completedOutputs: Schema.Array(TaskOutput),
  /** The run's delegation attempts up to the failure. */
  delegations: Schema.optionalKey(Schema.Array(DelegationRecord))
}) {
  override get message(): string {
    return redactSecrets(`Task '${this.taskDescription}' (agent '${this.agentRole}') failed: ${this.reason}`)
  }

  /** Printed (`console.log`, `util.inspect`): its tag, redacted message and counts, not the task's text itself. */
  override [Inspectable.NodeInspectSymbol](): string {
    return printed(`TaskExecutionError: ${this.message}`, counts(this), this.stack)
  }
}

/**
 * A PARALLEL run with `onError: "continue"` had failures: each failed task
 * with its reason, the tasks skipped because something they depend on failed,
 * and every output that completed.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.ParallelExecutionError({
 *   failures: [{ taskDescription: "Fetch prices", agentRole: "Analyst", reason: "timed out" }],
 *   skipped: ["Compare prices"],
 *   completedOutputs: []
 * }).message
 * // "1 task(s) failed: 'Fetch prices' (Analyst): timed out; skipped because a task they depend on failed: 'Compare prices'"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ParallelExecutionError extends Schema.TaggedError<ParallelExecutionError>()("ParallelExecutionError", {
  failures: Schema.Array(Schema.Struct({ taskDescription: Schema.String, agentRole: Schema.String, reason: Schema.String })),
  skipped: Schema.Array(Schema.String),
  completedOutputs: Schema.Array(TaskOutput),
  /** The run's delegation attempts up to the failure. */
  delegations: Schema.optionalKey(Schema.Array(DelegationRecord))
}) {
  override get message(): string {
    const failed = this.failures.map((f) => `'${f.taskDescription}' (${f.agentRole}): ${f.reason}`).join("; ")
    const skipped = this.skipped.length === 0
      ? ""
      : `; skipped because a task they depend on failed: ${this.skipped.map((d) => `'${d}'`).join(", ")}`
    return redactSecrets(`${this.failures.length} task(s) failed: ${failed}${skipped}`)
  }

  /** Printed (`console.log`, `util.inspect`): its tag, redacted message and counts, not the tasks' text itself. */
  override [Inspectable.NodeInspectSymbol](): string {
    return printed(`ParallelExecutionError: ${this.message}`, counts(this), this.stack)
  }
}

/**
 * A HIERARCHICAL run finished without meeting its constraints (a required
 * worker was never delegated to). It carries every violation and all the
 * outputs produced (the workers' and the manager's).
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.ConstraintViolationError({
 *   violations: ["Required worker 'Reviewer' was not delegated to during this run."],
 *   completedOutputs: []
 * }).message
 * // "Hierarchical constraint violated: Required worker 'Reviewer' was not delegated to during this run."
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ConstraintViolationError extends Schema.TaggedError<ConstraintViolationError>()("ConstraintViolationError", {
  violations: Schema.Array(Schema.String),
  completedOutputs: Schema.Array(TaskOutput),
  /** The run's delegation attempts up to the failure. */
  delegations: Schema.optionalKey(Schema.Array(DelegationRecord))
}) {
  override get message(): string {
    return redactSecrets(
      this.violations.length === 1
        ? `Hierarchical constraint violated: ${this.violations[0]}`
        : `Hierarchical constraints violated (${this.violations.length}): ${this.violations.join("; ")}`
    )
  }

  /** Printed (`console.log`, `util.inspect`): its tag, message and counts, not the outputs themselves. */
  override [Inspectable.NodeInspectSymbol](): string {
    return printed(`ConstraintViolationError: ${this.message}`, counts(this), this.stack)
  }
}

/**
 * A run used up one of its run-wide budgets and was stopped: `budget` names
 * it (`maxModelCalls`: model calls of every agent, the manager and
 * delegated workers; `maxDelegations`: approved delegations, manager and
 * peer), `limit` is its size. Nothing is lost: it carries every output
 * completed before the run stopped and every delegation record.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * new EnsembleError.BudgetExceededError({ budget: "maxDelegations", limit: 50, completedOutputs: [], delegations: [] }).message
 * // "The run used up its budget of 50 delegations (maxDelegations) and was stopped after 0 completed output(s). If the work needs more, raise maxDelegations in Ensemble.make; if not, look for an agent that delegates in a loop."
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class BudgetExceededError extends Schema.TaggedError<BudgetExceededError>()("BudgetExceededError", {
  budget: Schema.Literals(["maxModelCalls", "maxDelegations"]),
  limit: Schema.Int,
  completedOutputs: Schema.Array(TaskOutput),
  delegations: Schema.Array(DelegationRecord)
}) {
  override get message(): string {
    const what = this.budget === "maxModelCalls" ? "model calls" : "delegations"
    return `The run used up its budget of ${this.limit} ${what} (${this.budget}) and was stopped after ` +
      `${this.completedOutputs.length} completed output(s). If the work needs more, raise ${this.budget} in ` +
      "Ensemble.make; if not, look for an agent that delegates in a loop."
  }

  /** Printed (`console.log`, `util.inspect`): its tag, message and counts, not the outputs themselves. */
  override [Inspectable.NodeInspectSymbol](): string {
    return printed(`BudgetExceededError: ${this.message}`, counts(this), this.stack)
  }
}

/**
 * Any error `Ensemble.run` fails with.
 *
 * @example
 * ```ts
 * import { EnsembleError } from "loopwork/ensemble"
 *
 * const describe = (error: EnsembleError.EnsembleError) => `${error._tag}: ${error.message}`
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export type EnsembleError =
  | ValidationError
  | PromptTemplateError
  | TaskExecutionError
  | ParallelExecutionError
  | ConstraintViolationError
  | BudgetExceededError

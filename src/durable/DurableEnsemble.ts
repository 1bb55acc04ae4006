/**
 * An ensemble as a durable workflow: the ensemble's run is the parent; each
 * task, and each approved delegation's worker (the HIERARCHICAL manager's
 * `delegateTask`, an agent's peer `delegate`), is a child workflow. So the
 * work of one ensemble spreads over runners, a crash resumes each part where
 * it stopped (model calls and handler runs are recorded, as in
 * `DurableChain` — a HIERARCHICAL manager's in the parent), and a replayed
 * parent joins the children it started instead of starting them again.
 *
 * Budgets (`maxModelCalls`, …) and a HIERARCHICAL run's constraints bound
 * the whole ensemble: each child starts from its parent's usage and brings
 * back what it used. What differs from `Ensemble.run`: children that run
 * side by side each start from the usage at their start; events are
 * published by the process that runs each part (again on a replay, with the
 * same delegation ids); and a structured output is given as its
 * `outputType`'s JSON encoding (a workflow's result is stored as JSON).
 * Delegation records and worker outputs are listed by when each delegation
 * ended, a replay too. A task's child workflow that dies (a defect, or the
 * engine failing to start it or read its result) fails the task; a
 * delegation's fails the delegating agent's task as a defect does (no
 * FAILURE record, and no recorded turn of the delegating agent answers it,
 * so a replay cannot contradict it).
 *
 * @stability unstable (effect/workflow and effect/cluster are)
 * @since 0.1.0
 */
import { Effect, Layer, Schema } from "effect"
import { Workflow, type WorkflowEngine } from "effect/workflow"
import type { ChatModel } from "../ChatModel.ts"
import type { Ensemble } from "../ensemble/Ensemble.ts"
import {
  BudgetExceededError,
  ConstraintViolationError,
  ParallelExecutionError,
  PromptTemplateError,
  TaskExecutionError,
  ValidationError
} from "../ensemble/EnsembleError.ts"
import { EnsembleOutput } from "../ensemble/TaskOutput.ts"
import { readably } from "../internal/checks.ts"
import { InvalidInput } from "../LoopError.ts"
import { NotDurableChain } from "./DurableError.ts"
import { delegationBody, parentBody, taskBody } from "./internal/ensembleBodies.ts"
import { notDurable } from "./internal/config.ts"
import { childWorkflows } from "./internal/ensembleChildren.ts"
import { claimName, fitsEngine } from "./internal/workflowName.ts"
import { checkExecute } from "./internal/checkedExecute.ts"
import { payloadOf } from "./internal/ensemblePayload.ts"

/**
 * What a durable ensemble's execution is started with: an id (the same id
 * is the same execution) and the ensemble's template inputs.
 *
 * @example
 * ```ts
 * import { DurableEnsemble } from "loopwork/durable"
 *
 * const payload: typeof DurableEnsemble.Payload.Type = { id: "report-2026-11", inputs: { topic: "tides" } }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Payload = Schema.Struct({
  id: Schema.String,
  inputs: Schema.Record(Schema.String, Schema.String)
})

/**
 * How a durable ensemble's execution fails: as `Ensemble.run` fails.
 *
 * @example
 * ```ts
 * import { DurableEnsemble } from "loopwork/durable"
 *
 * const isTaskFailure = (error: typeof DurableEnsemble.Failure.Type) => error._tag === "TaskExecutionError"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Failure = Schema.Union([
  ValidationError,
  PromptTemplateError,
  TaskExecutionError,
  ParallelExecutionError,
  ConstraintViolationError,
  BudgetExceededError
])

/**
 * A durable ensemble's workflow: a plain effect `Workflow` (execute, poll,
 * interrupt, resume) that ends with the ensemble's output. Its `execute` and
 * `executionId` check the payload first: one of the wrong shape (from
 * JavaScript) fails with a `ValidationError`, also with `discard` (effect's
 * own would die). A copy made with `annotate` is effect's, unchecked, and
 * not a durable ensemble's for {@link layer}.
 *
 * @example
 * ```ts
 * import type { DurableEnsemble } from "loopwork/durable"
 *
 * declare const Report: DurableEnsemble.DurableEnsembleWorkflow<"Report">
 * const started = Report.execute({ id: "report-1", inputs: { topic: "tides" } }, { discard: true })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type DurableEnsembleWorkflow<Name extends string> =
  & {
    readonly execute: <const Discard extends boolean = false>(payload: typeof Payload.Type, options?: {
      readonly discard?: Discard
      readonly detached?: [Discard] extends [true] ? boolean | undefined : undefined
    }) => Effect.Effect<
      Discard extends true ? string : typeof EnsembleOutput.Type,
      (Discard extends true ? never : typeof Failure.Type) | ValidationError,
      WorkflowEngine.WorkflowEngine
    >
    readonly executionId: (payload: typeof Payload.Type) => Effect.Effect<string, ValidationError>
  }
  & Workflow.Workflow<Name, typeof Payload, typeof EnsembleOutput, typeof Failure>

interface Config {
  readonly ensemble: Ensemble<unknown>
  readonly version: number
  readonly children: ReturnType<typeof childWorkflows>
}

const configs = new WeakMap<Workflow.Any, Config>()

/**
 * An ensemble's durable workflow. Register its bodies on runners with
 * {@link layer}; start it with `workflow.execute({ id, inputs })` from any
 * process connected to the engine. `version` (default 1) works as in
 * `DurableChain.workflow`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Ensemble, Task } from "loopwork/ensemble"
 * import { DurableEnsemble } from "loopwork/durable"
 *
 * const program = Effect.gen(function*() {
 *   const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
 *   const haiku = yield* Task.make({ description: "A haiku about {topic}", expectedOutput: "A haiku", agent: writer })
 *   const team = yield* Ensemble.make({ agents: [writer], tasks: [haiku] })
 *   const Haiku = DurableEnsemble.workflow("Haiku", team)
 *   return yield* Haiku.execute({ id: "haiku-1", inputs: { topic: "tides" } }, { discard: true })
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const workflow = <const Name extends string, R>(
  name: Name,
  ensemble: Ensemble<R>,
  options?: { readonly version?: number | undefined }
): DurableEnsembleWorkflow<Name> => {
  // From JavaScript anything may come: an InvalidInput, never a TypeError or what a getter throws.
  let version: unknown
  let kind: unknown
  const unreadable = readably("options", () => void (version = options?.version ?? 1)) ??
    readably("ensemble", () => void (kind = ensemble?.workflow))
  if (unreadable !== undefined) throw unreadable
  if (!(typeof version === "number" && Number.isSafeInteger(version) && version >= 1)) {
    throw new InvalidInput({ field: "version", rule: "a whole number from 1", value: version })
  }
  if (kind !== "SEQUENTIAL" && kind !== "PARALLEL" && kind !== "HIERARCHICAL") {
    throw new InvalidInput({ field: "ensemble", rule: "an ensemble made by Ensemble.make", value: kind })
  }
  // Last: a name is kept once the workflow is made.
  const badName = claimName(name, true)
  if (badName !== undefined) throw badName
  const made = checkExecute(
    Workflow.make(name, { payload: Payload, idempotencyKey: ({ id }) => id, success: EnsembleOutput, error: Failure }),
    payloadOf
  ) as DurableEnsembleWorkflow<Name>
  configs.set(made, { ensemble: ensemble as Ensemble<unknown>, version, children: childWorkflows(name) })
  return made
}

/**
 * Registers a durable ensemble's bodies (the parent, its tasks and its delegations) with the
 * workflow engine. Runners need the ensemble's model and its agents' tool
 * handlers, like `Ensemble.run`. On PostgreSQL, a name longer than effect's
 * engine stores with its children's suffix (130 characters) fails the
 * layer with `InvalidInput`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import type { ChatModel } from "loopwork"
 * import { DurableEnsemble, DurableSqlite } from "loopwork/durable"
 *
 * declare const Report: DurableEnsemble.DurableEnsembleWorkflow<"Report">
 * declare const Model: Layer.Layer<ChatModel.ChatModel>
 * const Runner = DurableEnsemble.layer(Report).pipe(
 *   Layer.provideMerge(DurableSqlite.runner({ filename: "runs.db" })),
 *   Layer.provide(Model)
 * )
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <Name extends string, R = never>(
  workflow: DurableEnsembleWorkflow<Name>
): Layer.Layer<never, NotDurableChain | InvalidInput, WorkflowEngine.WorkflowEngine | ChatModel | R> => {
  const config = configs.get(workflow)
  if (config === undefined) return Layer.effectDiscard(Effect.fail(notDurable(workflow, "DurableEnsemble.workflow")))
  const { children, ensemble, version } = config
  return Layer.provideMerge(
    Layer.mergeAll(
      workflow.toLayer(parentBody(ensemble, children, version)),
      children.task.toLayer(taskBody(ensemble, children, version)),
      children.delegation.toLayer(delegationBody(ensemble, children, version))
    ) as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | ChatModel | R>,
    Layer.effectDiscard(fitsEngine([children.task._tag, children.delegation._tag]))
  )
}

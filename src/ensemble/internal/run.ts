/**
 * One `Ensemble.run`: check what it was given (`validate.ts`), prepare what
 * the run shares (`prepare.ts`: models built once, budgets, the constraints'
 * guard, delegation records), run the ensemble's workflow, and assemble the
 * output — or the error, with the delegation records, or
 * `BudgetExceededError` once a budget ran out. Publishes `EnsembleCompleted`
 * / `EnsembleFailed`.
 *
 * Each step is cheap for the work it does: what the run reads from its
 * fiber (clock, context, task runner, sink, tracing) is read once, the checks
 * complete at once instead of as steps of the fiber, and work done for
 * events, spans or a scope is skipped when nobody watches, nothing traces
 * and no model layer needs building.
 *
 * @internal
 */
import { Clock, type Context, Duration, Effect, type Fiber, Result } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import * as Budget from "./budget.ts"
import { type Delegations, runAgent } from "./delegation.ts"
import type { Fields } from "./ensemble.ts"
import { hierarchical } from "./hierarchical.ts"
import { parallel } from "./parallel.ts"
import type { ResolvedTask, TaskFailure } from "./runTask.ts"
import { sequential } from "./sequential.ts"
import { CurrentTaskRunner, remotely, type TaskRunner } from "./taskRunner.ts"
import { type Checked, checkRunNow, missingHandler, resolveAllNow } from "./validate.ts"
import { modelLayers, prepare, prepared, withServices } from "./prepare.ts"
import { workflowSpan } from "../../internal/telemetry/ensembleSpans.ts"
import type { DelegationRecord } from "../Delegation.ts"
import {
  type BudgetExceededError,
  ConstraintViolationError,
  type EnsembleError,
  ParallelExecutionError,
  TaskExecutionError
} from "../EnsembleError.ts"
import { isWatched, publish, Sink } from "../EnsembleEvent.ts"
import { isTraced } from "../../internal/tracing.ts"
import type * as Agent from "../Agent.ts"
import type { Task } from "../Task.ts"
import type { EnsembleOutput, TaskOutput } from "../TaskOutput.ts"

type RunError = TaskExecutionError | ParallelExecutionError | ConstraintViolationError

/** What follows the workflow: the run's end after its error, or after its outputs, each paired with its task (none for manager and delegated work). */
interface Then {
  readonly onFailure: (error: RunError) => Effect.Effect<EnsembleOutput, EnsembleError, ChatModel>
  readonly onSuccess: (
    pairs: ReadonlyArray<readonly [Task | undefined, TaskOutput]>
  ) => Effect.Effect<EnsembleOutput, EnsembleError, ChatModel>
}

/** Runs the ensemble's workflow, then `then` (SEQUENTIAL: from its last task's end, with no step of its own). */
const workflowOf = (
  ensemble: Fields,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  d: Delegations,
  runRoot: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>,
  then: Then
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel> => {
  if (ensemble.workflow === "SEQUENTIAL") return sequential(ensemble.tasks, resolved, runRoot, then)
  if (ensemble.workflow === "PARALLEL") {
    const options = { concurrency: ensemble.concurrency, onError: ensemble.onError }
    return Effect.matchEffect(parallel(ensemble.tasks, resolved, options, runRoot), then)
  }
  const position = new Map(ensemble.tasks.map((task, index) => [task, index]))
  const plan = ensemble.tasks.map((task) => ({
    resolved: resolved.get(task)!,
    context: task.context.flatMap((dependency) => {
      const at = position.get(dependency)
      return at === undefined ? [] : [at]
    })
  }))
  return Effect.matchEffect(hierarchical(d, plan, { llm: ensemble.managerLlm, maxIterations: ensemble.managerMaxIterations }), {
    onFailure: then.onFailure,
    onSuccess: (outputs) => then.onSuccess(outputs.map((output) => [undefined, output] as const))
  })
}

/**
 * How a root task runs: by its agent here, or where the run's `TaskRunner`
 * puts it (its records merged). The records of the delegations its agent
 * asks for are placed under its position (see `recordOrder.ts`).
 */
const rootRunner = (
  d: Delegations,
  tasks: ReadonlyArray<Task>,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  runner: TaskRunner | undefined
) => {
  const position = new Map(tasks.map((task, index) => [resolved.get(task)!, index]))
  if (runner === undefined) {
    return (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => runAgent(d, task, context, 0, [(position.get(task) ?? -1) + 1])
  }
  return (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => {
    const index = position.get(task) ?? -1
    return remotely(d, [index + 1], (usage) => runner.run(index, task, context, usage))
  }
}

/** The error of a failed run: `BudgetExceededError` once a budget ran out, else the workflow's with the delegation records. */
const runError = (error: RunError, d: Delegations): RunError | BudgetExceededError =>
  d.budget.exceeded === undefined
    ? withDelegations(error, d.records)
    : Budget.exceededError(d.budget, d.budget.exceeded, error.completedOutputs, d.records)

/** The error of a failed run, with the run's delegation records attached. */
const withDelegations = (error: RunError, delegations: ReadonlyArray<DelegationRecord>): RunError => {
  switch (error._tag) {
    case "TaskExecutionError":
      return new TaskExecutionError({
        taskDescription: error.taskDescription,
        agentRole: error.agentRole,
        reason: error.reason,
        completedOutputs: error.completedOutputs,
        delegations
      })
    case "ParallelExecutionError":
      return new ParallelExecutionError({
        failures: error.failures,
        skipped: error.skipped,
        completedOutputs: error.completedOutputs,
        delegations
      })
    case "ConstraintViolationError":
      return new ConstraintViolationError({
        violations: error.violations,
        completedOutputs: error.completedOutputs,
        delegations
      })
  }
}

/** Logs a warning for each agent no task uses. */
const warnUnused = (ensemble: Fields): Effect.Effect<void> => {
  let unused: Array<Agent.Any> | undefined
  agents: for (const agent of ensemble.agents) {
    for (const task of ensemble.tasks) if (task.agent === agent) continue agents
    ;(unused ??= []).push(agent)
  }
  return unused === undefined
    ? Effect.void
    : Effect.forEach(unused, (agent) => Effect.logWarning(`Agent '${agent.role}' is not used by any task`), { discard: true })
}

/** The workflow of a checked ensemble, its tasks' templates filled, with the run's shared state. */
type Execute = (
  ensemble: Fields,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  d: Delegations
) => Effect.Effect<EnsembleOutput, EnsembleError, ChatModel>

/**
 * The run once its ensemble and inputs passed: every template's variables,
 * a handler for every tool in `context`, then the workflow — with the
 * models of agents that bring their own built in the run's scope (a run
 * without them needs none).
 */
const checkedRun = (
  checked: Checked,
  context: Context.Context<ChatModel>,
  execute: Execute
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel> => {
  const ensemble = checked.ensemble
  const resolved = resolveAllNow(ensemble.tasks, checked.inputs)
  if (Result.isFailure(resolved)) return Effect.fail(resolved.failure)
  const missing = missingHandler(ensemble.agents, context)
  if (missing !== undefined) return Effect.fail(missing)
  const layers = modelLayers(ensemble)
  return layers.length === 0
    ? execute(ensemble, resolved.success, prepared(ensemble, [], [], context))
    : Effect.scoped(Effect.flatMap(prepare(ensemble), (d) => execute(ensemble, resolved.success, d)))
}

/** The run's output once its workflow ended (or `BudgetExceededError`, once a budget ran out), announced when `watched`. */
const finish = (
  ensemble: Fields,
  d: Delegations,
  pairs: ReadonlyArray<readonly [Task | undefined, TaskOutput]>,
  duration: number,
  watched: boolean
): Effect.Effect<EnsembleOutput, BudgetExceededError> => {
  const taskOutputs = pairs.map(([, output]) => output)
  if (d.budget.exceeded !== undefined) {
    return Effect.fail(Budget.exceededError(d.budget, d.budget.exceeded, taskOutputs, d.records))
  }
  let totalToolCalls = d.counters.peerToolCalls
  for (const output of taskOutputs) totalToolCalls += output.toolCallCount
  // The final task's output: the last in the list (for PARALLEL, outputs are in completion order).
  const last = ensemble.tasks[ensemble.tasks.length - 1]
  // HIERARCHICAL: the manager's synthesis, which comes last.
  const final = pairs.find(([task]) => task !== undefined && task === last)?.[1] ?? taskOutputs[taskOutputs.length - 1]
  const output: EnsembleOutput = {
    raw: final.raw,
    taskOutputs,
    totalDuration: Duration.millis(duration),
    totalToolCalls,
    delegations: d.records
  }
  return watched ? Effect.as(publish({ _tag: "EnsembleCompleted", output }), output) : Effect.succeed(output)
}

/**
 * The run in `fiber`: the clock, context and task runner read once, the
 * checks (which complete at once: no step of the fiber each; a warning for
 * each unused agent after the ensemble's), the workflow within the run's
 * budgets, then the output with its totals (or the error).
 */
const attempt = (
  fiber: Fiber.Fiber<unknown, unknown>,
  given: Fields,
  inputs: Readonly<Record<string, string>>,
  watched: boolean
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel> => {
  const clock = fiber.getRef(Clock.Clock)
  const started = clock.currentTimeMillisUnsafe()
  const runner = fiber.getRef(CurrentTaskRunner)
  const execute: Execute = (ensemble, resolved, d) =>
    withServices(
      workflowOf(ensemble, resolved, d, rootRunner(d, ensemble.tasks, resolved, runner), {
        onFailure: (error) => Effect.fail(runError(error, d)),
        onSuccess: (pairs) => finish(ensemble, d, pairs, clock.currentTimeMillisUnsafe() - started, watched)
      }),
      d
    )
  const checked = checkRunNow(given, inputs)
  if (Result.isFailure(checked)) return Effect.fail(checked.failure)
  const context = fiber.context as Context.Context<ChatModel>
  const warnings = warnUnused(checked.success.ensemble)
  return warnings === Effect.void
    ? checkedRun(checked.success, context, execute)
    : Effect.andThen(warnings, Effect.suspend(() => checkedRun(checked.success, context, execute)))
}

/**
 * @internal `Ensemble.run`: the checks, the workflow within the run's
 * budgets, then the output with its totals (or the error) — in its
 * `invoke_workflow` span when traced, announced (`EnsembleCompleted` /
 * `EnsembleFailed`) when someone watches the run's events
 */
export const run = (
  given: Fields,
  inputs: Readonly<Record<string, string>>
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel> =>
  Effect.withFiber((fiber) => {
    const watched = isWatched(fiber.getRef(Sink))
    const announced = (ran: Effect.Effect<EnsembleOutput, EnsembleError, ChatModel>) =>
      watched ? Effect.tapError(ran, (error) => publish({ _tag: "EnsembleFailed", error: error._tag, message: error.message })) : ran
    if (!isTraced(fiber.context)) return announced(attempt(fiber, given, inputs, watched))
    // Traced: the run reads its context inside its span, so the spans of its steps are the span's children.
    return workflowSpan(announced(Effect.withFiber((inner) => attempt(inner, given, inputs, watched))), given)
  })

/** @internal what one run shares (see `prepare.ts`; `loopwork/durable`'s bodies prepare with it too) */
export { prepare }

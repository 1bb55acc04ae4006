/**
 * One `Ensemble.run`: check what it was given (`validate.ts`), prepare what
 * the run shares (models built once, budgets, the constraints' guard,
 * delegation records), run the ensemble's workflow, and assemble the output
 * — or the error, with the delegation records, or `BudgetExceededError` once
 * a budget ran out. Publishes `EnsembleCompleted` / `EnsembleFailed`.
 *
 * @internal
 */
import { Clock, Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import { ChatModel } from "../../ChatModel.ts"
import { CurrentDurability } from "../../internal/durability.ts"
import * as Budget from "./budget.ts"
import { type Delegations, runAgent } from "./delegation.ts"
import type { Fields } from "./ensemble.ts"
import * as Guard from "./guard.ts"
import { hierarchical } from "./hierarchical.ts"
import { parallel } from "./parallel.ts"
import type { ResolvedTask, TaskFailure } from "./runTask.ts"
import { sequential } from "./sequential.ts"
import { CurrentTaskRunner, remotely, type TaskRunner } from "./taskRunner.ts"
import { checkHandlers, checkRun, resolveAll } from "./validate.ts"
import { workflowSpan } from "../../internal/telemetry/ensembleSpans.ts"
import type { DelegationRecord } from "../Delegation.ts"
import {
  type BudgetExceededError,
  ConstraintViolationError,
  type EnsembleError,
  ParallelExecutionError,
  TaskExecutionError
} from "../EnsembleError.ts"
import { publish } from "../EnsembleEvent.ts"
import type { Task } from "../Task.ts"
import type { EnsembleOutput, TaskOutput } from "../TaskOutput.ts"

/** Runs the ensemble's workflow; pairs each output with its task (none for manager and delegated work). */
const workflowOf = (
  ensemble: Fields,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  d: Delegations,
  runRoot: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<
  ReadonlyArray<readonly [Task | undefined, TaskOutput]>,
  TaskExecutionError | ParallelExecutionError | ConstraintViolationError,
  ChatModel
> => {
  if (ensemble.workflow === "PARALLEL") {
    return parallel(ensemble.tasks, resolved, { concurrency: ensemble.concurrency, onError: ensemble.onError }, runRoot)
  }
  if (ensemble.workflow === "SEQUENTIAL") return sequential(ensemble.tasks, resolved, runRoot)
  const position = new Map(ensemble.tasks.map((task, index) => [task, index]))
  const plan = ensemble.tasks.map((task) => ({
    resolved: resolved.get(task)!,
    context: task.context.flatMap((dependency) => {
      const at = position.get(dependency)
      return at === undefined ? [] : [at]
    })
  }))
  return Effect.map(
    hierarchical(d, plan, { llm: ensemble.managerLlm, maxIterations: ensemble.managerMaxIterations }),
    (outputs) => outputs.map((output) => [undefined, output] as const)
  )
}

/** How a root task runs: by its agent here, or where the run's `TaskRunner` puts it (its records merged). */
const rootRunner = (d: Delegations, tasks: ReadonlyArray<ResolvedTask>, runner: TaskRunner | undefined) => {
  if (runner === undefined) return (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => runAgent(d, task, context, 0)
  const position = new Map(tasks.map((task, index) => [task, index]))
  return (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) =>
    remotely(d, (usage) => runner.run(position.get(task) ?? -1, task, context, usage))
}

type RunError = TaskExecutionError | ParallelExecutionError | ConstraintViolationError

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

/**
 * What one run shares (see `Delegations`): each distinct model layer (the
 * agents' and the manager's) built once, every model — these and the
 * ensemble's `ChatModel` — counted against the run's budget, the guard of
 * its constraints, and its delegation records.
 *
 * @internal
 */
export const prepare = (ensemble: Fields): Effect.Effect<Delegations, never, ChatModel | Scope.Scope> =>
  Effect.gen(function*() {
    const budget = Budget.make(ensemble)
    const counted = (built: Context.Context<ChatModel>) =>
      Context.add(built, ChatModel, Budget.counted(budget, Context.get(built, ChatModel)))
    const models = new Map<Layer.Layer<ChatModel>, Context.Context<ChatModel>>()
    const manager = ensemble.workflow === "HIERARCHICAL" ? [ensemble.managerLlm] : []
    for (const llm of [...ensemble.agents.map((agent) => agent.llm), ...manager]) {
      if (llm !== undefined && !models.has(llm)) models.set(llm, counted(yield* Layer.build(llm)))
    }
    const context = yield* Effect.context<ChatModel>()
    // Without an ensemble ChatModel (every agent brings its own), there is nothing to count.
    const services = Option.isSome(Context.getOption(context, ChatModel)) ? counted(context) : context
    // Inside a durable body, the model calls it replays are counted too.
    const durability = yield* CurrentDurability
    return {
      agents: ensemble.agents,
      maxDepth: ensemble.maxDelegationDepth,
      records: [],
      services: durability === undefined ? services : Context.add(services, CurrentDurability, Budget.replayed(budget, durability)),
      models,
      verbose: ensemble.verbose,
      counters: { peerToolCalls: 0 },
      guard: ensemble.workflow === "HIERARCHICAL" ? Guard.make(ensemble.constraints) : Guard.open,
      budget
    }
  })

/**
 * @internal `Ensemble.run`: the checks, the workflow within the run's
 * budgets, then the output with its totals (or the error)
 */
export const run = (
  given: Fields,
  inputs: Readonly<Record<string, string>>
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const checked = yield* checkRun(given, inputs)
    const ensemble = checked.ensemble
    const used = new Set(ensemble.tasks.map((task) => task.agent))
    for (const agent of ensemble.agents) {
      if (!used.has(agent)) yield* Effect.logWarning(`Agent '${agent.role}' is not used by any task`)
    }
    const resolved = yield* resolveAll(ensemble.tasks, checked.inputs)
    yield* checkHandlers(ensemble.agents, yield* Effect.context<never>())
    const d = yield* prepare(ensemble)
    const runRoot = rootRunner(d, ensemble.tasks.map((task) => resolved.get(task)!), yield* CurrentTaskRunner)
    const pairs = yield* workflowOf(ensemble, resolved, d, runRoot).pipe(
      Effect.provide(d.services),
      Effect.mapError((error) => runError(error, d))
    )
    const taskOutputs = pairs.map(([, output]) => output)
    if (d.budget.exceeded !== undefined) {
      return yield* Budget.exceededError(d.budget, d.budget.exceeded, taskOutputs, d.records)
    }
    const finished = yield* Clock.currentTimeMillis
    let totalToolCalls = d.counters.peerToolCalls
    for (const output of taskOutputs) totalToolCalls += output.toolCallCount
    // The final task's output: the last in the list (for PARALLEL, outputs are in completion order).
    const last = ensemble.tasks[ensemble.tasks.length - 1]
    // HIERARCHICAL: the manager's synthesis, which comes last.
    const final = pairs.find(([task]) => task !== undefined && task === last)?.[1] ?? taskOutputs[taskOutputs.length - 1]
    const output: EnsembleOutput = {
      raw: final.raw,
      taskOutputs,
      totalDuration: Duration.millis(finished - started),
      totalToolCalls,
      delegations: d.records
    }
    yield* publish({ _tag: "EnsembleCompleted", output })
    return output
  }).pipe(
    Effect.scoped,
    Effect.tapError((error) => publish({ _tag: "EnsembleFailed", error: error._tag, message: error.message })),
    (run) => workflowSpan(run, given)
  )

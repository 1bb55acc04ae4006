/**
 * The bodies of a durable ensemble. The parent runs the ensemble's workflow
 * as `Ensemble.run` does, but work runs in child workflows:
 *
 * - each task, as `<name>/task`, keyed by the parent's execution and the
 *   task's position (SEQUENTIAL and PARALLEL);
 * - each approved delegation's worker, as `<name>/delegation`, keyed by the
 *   delegating execution and the tool call that asked for it (the
 *   HIERARCHICAL manager's `delegateTask`, an agent's peer `delegate`).
 *
 * A replayed parent joins the children it started instead of starting them
 * again, and children spread over runners. Agents' model calls and handler
 * runs — the manager's in the parent, a worker's in its child — are recorded
 * as in a durable chain. The delegation tools themselves run in the body
 * (the recorder passes them through), so the guard, the budget and the
 * delegation records they keep in memory are rebuilt by every replay; each
 * body draws its delegation ids from a `Random` seeded with its execution
 * id, so a replay draws the same ones, and each record goes where the time
 * its delegation ended puts it — a time stored with the child's result, or
 * in the body — so a replay lists them as the run it replays did (see
 * `recordOrder.ts`). A child starts from its parent's usage of the budgets
 * and constraints, and brings back its output, the delegation records it
 * made with their places and what it used (see `ensembleChildren.ts`); a
 * child that fails brings back its reason, what it used and the delegation
 * records it made, as `Ensemble.run` keeps a failing worker's.
 *
 * @internal
 */
import { Clock, type Context, Effect, Random, Schema } from "effect"
import { Activity } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import { CurrentDurability } from "../../internal/durability.ts"
import type { Ensemble } from "../../ensemble/Ensemble.ts"
import { type Delegations, delegateToolName, runAgent } from "../../ensemble/internal/delegation.ts"
import { delegateTaskToolName } from "../../ensemble/internal/hierarchical.ts"
import { prepare, run } from "../../ensemble/internal/run.ts"
import { type ResolvedTask, TaskFailure } from "../../ensemble/internal/runTask.ts"
import type { Made } from "../../ensemble/internal/taskFailure.ts"
import { CurrentTaskRunner, type TaskRunner } from "../../ensemble/internal/taskRunner.ts"
import { checkHandlers, checkRun, resolveAll } from "../../ensemble/internal/validate.ts"
import * as Role from "../../ensemble/Role.ts"
import type { TaskOutput } from "../../ensemble/TaskOutput.ts"
import { startFrom, type Usage, usageOf, used } from "../../ensemble/internal/usage.ts"
import { versionOf } from "./body.ts"
import {
  asContext,
  type Children,
  type DelegationPayload,
  type Inputs,
  settled,
  storedOutput,
  TaskFailed,
  type TaskPayload
} from "./ensembleChildren.ts"
import { type Names, names, recorder, runCount } from "./recorder.ts"

type Engine = WorkflowEngine | WorkflowInstance

/** When a delegation that did not succeed ended, as a body stores it. */
const Ended = Schema.Struct({ at: Schema.Finite, millis: Schema.Finite })

/**
 * Where the work of the execution `executionId` runs: each task and each
 * delegation in its child workflow. A delegation is keyed by its call id and
 * the n-th run of that call's handler in this body (a repaired call runs
 * again), so a replay meets the same keys. A child that dies fails its work
 * (see `settled`). When a delegation asked for in this body did not succeed
 * (blocked, refused, its worker failed), the time it ended is an activity
 * named after the tool call that asked for it (`next`), so a replay places
 * its record where the run it replays did.
 */
const runnerOf = (
  children: Children,
  executionId: string,
  inputs: typeof Inputs.Type,
  services: Context.Context<Engine>,
  next: Names | undefined
): TaskRunner => {
  const nth = runCount()
  const clock = (started: number) => Effect.map(Clock.currentTimeMillis, (now) => ({ at: now, millis: Math.max(0, now - started) }))
  return {
    run: (index, _task, context, usage) =>
      settled(
        children.task._tag,
        "task",
        children.task.execute({ parent: executionId, index, inputs, context: asContext(context), usage })
      ).pipe(Effect.provideContext(services)),
    ended: ({ callId, path, started }) =>
      next === undefined
        ? clock(started)
        : Activity.make({ name: next.ended(callId, path), success: Ended, execute: clock(started) }).pipe(Effect.provideContext(services)),
    delegate: ({ callId, context, depth, taskIndex, work }, usage) =>
      settled(children.delegation._tag, "delegation", children.delegation.execute({
        parent: executionId,
        key: `${callId}/${nth(callId)}`,
        inputs,
        role: work.agent.role,
        description: work.description,
        expectedOutput: work.expectedOutput,
        ...(taskIndex === undefined ? {} : { taskIndex }),
        context: asContext(context),
        depth,
        usage
      })).pipe(Effect.provideContext(services))
  }
}

/** The delegation tools of an ensemble, which run in the body: their work is a child workflow. */
const delegationTools = (ensemble: Ensemble<unknown>): ReadonlySet<string> =>
  new Set([
    ...(ensemble.workflow === "HIERARCHICAL" ? [delegateTaskToolName] : []),
    ...(ensemble.agents.some((agent) => agent.allowDelegation) ? [delegateToolName] : [])
  ])

/** Runs `body` with every model call and handler run recorded, and work elsewhere run by `runner` (given the body's activity names). */
const recorded = <A, E, R>(
  ensemble: Ensemble<unknown>,
  version: number,
  executionId: string,
  runner: (next: Names) => TaskRunner,
  body: Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const next = names(yield* versionOf(version))
    const tools = { transactional: new Set<string>(), passThrough: delegationTools(ensemble) }
    const durability = recorder(next, tools, Effect.succeed(false), (effect) => Effect.provideContext(effect, services))
    return yield* body.pipe(
      Effect.provideService(CurrentDurability, durability),
      Effect.provideService(CurrentTaskRunner, runner(next)),
      Random.withSeed(executionId)
    )
  })

/** @internal the parent's body: the ensemble's run, its tasks and delegations child workflows */
export const parentBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: { readonly inputs: typeof Inputs.Type }, executionId: string) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const runner = (next: Names | undefined) => runnerOf(children, executionId, payload.inputs, services, next)
    // Only a HIERARCHICAL parent calls a model (its manager's) and asks for delegations; the others keep the history they had.
    return yield* ensemble.workflow === "HIERARCHICAL"
      ? recorded(ensemble, version, executionId, runner, run(ensemble, payload.inputs))
      : Effect.provideService(run(ensemble, payload.inputs), CurrentTaskRunner, runner(undefined))
  })

/** The run's shared state and the ensemble's tasks with their templates filled, as `Ensemble.run` prepares them. */
const prepared = (ensemble: Ensemble<unknown>, inputs: typeof Inputs.Type) =>
  Effect.gen(function*() {
    const checked = yield* checkRun(ensemble, inputs)
    const resolved = yield* resolveAll(checked.ensemble.tasks, checked.inputs)
    yield* checkHandlers(checked.ensemble.agents, yield* Effect.context<never>())
    const d = yield* prepare(checked.ensemble)
    return { d, tasks: checked.ensemble.tasks.map((task) => resolved.get(task)!) }
  })

/** What a child's worker does: its task, the outputs it is given, its depth. */
type Work = { readonly task: ResolvedTask; readonly context: ReadonlyArray<TaskOutput>; readonly depth: number }

/**
 * One worker's run in a child, from the parent's `usage`: its agent with its
 * model calls and handler runs recorded, its own delegations children. Its
 * structured output is kept as its JSON encoding (what a durable ensemble gives).
 */
const worker = (
  ensemble: Ensemble<unknown>,
  version: number,
  children: Children,
  executionId: string,
  payload: { readonly inputs: typeof Inputs.Type; readonly usage: Usage },
  work: (d: Delegations, tasks: ReadonlyArray<ResolvedTask>) => Effect.Effect<Work, TaskFailed>
) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const runner = (next: Names) => runnerOf(children, executionId, payload.inputs, services, next)
    // Prepared inside: the run's shared services (`d.services`) keep the durability and the runner.
    return yield* recorded(
      ensemble,
      version,
      executionId,
      runner,
      Effect.gen(function*() {
        const { d, tasks } = yield* prepared(ensemble, payload.inputs)
        startFrom(d, payload.usage)
        const usage = () => used(payload.usage, usageOf(d))
        // The paths of its records are relative to its work's (the parent places them under it).
        const made = (): Made => ({ delegations: [...d.records], places: [...d.places], peerToolCalls: d.counters.peerToolCalls })
        return yield* Effect.gen(function*() {
          const { context, depth, task } = yield* work(d, tasks)
          const ran = yield* runAgent(d, task, context, depth, []).pipe(Effect.provide(d.services))
          const output = yield* storedOutput(ran, task.outputType)
          return { output, ...made(), usage: usage() }
        }).pipe(Effect.mapError((error) => failed(error, usage(), made())))
      })
    )
  }).pipe(Effect.scoped, Effect.mapError((error) => failed(error, undefined)))

/**
 * A child's failure, with what it used and what its agent made once it had
 * started (`made`, kept when it made delegations: `Ensemble.run` keeps the
 * records of a failing worker's delegations).
 */
const failed = (
  error: TaskFailed | TaskFailure | { readonly message: string },
  usage: Usage | undefined,
  made?: Made
): TaskFailed => {
  if (error instanceof TaskFailed) return error
  const reason = error instanceof TaskFailure ? error.reason : error.message
  return new TaskFailed({
    reason,
    ...(usage === undefined ? {} : { usage }),
    ...(made === undefined || made.delegations.length === 0 ? {} : { made })
  })
}

/** @internal a task's body: the task by its agent */
export const taskBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: typeof TaskPayload.Type, executionId: string) =>
  worker(ensemble, version, children, executionId, payload, (_d, tasks) => {
    const task = tasks[payload.index]
    return task === undefined
      ? Effect.fail(new TaskFailed({ reason: `the ensemble has no task at position ${payload.index}` }))
      : Effect.succeed({ task, context: payload.context, depth: 0 })
  })

/** @internal a delegation's body: the worker the delegator chose, on the work it was given (a numbered task keeps its settings) */
export const delegationBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: typeof DelegationPayload.Type, executionId: string) =>
  worker(ensemble, version, children, executionId, payload, (d, tasks) => {
    const agent = d.agents.find((candidate) => Role.same(candidate.role, payload.role))
    if (agent === undefined) return Effect.fail(new TaskFailed({ reason: `the ensemble has no agent with role '${payload.role}'` }))
    const planned = payload.taskIndex === undefined ? undefined : tasks[payload.taskIndex]
    if (payload.taskIndex !== undefined && planned === undefined) {
      return Effect.fail(new TaskFailed({ reason: `the ensemble has no task at position ${payload.taskIndex}` }))
    }
    const task: ResolvedTask = {
      description: payload.description,
      expectedOutput: payload.expectedOutput,
      agent,
      outputType: planned?.outputType,
      maxOutputRetries: planned?.maxOutputRetries ?? 0
    }
    return Effect.succeed({ task, context: payload.context, depth: payload.depth })
  })

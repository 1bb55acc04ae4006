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
 * delegation records they keep in memory are rebuilt by every replay. A
 * child brings back its output and the delegation records it made.
 *
 * @internal
 */
import { type Context, Effect, Schema } from "effect"
import { Workflow } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import { CurrentDurability } from "../../internal/durability.ts"
import { DelegationRecord } from "../../ensemble/Delegation.ts"
import type { Ensemble } from "../../ensemble/Ensemble.ts"
import { type Delegations, delegateToolName, runAgent } from "../../ensemble/internal/delegation.ts"
import { delegateTaskToolName } from "../../ensemble/internal/hierarchical.ts"
import { prepare, run } from "../../ensemble/internal/run.ts"
import { type ResolvedTask, TaskFailure } from "../../ensemble/internal/runTask.ts"
import { CurrentTaskRunner, type TaskRunner } from "../../ensemble/internal/taskRunner.ts"
import { checkHandlers, checkRun, resolveAll } from "../../ensemble/internal/validate.ts"
import * as Role from "../../ensemble/Role.ts"
import { TaskOutput } from "../../ensemble/TaskOutput.ts"
import { versionOf } from "./body.ts"
import { names, recorder } from "./recorder.ts"

/** @internal why a child workflow failed */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", { reason: Schema.String }) {}

const Inputs = Schema.Record(Schema.String, Schema.String)

/** @internal what a task's child workflow is given */
export const TaskPayload = Schema.Struct({
  parent: Schema.String,
  index: Schema.Int,
  inputs: Inputs,
  context: Schema.Array(TaskOutput)
})

/** @internal what a delegation's child workflow is given: the worker by role, the work as the delegator set it */
export const DelegationPayload = Schema.Struct({
  parent: Schema.String,
  key: Schema.String,
  inputs: Inputs,
  role: Schema.String,
  description: Schema.String,
  expectedOutput: Schema.String,
  taskIndex: Schema.optionalKey(Schema.Int),
  context: Schema.Array(TaskOutput),
  depth: Schema.Int
})

/** @internal what a child workflow brings back */
export const TaskResult = Schema.Struct({
  output: TaskOutput,
  delegations: Schema.Array(DelegationRecord),
  peerToolCalls: Schema.Int
})

/** @internal the child workflows of a durable ensemble named `name` */
export const childWorkflows = (name: string) => ({
  task: Workflow.make(`${name}/task`, {
    payload: TaskPayload,
    idempotencyKey: ({ index, parent }) => `${parent}/${index}`,
    success: TaskResult,
    error: TaskFailed
  }),
  delegation: Workflow.make(`${name}/delegation`, {
    payload: DelegationPayload,
    idempotencyKey: ({ key, parent }) => `${parent}/${key}`,
    success: TaskResult,
    error: TaskFailed
  })
})

type Children = ReturnType<typeof childWorkflows>
type Engine = WorkflowEngine | WorkflowInstance

const failure = (failed: TaskFailed) => new TaskFailure(failed.reason)

/**
 * Where the work of the execution `executionId` runs: each task and each
 * delegation in its child workflow. A delegation is keyed by its call id and
 * the n-th run of that call's handler in this body (a repaired call runs
 * again), so a replay meets the same keys.
 */
const runnerOf = (children: Children, executionId: string, inputs: typeof Inputs.Type, services: Context.Context<Engine>): TaskRunner => {
  const runs = new Map<string, number>()
  return {
    run: (index, _task, context) =>
      children.task.execute({ parent: executionId, index, inputs, context }).pipe(Effect.provideContext(services), Effect.mapError(failure)),
    delegate: ({ callId, context, depth, taskIndex, work }) => {
      const n = (runs.get(callId) ?? 0) + 1
      runs.set(callId, n)
      return children.delegation.execute({
        parent: executionId,
        key: `${callId}/${n}`,
        inputs,
        role: work.agent.role,
        description: work.description,
        expectedOutput: work.expectedOutput,
        ...(taskIndex === undefined ? {} : { taskIndex }),
        context,
        depth
      }).pipe(Effect.provideContext(services), Effect.mapError(failure))
    }
  }
}

/** The delegation tools of an ensemble, which run in the body: their work is a child workflow. */
const delegationTools = (ensemble: Ensemble<unknown>): ReadonlySet<string> =>
  new Set([
    ...(ensemble.workflow === "HIERARCHICAL" ? [delegateTaskToolName] : []),
    ...(ensemble.agents.some((agent) => agent.allowDelegation) ? [delegateToolName] : [])
  ])

/** Runs `body` with every model call and handler run recorded, and work elsewhere run by `runner`. */
const recorded = <A, E, R>(ensemble: Ensemble<unknown>, version: number, runner: TaskRunner, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const next = names(yield* versionOf(version))
    const tools = { transactional: new Set<string>(), passThrough: delegationTools(ensemble) }
    const durability = recorder(next, tools, Effect.succeed(false), (effect) => Effect.provideContext(effect, services))
    return yield* body.pipe(Effect.provideService(CurrentDurability, durability), Effect.provideService(CurrentTaskRunner, runner))
  })

/** @internal the parent's body: the ensemble's run, its tasks and delegations child workflows */
export const parentBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: { readonly inputs: typeof Inputs.Type }, executionId: string) =>
  Effect.gen(function*() {
    const runner = runnerOf(children, executionId, payload.inputs, yield* Effect.context<Engine>())
    // Only a HIERARCHICAL parent calls a model (its manager's); the others keep the history they had.
    return yield* ensemble.workflow === "HIERARCHICAL"
      ? recorded(ensemble, version, runner, run(ensemble, payload.inputs))
      : Effect.provideService(run(ensemble, payload.inputs), CurrentTaskRunner, runner)
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

/** One worker's run in a child: its agent with its model calls and handler runs recorded, its own delegations children. */
const worker = (
  ensemble: Ensemble<unknown>,
  version: number,
  children: Children,
  executionId: string,
  inputs: typeof Inputs.Type,
  work: (d: Delegations, tasks: ReadonlyArray<ResolvedTask>) => Effect.Effect<{ task: ResolvedTask; context: ReadonlyArray<TaskOutput>; depth: number }, TaskFailed>
) =>
  Effect.gen(function*() {
    const runner = runnerOf(children, executionId, inputs, yield* Effect.context<Engine>())
    // Prepared inside: the run's shared services (`d.services`) keep the durability and the runner.
    return yield* recorded(
      ensemble,
      version,
      runner,
      Effect.gen(function*() {
        const { d, tasks } = yield* prepared(ensemble, inputs)
        const { context, depth, task } = yield* work(d, tasks)
        const output = yield* runAgent(d, task, context, depth).pipe(Effect.provide(d.services))
        return { output, delegations: [...d.records], peerToolCalls: d.counters.peerToolCalls }
      })
    )
  }).pipe(
    Effect.scoped,
    Effect.mapError((error) =>
      error instanceof TaskFailed ? error : new TaskFailed({ reason: error instanceof TaskFailure ? error.reason : error.message }))
  )

/** @internal a task's body: the task by its agent */
export const taskBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: typeof TaskPayload.Type, executionId: string) =>
  worker(ensemble, version, children, executionId, payload.inputs, (_d, tasks) => {
    const task = tasks[payload.index]
    return task === undefined
      ? Effect.fail(new TaskFailed({ reason: `the ensemble has no task at position ${payload.index}` }))
      : Effect.succeed({ task, context: payload.context, depth: 0 })
  })

/** @internal a delegation's body: the worker the delegator chose, on the work it was given (a numbered task keeps its settings) */
export const delegationBody = (ensemble: Ensemble<unknown>, children: Children, version: number) =>
(payload: typeof DelegationPayload.Type, executionId: string) =>
  worker(ensemble, version, children, executionId, payload.inputs, (d, tasks) => {
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

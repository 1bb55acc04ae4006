/**
 * The two bodies of a durable ensemble. The parent runs the ensemble's
 * workflow (SEQUENTIAL or PARALLEL) as `Ensemble.run` does, but each task
 * is a child workflow: `<name>/task`, keyed by the parent's execution and
 * the task's position, so a replayed parent joins its children instead of
 * starting them again, and children spread over runners. A child runs its
 * task's agent with every model call and handler run recorded, as a durable
 * chain's body does, and brings back the output and its delegation records.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { Workflow } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import { CurrentDurability } from "../../internal/durability.ts"
import { DelegationRecord } from "../../ensemble/Delegation.ts"
import type { Ensemble } from "../../ensemble/Ensemble.ts"
import { runAgent } from "../../ensemble/internal/delegation.ts"
import { prepare, run } from "../../ensemble/internal/run.ts"
import { TaskFailure } from "../../ensemble/internal/runTask.ts"
import { CurrentTaskRunner, type TaskRunner } from "../../ensemble/internal/taskRunner.ts"
import { checkHandlers, checkRun, resolveAll } from "../../ensemble/internal/validate.ts"
import { TaskOutput } from "../../ensemble/TaskOutput.ts"
import { versionOf } from "./body.ts"
import { names, recorder } from "./recorder.ts"

/** @internal why a task's child workflow failed */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", { reason: Schema.String }) {}

/** @internal what a task's child workflow is given */
export const TaskPayload = Schema.Struct({
  parent: Schema.String,
  index: Schema.Int,
  inputs: Schema.Record(Schema.String, Schema.String),
  context: Schema.Array(TaskOutput)
})

/** @internal what a task's child workflow brings back */
export const TaskResult = Schema.Struct({
  output: TaskOutput,
  delegations: Schema.Array(DelegationRecord),
  peerToolCalls: Schema.Int
})

/** @internal the child workflow of a durable ensemble named `name` */
export const taskWorkflow = (name: string) =>
  Workflow.make(`${name}/task`, {
    payload: TaskPayload,
    idempotencyKey: ({ index, parent }) => `${parent}/${index}`,
    success: TaskResult,
    error: TaskFailed
  })

type TaskWorkflow = ReturnType<typeof taskWorkflow>
type Engine = WorkflowEngine | WorkflowInstance

/** @internal the parent's body: the ensemble's run, each task a child workflow */
export const parentBody = (ensemble: Ensemble<unknown>, child: TaskWorkflow) =>
(payload: { readonly inputs: Readonly<Record<string, string>> }, executionId: string) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const runner: TaskRunner = {
      run: (index, _task, context) =>
        child.execute({ parent: executionId, index, inputs: payload.inputs, context }).pipe(
          Effect.provideContext(services),
          Effect.mapError((failed) => new TaskFailure(failed.reason))
        )
    }
    return yield* Effect.provideService(run(ensemble, payload.inputs), CurrentTaskRunner, runner)
  })

/** @internal a child's body: one task by its agent, every model call and handler run recorded */
export const taskBody = (ensemble: Ensemble<unknown>, version: number) =>
(payload: typeof TaskPayload.Type) =>
  Effect.gen(function*() {
    const checked = yield* checkRun(ensemble, payload.inputs)
    const resolved = yield* resolveAll(checked.ensemble.tasks, checked.inputs)
    const task = checked.ensemble.tasks[payload.index]
    if (task === undefined) return yield* new TaskFailed({ reason: `the ensemble has no task at position ${payload.index}` })
    yield* checkHandlers(checked.ensemble.agents, yield* Effect.context<never>())
    const d = yield* prepare(checked.ensemble)
    const services = yield* Effect.context<Engine>()
    const next = names(yield* versionOf(version))
    const durability = recorder(next, new Set(), Effect.succeed(false), (effect) => Effect.provideContext(effect, services))
    const output = yield* runAgent(d, resolved.get(task)!, payload.context, 0).pipe(
      Effect.provide(d.services),
      Effect.provideService(CurrentDurability, durability)
    )
    return { output, delegations: [...d.records], peerToolCalls: d.counters.peerToolCalls }
  }).pipe(
    Effect.scoped,
    Effect.mapError((error) =>
      error instanceof TaskFailed ? error : new TaskFailed({ reason: error instanceof TaskFailure ? error.reason : error.message }))
  )

/**
 * PARALLEL: tasks as a DAG of their `context` references. A task starts once
 * every task it depends on has completed; independent tasks run at the same
 * time, at most `concurrency` at once. Outputs are listed in completion order.
 *
 * - `"fail-fast"`: after the first failure no new task starts; tasks already
 *   running finish (their outputs are kept), then the run fails with
 *   `TaskExecutionError` for the first failure.
 * - `"continue"`: the dependents of a failed task (transitively) are skipped,
 *   every other task runs, then the run fails with `ParallelExecutionError`
 *   listing the failures, the skipped tasks and every completed output.
 *
 * @internal
 */
import { Deferred, Effect, Semaphore } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import { ParallelExecutionError, TaskExecutionError } from "../EnsembleError.ts"
import type { Task } from "../Task.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import type { ResolvedTask, TaskFailure } from "./runTask.ts"

/** @internal */
export type ErrorStrategy = "fail-fast" | "continue"

type Settled =
  | { readonly _tag: "Done"; readonly output: TaskOutput }
  | { readonly _tag: "Failed" }
  | { readonly _tag: "Skipped" }

/** @internal */
export const parallel = (
  tasks: ReadonlyArray<Task>,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  options: { readonly concurrency: number | "unbounded"; readonly onError: ErrorStrategy },
  runTask: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<ReadonlyArray<readonly [Task, TaskOutput]>, TaskExecutionError | ParallelExecutionError, ChatModel> =>
  Effect.gen(function*() {
    const permits = options.concurrency === "unbounded" ? tasks.length : options.concurrency
    const semaphore = yield* Semaphore.make(Math.max(1, permits))
    const settled = new Map<Task, Deferred.Deferred<Settled>>()
    for (const task of tasks) settled.set(task, yield* Deferred.make<Settled>())
    const completed: Array<readonly [Task, TaskOutput]> = []
    const failures: Array<{ readonly taskDescription: string; readonly agentRole: string; readonly reason: string }> = []
    const skipped: Array<string> = []
    let stopped = false

    const runOne = (task: Task) =>
      Effect.gen(function*() {
        const current = resolved.get(task)!
        const dependencies: Array<TaskOutput> = []
        let blocked = false
        for (const dependency of task.context) {
          const result = yield* Deferred.await(settled.get(dependency)!)
          if (result._tag === "Done") dependencies.push(result.output)
          else blocked = true
        }
        if (blocked || stopped) {
          skipped.push(current.description)
          return { _tag: "Skipped" } as Settled
        }
        return yield* semaphore.withPermits(1)(
          Effect.suspend(() => {
            if (stopped) {
              skipped.push(current.description)
              return Effect.succeed<Settled>({ _tag: "Skipped" })
            }
            return Effect.match(runTask(current, dependencies), {
              onFailure: (failure): Settled => {
                failures.push({ taskDescription: current.description, agentRole: current.agent.role, reason: failure.reason })
                if (options.onError === "fail-fast") stopped = true
                return { _tag: "Failed" }
              },
              onSuccess: (output): Settled => {
                completed.push([task, output])
                return { _tag: "Done", output }
              }
            })
          })
        )
      }).pipe(Effect.flatMap((result) => Deferred.succeed(settled.get(task)!, result)))

    yield* Effect.forEach(tasks, runOne, { concurrency: "unbounded", discard: true })

    if (failures.length === 0) return completed
    if (options.onError === "fail-fast") {
      const first = failures[0]
      return yield* new TaskExecutionError({ ...first, completedOutputs: completed.map(([, output]) => output) })
    }
    return yield* new ParallelExecutionError({ failures, skipped, completedOutputs: completed.map(([, output]) => output) })
  })

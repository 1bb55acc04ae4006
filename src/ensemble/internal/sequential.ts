/**
 * SEQUENTIAL: tasks in list order; a failure stops the run and carries the
 * outputs completed before it.
 *
 * @internal
 */
import { Effect } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import { TaskExecutionError } from "../EnsembleError.ts"
import type { Task } from "../Task.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import type { ResolvedTask, TaskFailure } from "./runTask.ts"

const noContext: ReadonlyArray<TaskOutput> = []

/** @internal what follows the tasks: the run's end after the failure of one, or after the last with every output */
export interface Then<A, E> {
  readonly onFailure: (error: TaskExecutionError) => Effect.Effect<A, E, ChatModel>
  readonly onSuccess: (done: ReadonlyArray<readonly [Task, TaskOutput]>) => Effect.Effect<A, E, ChatModel>
}

/**
 * @internal the tasks in order, then `then` (what follows is run from the
 * last task's end, not as a step of its own). The run's state (the outputs
 * so far) is made when this is called, not when the effect runs: call it as
 * the run starts, once per run (as `run.ts` does, from inside the run's effect)
 */
export const sequential = <A, E>(
  tasks: ReadonlyArray<Task>,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  runTask: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>,
  then: Then<A, E>
): Effect.Effect<A, E, ChatModel> => {
  const done: Array<readonly [Task, TaskOutput]> = []
  // A dependency's output: the checks put every context task earlier in the list.
  const outputOf = (dependency: Task): TaskOutput => done.find(([task]) => task === dependency)![1]
  // The task at `index`, with the outputs of the tasks it depends on; then the next.
  const from = (index: number): Effect.Effect<A, E, ChatModel> => {
    if (index === tasks.length) return then.onSuccess(done)
    const task = tasks[index]
    const current = resolved.get(task)!
    const context = task.context.length === 0 ? noContext : task.context.map(outputOf)
    return Effect.matchEffect(runTask(current, context), {
      onFailure: (failure) =>
        then.onFailure(
          new TaskExecutionError({
            taskDescription: current.description,
            agentRole: current.agent.role,
            reason: failure.reason,
            completedOutputs: done.map(([, output]) => output)
          })
        ),
      onSuccess: (output) => {
        done.push([task, output])
        return from(index + 1)
      }
    })
  }
  return from(0)
}

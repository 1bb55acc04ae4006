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

/** @internal */
export const sequential = (
  tasks: ReadonlyArray<Task>,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  runTask: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<ReadonlyArray<readonly [Task, TaskOutput]>, TaskExecutionError, ChatModel> =>
  Effect.suspend(() => {
    const outputs = new Map<Task, TaskOutput>()
    const done: Array<readonly [Task, TaskOutput]> = []
    // The task at `index`, with the outputs of the tasks it depends on; then the next.
    const from = (index: number): Effect.Effect<ReadonlyArray<readonly [Task, TaskOutput]>, TaskExecutionError, ChatModel> => {
      if (index === tasks.length) return Effect.succeed(done)
      const task = tasks[index]
      const current = resolved.get(task)!
      const context = task.context.map((dependency) => outputs.get(dependency)!)
      return Effect.matchEffect(runTask(current, context), {
        onFailure: (failure) =>
          Effect.fail(
            new TaskExecutionError({
              taskDescription: current.description,
              agentRole: current.agent.role,
              reason: failure.reason,
              completedOutputs: done.map(([, output]) => output)
            })
          ),
        onSuccess: (output) => {
          outputs.set(task, output)
          done.push([task, output])
          return from(index + 1)
        }
      })
    }
    return from(0)
  })

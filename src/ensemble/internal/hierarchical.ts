/**
 * HIERARCHICAL: a manager agent (built for the run) delegates the tasks to
 * the workers through a `delegateTask` tool, then writes the final answer.
 * The run's guard (its constraints, see `guard.ts`) runs on every delegation,
 * the manager's here and the workers' peer delegations in `delegation.ts`; a
 * blocked attempt is returned to the delegating agent as the tool's result.
 * Required workers are checked once the manager is done.
 *
 * @internal
 */
import { Clock, DateTime, Effect, type Layer, Order, Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import type { ChatModel } from "../../ChatModel.ts"
import type * as Agent from "../Agent.ts"
import { ConstraintViolationError, TaskExecutionError } from "../EnsembleError.ts"
import * as Role from "../Role.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { availableRoles, DelegateParameters, type Delegations, logged, runDelegated } from "./delegation.ts"
import { type Attempt, recordFailure, request, uuid } from "./delegationRecords.ts"
import { type Asker, asker, comparePaths, nextPath } from "./recordOrder.ts"
import { type ResolvedTask, runTask } from "./runTask.ts"

/** @internal one of the ensemble's tasks, with the positions of its context tasks */
export interface PlannedTask {
  readonly resolved: ResolvedTask
  readonly context: ReadonlyArray<number>
}

/** @internal the manager's settings */
export interface ManagerOptions {
  readonly llm: Layer.Layer<ChatModel> | undefined
  readonly maxIterations: number
}

const DelegateTaskParameters = Schema.Struct({
  ...DelegateParameters.fields,
  taskNumber: Schema.optionalKey(
    Schema.Number.annotate({
      description: "The number of the task in your list, so the worker gets its expected output, format and context"
    })
  )
})

/** @internal the name of the manager's delegation tool */
export const delegateTaskToolName = "delegateTask"

const DelegateTask = Tool.make(delegateTaskToolName, {
  description: "Delegate a task to a worker agent. Give the worker's role, a clear description of the task, and " +
    "the task's number from your list. Use it for each task a team member should do.",
  parameters: DelegateTaskParameters,
  success: Schema.String,
  failure: Schema.String
})
const managerToolkit = Toolkit.make(DelegateTask)

/** @internal the reserved role of the manager */
export const managerRole = "Manager"

const managerAgent = (workers: ReadonlyArray<Agent.Any>, options: ManagerOptions): Agent.Any => ({
  _tag: "Agent",
  role: managerRole,
  goal: "Coordinate the worker agents to complete every task, then combine their results into one final answer",
  background: "Your team:\n" +
    workers.map((worker, index) =>
      `${index + 1}. ${worker.role}\n   Goal: ${worker.goal}${
        worker.background.trim().length > 0 ? `\n   Background: ${worker.background}` : ""
      }`
    ).join("\n") +
    "\n\nUse the delegateTask tool to give work to your team, review what they return, and write the final answer.",
  toolkit: managerToolkit,
  llm: options.llm,
  allowDelegation: false,
  verbose: false,
  maxIterations: options.maxIterations,
  responseFormat: ""
})

const managerTask = (tasks: ReadonlyArray<PlannedTask>, manager: Agent.Any): ResolvedTask => ({
  description: "Coordinate your team to complete these tasks:\n\n" +
    tasks.map(({ resolved: task }, index) =>
      `Task ${index + 1} (suggested: ${task.agent.role}): ${task.description}\nExpected output: ${task.expectedOutput}`
    ).join("\n\n") +
    "\n\nDelegate each task to the most suitable team member with delegateTask, passing its number as taskNumber. " +
    "When all are done, combine the results into a final answer.",
  expectedOutput: "A final answer combining the outputs of all delegated tasks",
  agent: manager,
  outputType: undefined,
  maxOutputRetries: 0
})

/** A worker's output, and the path of the delegation that asked for it (see `recordOrder.ts`). */
interface WorkerOutput {
  readonly output: TaskOutput
  readonly path: ReadonlyArray<number>
}

/** What the manager's delegations have produced so far. */
interface Progress {
  /** Every worker output, in the order they arrived. */
  readonly workerOutputs: Array<WorkerOutput>
  /** The latest output (by completion) of each task of the list, by position. */
  readonly taskOutputs: Map<number, TaskOutput>
  /** The manager, who asks for the delegations. */
  readonly manager: Asker
}

/** @internal */
export const hierarchical = (
  d: Delegations,
  tasks: ReadonlyArray<PlannedTask>,
  options: ManagerOptions
): Effect.Effect<ReadonlyArray<TaskOutput>, TaskExecutionError | ConstraintViolationError, ChatModel> =>
  Effect.gen(function*() {
    const progress: Progress = { workerOutputs: [], taskOutputs: new Map(), manager: asker([]) }
    const workerOutputs = progress.workerOutputs
    const manager = managerAgent(d.agents, options)
    const layer = managerToolkit.toLayer({ delegateTask: delegateTask(d, tasks, progress) })
    const coordinate = managerTask(tasks, manager)
    const managerOutput = yield* logged(d, coordinate, runTask(coordinate, [], managerToolkit, d.models)).pipe(
      Effect.provide(layer),
      Effect.mapError((failure) =>
        new TaskExecutionError({
          taskDescription: "Hierarchical workflow manager",
          agentRole: managerRole,
          reason: `Hierarchical workflow manager failed: ${failure.reason}`,
          completedOutputs: inCompletionOrder(workerOutputs)
        })
      )
    )
    const outputs = [...inCompletionOrder(workerOutputs), managerOutput]
    const violations = d.guard.missing().map((role) => `Required worker '${role}' was not delegated to during this run.`)
    if (violations.length > 0) return yield* new ConstraintViolationError({ violations, completedOutputs: outputs })
    return outputs
  })

/**
 * The handler of the manager's `delegateTask` tool: checks the request and
 * the run's guard (a blocked attempt is recorded and returned to the manager
 * as the tool's result), then runs the worker on the task and records its
 * output in `progress`.
 */
const delegateTask = (d: Delegations, tasks: ReadonlyArray<PlannedTask>, progress: Progress) => {
  const isTaskNumber = (n: number | undefined): n is number =>
    n !== undefined && Number.isInteger(n) && n >= 1 && n <= tasks.length
  return (params: typeof DelegateTaskParameters.Type, call: { readonly toolCallId?: string | undefined }): Effect.Effect<string, string> =>
    Effect.gen(function*() {
      // First, before anything can yield: delegations asked for at once are counted in call order.
      const path = nextPath(progress.manager)
      const started = yield* Clock.currentTimeMillis
      const number = params.taskNumber
      // A numbered task keeps its own settings: expected output, outputType and retries, and the
      // outputs of its context tasks that are done. The request shows what the worker is held to.
      const planned = isTaskNumber(number) ? tasks[number - 1] : undefined
      const base = {
        kind: "manager" as const,
        delegatingRole: managerRole,
        depth: 0,
        request: request(yield* uuid, params.agentRole, params.taskDescription, planned?.resolved)
      }
      const attempt: Attempt = { base, path, started, callId: call.toolCallId }
      const blocked = (reason: string) => Effect.as(recordFailure(d, attempt, params.agentRole, reason), reason)
      if (params.agentRole.trim().length === 0) return yield* blocked("Error: agentRole must not be blank.")
      if (params.taskDescription.trim().length === 0) return yield* blocked("Error: taskDescription must not be blank.")
      const worker = d.agents.find((agent) => Role.same(agent.role, params.agentRole))
      if (worker === undefined) {
        return yield* blocked(`No agent found with role '${params.agentRole}'. Available roles: ${availableRoles(d)}`)
      }
      if (number !== undefined && planned === undefined) {
        return yield* blocked(`Error: taskNumber must be a task number from 1 to ${tasks.length}, got: ${number}`)
      }
      const rejected = d.guard.refuse(worker)
      if (rejected !== undefined) return yield* blocked(`Delegation rejected: ${rejected}`)
      d.guard.approve(worker)
      const job = {
        callId: call.toolCallId,
        work: workerTask(params.taskDescription, worker, planned),
        taskIndex: planned === undefined || number === undefined ? undefined : number - 1,
        context: contextOf(planned, progress),
        depth: 1
      }
      return yield* runDelegated(d, attempt, job, `Worker '${worker.role}' failed`, (output) => {
        d.guard.complete(worker)
        progress.workerOutputs.push({ output, path })
        const latest = number === undefined ? undefined : progress.taskOutputs.get(number - 1)
        if (number !== undefined && (latest === undefined || !DateTime.isLessThan(output.completedAt, latest.completedAt))) {
          progress.taskOutputs.set(number - 1, output)
        }
      })
    })
}

/**
 * Worker outputs by when they completed, ties in the order their
 * delegations were asked for — as the delegation records are listed (see
 * `recordOrder.ts`): the order the delegations ended, also when a durable
 * run replays them, where children that ended long ago arrive in whatever
 * order.
 */
const byCompletion: Order.Order<WorkerOutput> = Order.combine(
  Order.mapInput(DateTime.Order, (worker: WorkerOutput) => worker.output.completedAt),
  (a: WorkerOutput, b: WorkerOutput) => Math.sign(comparePaths(a.path, b.path)) as -1 | 0 | 1
)
const inCompletionOrder = (outputs: ReadonlyArray<WorkerOutput>): ReadonlyArray<TaskOutput> =>
  [...outputs].sort(byCompletion).map((worker) => worker.output)

/** What a worker is given: a numbered task keeps its settings, an unnumbered one is ad hoc. */
const workerTask = (description: string, worker: Agent.Any, planned: PlannedTask | undefined): ResolvedTask =>
  planned === undefined
    ? {
      description,
      expectedOutput: "Complete the assigned task thoroughly",
      agent: worker,
      outputType: undefined,
      maxOutputRetries: 0
    }
    : { ...planned.resolved, description, agent: worker }

/** The outputs of a numbered task's context tasks that are done (none for an ad hoc task). */
const contextOf = (planned: PlannedTask | undefined, progress: Progress): ReadonlyArray<TaskOutput> =>
  planned === undefined ? [] : planned.context.flatMap((at) => {
    const output = progress.taskOutputs.get(at)
    return output === undefined ? [] : [output]
  })

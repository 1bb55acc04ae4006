/**
 * Delegation at run time: the peer `delegate` tool of agents with
 * `allowDelegation`, its guards, and the run of approved work (here, or as
 * a durable ensemble's child workflow). The records every attempt leaves
 * are made in `delegationRecords.ts`.
 *
 * Every delegation made inside a run passes the run's guard (in a
 * HIERARCHICAL run, its constraints; see `guard.ts`), and every approved one
 * is taken from the run's delegation budget (see `budget.ts`).
 *
 * @internal
 */
import { Clock, type Context, Duration, Effect, Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import type { ChatModel } from "../../ChatModel.ts"
import type * as Agent from "../Agent.ts"
import type { DelegationRecord } from "../Delegation.ts"
import { Sink } from "../EnsembleEvent.ts"
import { OmitContent } from "../../Privacy.ts"
import { forLog } from "../../internal/redact.ts"
import * as Role from "../Role.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { type Budget, refusal, takeDelegation } from "./budget.ts"
import type { Guard } from "./guard.ts"
import { type Attempt, recordFailure, recordSuccess, request, started_, uuid } from "./delegationRecords.ts"
import { type Asker, asker, nextPath, type Place } from "./recordOrder.ts"
import { type ModelCache, type ResolvedTask, TaskFailure, runTask } from "./runTask.ts"
import { CurrentTaskRunner, type DelegatedWork, remotely } from "./taskRunner.ts"

/** @internal what one run's delegations share */
export interface Delegations {
  readonly agents: ReadonlyArray<Agent.Any>
  readonly maxDepth: number
  /** The run's delegation records, in order (see `recordOrder.ts`). */
  readonly records: Array<DelegationRecord>
  /** Where each record goes, by position. */
  readonly places: Array<Place>
  /** The run's services (the ensemble's model, tool handlers), for workers. */
  readonly services: Context.Context<ChatModel>
  /** The agents' own models, built once for the run. */
  readonly models: ModelCache
  /** Log each task's start, end and failure at INFO level. */
  readonly verbose: boolean
  /** Tool calls made by agents reached through peer delegation (not in the run's task outputs). */
  readonly counters: { peerToolCalls: number }
  /** The run's constraints on every delegation (HIERARCHICAL), or none. */
  readonly guard: Guard
  /** The run's budgets of model calls and delegations. */
  readonly budget: Budget
}

/**
 * @internal logs a task's start, end and failure when the ensemble is verbose
 * (credentials redacted; with `Privacy.OmitContent`, the task's text and the failure's reason left out)
 */
export const logged = <R>(
  d: Delegations,
  task: ResolvedTask,
  run: Effect.Effect<TaskOutput, TaskFailure, R>
): Effect.Effect<TaskOutput, TaskFailure, R> =>
  !d.verbose ? run : Effect.flatMap(OmitContent, (omit: boolean) => {
    const what = forLog(task.description, omit)
    return Effect.logInfo(`Task started: '${what}' (agent '${task.agent.role}')`).pipe(
      Effect.andThen(run),
      Effect.tap((output) =>
        Effect.logInfo(
          `Task completed: '${what}' in ${Duration.format(output.duration)}, ${output.toolCallCount} tool call(s)`
        )
      ),
      Effect.tapError((failure) => Effect.logInfo(`Task failed: '${what}': ${forLog(failure.reason, omit)}`))
    )
  })

/** @internal the arguments of both delegation tools */
export const DelegateParameters = Schema.Struct({
  agentRole: Schema.String.annotate({ description: "The role of the agent to hand the work to" }),
  taskDescription: Schema.String.annotate({ description: "A clear, self-contained description of the work" })
})

/** @internal the name of the peer delegation tool */
export const delegateToolName = "delegate"

const Delegate = Tool.make(delegateToolName, {
  description: "Hand a subtask to another agent of the team and get its answer. Give the agent's role and a clear, " +
    "self-contained description of the subtask.",
  parameters: DelegateParameters,
  success: Schema.String,
  failure: Schema.String
})
const peerToolkit = Toolkit.make(Delegate)

/** @internal the roles of the ensemble, as listed in messages */
export const availableRoles = (d: Delegations): string => `[${d.agents.map((agent) => agent.role).join(", ")}]`

/**
 * Runs a task by its agent at `depth`; an agent with `allowDelegation` gets
 * the `delegate` tool. `path` places the records of the delegations it asks
 * for (see `recordOrder.ts`): a root task's position, or the path of the
 * delegation it works on.
 *
 * @internal
 */
export const runAgent = (
  d: Delegations,
  task: ResolvedTask,
  context: ReadonlyArray<TaskOutput>,
  depth: number,
  path: ReadonlyArray<number>
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  if (!task.agent.allowDelegation) return logged(d, task, runTask(task, context, task.agent.toolkit, d.models))
  const caller = task.agent
  const from = asker(path)
  const layer = peerToolkit.toLayer({ delegate: (params, { toolCallId }) => peerDelegate(d, caller, depth, from, params, toolCallId) })
  return logged(
    d,
    task,
    runTask(task, context, Toolkit.merge(caller.toolkit, peerToolkit), d.models).pipe(Effect.provide(layer))
  )
}

const peerDelegate = (
  d: Delegations,
  caller: Agent.Any,
  depth: number,
  from: Asker,
  params: typeof DelegateParameters.Type,
  callId: string | undefined
): Effect.Effect<string, string> =>
  Effect.gen(function*() {
    // First, before anything can yield: delegations asked for at once are counted in call order.
    const path = nextPath(from)
    const started = yield* Clock.currentTimeMillis
    const base = {
      kind: "peer" as const,
      delegatingRole: caller.role,
      depth,
      request: request(yield* uuid, params.agentRole, params.taskDescription)
    }
    const attempt: Attempt = { base, path, started, callId }
    const blocked = (reason: string) => Effect.as(recordFailure(d, attempt, params.agentRole, reason), reason)
    if (params.agentRole.trim().length === 0) {
      return yield* blocked("Error: agentRole must not be blank. Give the role of the agent to delegate to.")
    }
    if (params.taskDescription.trim().length === 0) {
      return yield* blocked("Error: taskDescription must not be blank. Describe the subtask to delegate.")
    }
    if (depth >= d.maxDepth) {
      return yield* blocked(
        `Delegation depth limit reached (max: ${d.maxDepth}, current: ${depth}). Complete this task yourself without further delegation.`
      )
    }
    if (Role.same(params.agentRole, caller.role)) {
      return yield* blocked(`Cannot delegate to yourself (role: '${caller.role}'). Choose a different agent.`)
    }
    const worker = d.agents.find((agent) => Role.same(agent.role, params.agentRole))
    if (worker === undefined) {
      return yield* blocked(`Agent not found with role '${params.agentRole}'. Available roles: ${availableRoles(d)}`)
    }
    const rejected = d.guard.refuse(worker)
    if (rejected !== undefined) return yield* blocked(`Delegation rejected: ${rejected}`)
    d.guard.approve(worker)
    const work: ResolvedTask = {
      description: params.taskDescription,
      expectedOutput: "Complete the assigned subtask thoroughly",
      agent: worker,
      outputType: undefined,
      maxOutputRetries: 0
    }
    const job = { callId, work, taskIndex: undefined, context: [], depth: depth + 1 }
    return yield* runDelegated(d, attempt, job, `Agent '${worker.role}' failed`, (output) => {
      d.counters.peerToolCalls += output.toolCallCount
    })
  })

/** @internal approved delegated work, and the tool call that asked for it (absent from a caller outside the loop) */
export interface Job extends Omit<DelegatedWork, "callId"> {
  readonly callId: string | undefined
}

/**
 * Runs approved delegated work: takes it from the run's delegation budget
 * (used up: a FAILURE record, and the caller's tool call fails), announces
 * it, runs the worker with the run's services (its own model, or the
 * ensemble's — never the caller's), records the outcome, and gives the
 * caller the worker's text or `failurePrefix: reason`.
 *
 * @internal
 */
export const runDelegated = (
  d: Delegations,
  attempt: Attempt,
  job: Job,
  failurePrefix: string,
  onSuccess: (output: TaskOutput) => void
): Effect.Effect<string, string> =>
  Effect.suspend(() => {
    if (takeDelegation(d.budget)) return runApproved(d, attempt, job, failurePrefix, onSuccess)
    const reason = `Delegation refused: ${refusal(d.budget)}`
    return Effect.flatMap(recordFailure(d, attempt, job.work.agent.role, reason), () => Effect.fail(reason))
  })

/**
 * The worker's run: here, or where the run's `TaskRunner` puts it (a durable
 * ensemble's child workflow, keyed by the tool call), its records merged.
 */
const runWorker = (d: Delegations, job: Job, path: ReadonlyArray<number>): Effect.Effect<TaskOutput, TaskFailure, ChatModel> =>
  Effect.flatMap(Effect.service(CurrentTaskRunner), (runner) => {
    if (runner === undefined) return runAgent(d, job.work, job.context, job.depth, path)
    const callId = job.callId
    if (callId === undefined) return Effect.fail(new TaskFailure("a durable delegation needs the id of the tool call that asked for it"))
    return remotely(d, path, (usage) => runner.delegate({ ...job, callId }, usage))
  })

const runApproved = (
  d: Delegations,
  attempt: Attempt,
  job: Job,
  failurePrefix: string,
  onSuccess: (output: TaskOutput) => void
): Effect.Effect<string, string> =>
  Effect.withFiber((fiber) =>
    started_(attempt.base, job.work.agent.role).pipe(
      Effect.andThen(runWorker(d, job, attempt.path)),
      // The run's services, but the caller's sink: a watched task's queue (agentEvents.ts), not the run's.
      Effect.provideService(Sink, fiber.getRef(Sink)),
      Effect.provide(d.services)
    )
  ).pipe(
    Effect.matchEffect({
      onFailure: (failure) =>
        Effect.flatMap(
          recordFailure(d, attempt, job.work.agent.role, failure.reason, false),
          () => Effect.fail(`${failurePrefix}: ${failure.reason}`)
        ),
      onSuccess: (output) =>
        Effect.suspend(() => {
          onSuccess(output)
          return Effect.as(recordSuccess(d, attempt, output), output.raw)
        })
    })
  )

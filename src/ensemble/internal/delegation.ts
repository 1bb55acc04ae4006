/**
 * Delegation at run time: the peer `delegate` tool of agents with
 * `allowDelegation`, its guards, and the records every attempt leaves.
 *
 * Every delegation made inside a run passes the run's guard (in a
 * HIERARCHICAL run, its constraints; see `guard.ts`), and every approved one
 * is taken from the run's delegation budget (see `budget.ts`).
 *
 * @internal
 */
import { Clock, type Context, Duration, Effect, Random, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { ChatModel } from "../../ChatModel.ts"
import type * as Agent from "../Agent.ts"
import type { DelegationRecord, DelegationRequest } from "../Delegation.ts"
import { publish } from "../EnsembleEvent.ts"
import { OmitContent } from "../../Privacy.ts"
import { forLog } from "../../internal/redact.ts"
import * as Role from "../Role.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { type Budget, refusal, takeDelegation } from "./budget.ts"
import type { Guard } from "./guard.ts"
import { jsonSchemaOf, type ModelCache, type ResolvedTask, type TaskFailure, runTask } from "./runTask.ts"

/** @internal what one run's delegations share */
export interface Delegations {
  readonly agents: ReadonlyArray<Agent.Any>
  readonly maxDepth: number
  readonly records: Array<DelegationRecord>
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

const hex = (n: number) => n.toString(16).padStart(2, "0")

/** @internal a UUID v4 drawn from Effect's `Random` (so tests can seed it) */
export const uuid: Effect.Effect<string> = Effect.gen(function*() {
  const bytes: Array<number> = []
  for (let i = 0; i < 16; i++) bytes.push(yield* Random.nextIntBetween(0, 256, { halfOpen: true }))
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const h = bytes.map(hex).join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
})

/**
 * A request with the specification's defaults; for work held to an
 * `outputType`, its JSON Schema and the retries the worker gets.
 *
 * @internal
 */
export const request = (
  taskId: string,
  agentRole: string,
  taskDescription: string,
  work?: Pick<ResolvedTask, "outputType" | "maxOutputRetries">
): DelegationRequest => ({
  taskId,
  agentRole,
  taskDescription,
  scope: {},
  priority: "NORMAL",
  ...(work?.outputType === undefined
    ? { maxOutputRetries: 0 }
    : { expectedOutputSchema: JSON.stringify(jsonSchemaOf(work.outputType)), maxOutputRetries: work.maxOutputRetries }),
  metadata: {}
})

/** @internal records a blocked (`rejected`) or failed attempt, and publishes it */
export const recordFailure = (
  d: Delegations,
  base: Omit<DelegationRecord, "response">,
  workerRole: string,
  error: string,
  started: number,
  rejected = true
) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    d.records.push({
      ...base,
      response: {
        taskId: base.request.taskId,
        status: "FAILURE",
        workerRole,
        rawOutput: null,
        artifacts: {},
        errors: [error],
        metadata: {},
        duration: Duration.millis(now - started)
      }
    })
    const ids = { taskId: base.request.taskId, delegatingRole: base.delegatingRole }
    return publish(
      rejected
        ? { _tag: "DelegationRejected", ...ids, agentRole: base.request.agentRole, reason: error }
        : { _tag: "DelegationFailed", ...ids, workerRole, reason: error }
    )
  })

/** @internal publishes the start of an approved delegation */
export const started_ = (base: Omit<DelegationRecord, "response">, workerRole: string) =>
  publish({
    _tag: "DelegationStarted",
    taskId: base.request.taskId,
    delegatingRole: base.delegatingRole,
    workerRole,
    taskDescription: base.request.taskDescription,
    depth: base.depth
  })

/** @internal records a successful attempt, and publishes it */
export const recordSuccess = (
  d: Delegations,
  base: Omit<DelegationRecord, "response">,
  output: TaskOutput
): Effect.Effect<void> => {
  d.records.push({
    ...base,
    response: {
      taskId: base.request.taskId,
      status: "SUCCESS",
      workerRole: output.agentRole,
      rawOutput: output.raw,
      ...(Object.hasOwn(output, "parsedOutput") ? { parsedOutput: output.parsedOutput } : {}),
      artifacts: {},
      errors: [],
      metadata: {},
      duration: output.duration
    }
  })
  return publish({
    _tag: "DelegationCompleted",
    taskId: base.request.taskId,
    delegatingRole: base.delegatingRole,
    workerRole: output.agentRole,
    durationMillis: Duration.toMillis(output.duration)
  })
}

/** @internal the roles of the ensemble, as listed in messages */
export const availableRoles = (d: Delegations): string => `[${d.agents.map((agent) => agent.role).join(", ")}]`

/**
 * Runs a task by its agent at `depth`; an agent with `allowDelegation` gets
 * the `delegate` tool.
 *
 * @internal
 */
export const runAgent = (
  d: Delegations,
  task: ResolvedTask,
  context: ReadonlyArray<TaskOutput>,
  depth: number
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  if (!task.agent.allowDelegation) return logged(d, task, runTask(task, context, task.agent.toolkit, d.models))
  const caller = task.agent
  const layer = peerToolkit.toLayer({ delegate: (params) => peerDelegate(d, caller, depth, params) })
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
  params: typeof DelegateParameters.Type
): Effect.Effect<string, string> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const base = {
      kind: "peer" as const,
      delegatingRole: caller.role,
      depth,
      request: request(yield* uuid, params.agentRole, params.taskDescription)
    }
    const blocked = (reason: string) => Effect.as(recordFailure(d, base, params.agentRole, reason, startedAt), reason)
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
    return yield* runDelegated(d, base, work, [], depth + 1, startedAt, `Agent '${worker.role}' failed`, (output) => {
      d.counters.peerToolCalls += output.toolCallCount
    })
  })

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
  base: Omit<DelegationRecord, "response">,
  work: ResolvedTask,
  context: ReadonlyArray<TaskOutput>,
  depth: number,
  startedAt: number,
  failurePrefix: string,
  onSuccess: (output: TaskOutput) => void
): Effect.Effect<string, string> =>
  Effect.suspend(() => {
    if (takeDelegation(d.budget)) return runApproved(d, base, work, context, depth, startedAt, failurePrefix, onSuccess)
    const reason = `Delegation refused: ${refusal(d.budget)}`
    return Effect.flatMap(recordFailure(d, base, work.agent.role, reason, startedAt), () => Effect.fail(reason))
  })

const runApproved = (
  d: Delegations,
  base: Omit<DelegationRecord, "response">,
  work: ResolvedTask,
  context: ReadonlyArray<TaskOutput>,
  depth: number,
  startedAt: number,
  failurePrefix: string,
  onSuccess: (output: TaskOutput) => void
): Effect.Effect<string, string> =>
  started_(base, work.agent.role).pipe(
    Effect.andThen(runAgent(d, work, context, depth)),
    Effect.provide(d.services),
    Effect.matchEffect({
      onFailure: (failure) =>
        Effect.flatMap(
          recordFailure(d, base, work.agent.role, failure.reason, startedAt, false),
          () => Effect.fail(`${failurePrefix}: ${failure.reason}`)
        ),
      onSuccess: (output) =>
        Effect.suspend(() => {
          onSuccess(output)
          return Effect.as(recordSuccess(d, base, output), output.raw)
        })
    })
  )

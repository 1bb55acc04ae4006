/**
 * The records every delegation attempt leaves (approved, blocked, failed or
 * done) and the events that announce them: the request with the
 * specification's defaults, its id drawn from Effect's `Random`, and the
 * response once the attempt ends, put at its place in the run's records
 * (see `recordOrder.ts`).
 *
 * @internal
 */
import { Clock, DateTime, Duration, Effect, Random } from "effect"
import { redactSecrets } from "../../internal/redact.ts"
import type { DelegationRecord, DelegationRequest } from "../Delegation.ts"
import { publish } from "../EnsembleEvent.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { place, type Placed } from "./recordOrder.ts"
import type { ResolvedTask } from "./runTask.ts"
import { jsonSchemaOf } from "./structured.ts"
import { CurrentTaskRunner, type Ended } from "./taskRunner.ts"

/**
 * @internal one delegation attempt: its record without the response, the
 * path of calls that asked for it, when it started, and the id of the tool
 * call that asked for it (what a durable body names its stored end after)
 */
export interface Attempt {
  readonly base: Omit<DelegationRecord, "response">
  readonly path: ReadonlyArray<number>
  readonly started: number
  readonly callId: string | undefined
}

/**
 * When an attempt that did not succeed ended, and how long it took: by the
 * clock, or as the run's `TaskRunner` keeps it (a durable ensemble's body
 * stores it, so a replay puts the record where the run it replays did).
 */
const ended = (attempt: Attempt): Effect.Effect<Ended> =>
  Effect.flatMap(Effect.service(CurrentTaskRunner), (runner) =>
    runner === undefined
      ? Effect.map(Clock.currentTimeMillis, (now) => ({ at: now, millis: now - attempt.started }))
      : runner.ended(attempt))

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
  d: Placed,
  attempt: Attempt,
  workerRole: string,
  error: string,
  rejected = true
) =>
  Effect.flatMap(ended(attempt), ({ at, millis }) => {
    const base = attempt.base
    // Written by the library, and it may quote what the model asked for (an unknown role).
    const reason = redactSecrets(error)
    place(d, {
      ...base,
      response: {
        taskId: base.request.taskId,
        status: "FAILURE",
        workerRole,
        rawOutput: null,
        artifacts: {},
        errors: [reason],
        metadata: {},
        duration: Duration.millis(millis)
      }
    }, { at, path: attempt.path })
    const ids = { taskId: base.request.taskId, delegatingRole: base.delegatingRole }
    return publish(
      rejected
        ? { _tag: "DelegationRejected", ...ids, agentRole: base.request.agentRole, reason }
        : { _tag: "DelegationFailed", ...ids, workerRole, reason }
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

/** @internal records a successful attempt, at its place when the worker's output completed, and publishes it */
export const recordSuccess = (
  d: Placed,
  attempt: Attempt,
  output: TaskOutput
): Effect.Effect<void> => {
  const base = attempt.base
  place(d, {
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
  }, { at: DateTime.toEpochMillis(output.completedAt), path: attempt.path })
  return publish({
    _tag: "DelegationCompleted",
    taskId: base.request.taskId,
    delegatingRole: base.delegatingRole,
    workerRole: output.agentRole,
    durationMillis: Duration.toMillis(output.duration)
  })
}

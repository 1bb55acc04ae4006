/**
 * The durability of one workflow body: each model call an activity named
 * `v<version>/model/<n>` (the n-th call of the body), each run of a tool's
 * handler an activity named `v<version>/tool/<callId>/<n>` (the n-th run of
 * that call in the body: a repaired call runs again). The names follow the
 * body's own deterministic order, so a replay meets the same names and gets
 * the recorded results instead of calling the model or the tool again.
 *
 * A model call's activity first reads whether the run was asked to stop
 * (`DurableChain.stop`); if so it records that instead of calling the model,
 * and the step pauses with `StopRequested`: a replay meets the same record.
 *
 * A call of a `passThrough` tool runs in the body, not as an activity: its
 * handler makes durable steps of its own (a durable ensemble's delegation
 * starts a child workflow), so the body replays the handler — and with it
 * what the handler keeps in memory, such as the delegation records. Such
 * a handler that dies (its child died, or the engine failed starting it or
 * reading its result) ends the body rather than the call: fed to the model
 * as the tool's failure, it would be answered in a recorded turn that a
 * replay, finding the child's result, could contradict.
 *
 * A call of a `transactional` tool runs in one SQL transaction with its
 * record (effect's `ClusterSchema.WithTransaction`): the handler's writes to
 * the same database commit with the record or not at all.
 *
 * A model failure is recorded without credentials: its description and cause
 * go through the same redaction as every message the library writes.
 *
 * @internal
 */
import { Cause, Effect, Option, Schema } from "effect"
import { ClusterSchema } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { Activity } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import type { ChatModelError } from "../../ChatModel.ts"
import { ModelCallFailed, ScriptExhausted } from "../../LoopError.ts"
import { CurrentDurability, type Durability } from "../../internal/durability.ts"
import { CurrentTaskRunner } from "../../ensemble/internal/taskRunner.ts"
import { redactSecrets } from "../../internal/redact.ts"
import { StoredOutcome } from "../../internal/tools/handlerOutcome.ts"
import { Turn } from "../../internal/turn.ts"
import { describe } from "../../internal/describe.ts"
import { readable } from "./unreadable.ts"

const ModelError = Schema.Union([ModelCallFailed, ScriptExhausted])

/**
 * What a model call's activity records: the turn, or `null` when the run was
 * asked to stop instead. Made once: a schema made per call would be compiled
 * again for every step.
 */
const ModelStep = Schema.NullOr(Turn)

/** A model failure as it may be stored: redacted, its cause reduced to a redacted message. */
const storable = (error: ChatModelError): ChatModelError => {
  if (error._tag !== "ModelCallFailed") return error
  const props: ConstructorParameters<typeof ModelCallFailed>[0] = {
    description: redactSecrets(error.description),
    cause: error.cause === undefined ? undefined : redactSecrets(describe(error.cause)),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMillis === undefined ? {} : { retryAfterMillis: error.retryAfterMillis }),
    ...(error.retryable === undefined ? {} : { retryable: error.retryable })
  }
  return new ModelCallFailed(props)
}

/** @internal the activity names a body uses, in its order */
export interface Names {
  readonly model: () => string
  readonly tool: (callId: string) => string
  /**
   * A call's next wait of `kind`: its number among the call's waits of that
   * kind (`n`: a call retried with new arguments waits for approval again;
   * an external tool that needs approval waits for approval, then for its
   * result), and the name of the step that posts it, from its number among
   * all the call's waits: `wait/<callId>` for the first, `wait-<k>/<callId>`
   * from the second on (a prefix no first wait has, whatever the call id).
   */
  readonly wait: (callId: string, kind: "approval" | "result") => Wait
  /**
   * When the delegation a durable ensemble's tool call `callId` asked for
   * ended, if it did not succeed: named after the call and its n-th such
   * end (a repaired call asks again), like the call's own steps; after its
   * `path` (see `recordOrder.ts`) only for a call without an id.
   */
  readonly ended: (callId: string | undefined, path: ReadonlyArray<number>) => string
}

/** @internal a call's next wait, as `Names.wait` gives it */
export interface Wait {
  /** Its number among the call's waits of its kind (1 for the first). */
  readonly n: number
  /** The name of the step that posts it. */
  readonly name: string
  /** The name of the step that checks the answers of the waits posted with it first (see waiting.ts). */
  readonly checked: string
}

/**
 * @internal a fresh count of the runs of each call in one run of a body:
 * `1` for a call's first run, `2` when it runs again (a repaired call)
 */
export const runCount = (): (callId: string) => number => {
  const runs = new Map<string, number>()
  return (callId) => {
    const n = (runs.get(callId) ?? 0) + 1
    runs.set(callId, n)
    return n
  }
}

/** @internal fresh names for one run of a body */
export const names = (version: number): Names => {
  let models = 0
  const nth = runCount()
  const nthEnded = runCount()
  const nthWait = runCount()
  const nthOfKind = runCount()
  return {
    model: () => `v${version}/model/${++models}`,
    tool: (callId) => `v${version}/tool/${callId}/${nth(callId)}`,
    wait: (callId, kind) => {
      const k = nthWait(callId)
      const suffix = k === 1 ? `/${callId}` : `-${k}/${callId}`
      return { n: nthOfKind(`${kind}:${callId}`), name: `v${version}/wait${suffix}`, checked: `v${version}/answered${suffix}` }
    },
    ended: (callId, path) =>
      callId === undefined
        ? `v${version}/delegation/path/${path.join(".")}/ended`
        : `v${version}/delegation/${callId}/${nthEnded(callId)}/ended`
  }
}

/**
 * `effect` with no durability of its own: it runs inside one recorded step.
 * Nor does it see the body's task runner: an `Ensemble.run` inside a tool
 * handler runs its tasks here, as a plain run, not as children of the body.
 */
const unrecorded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provideService(CurrentDurability, undefined), Effect.provideService(CurrentTaskRunner, undefined))

/** The engine's services an activity needs, captured from the body. */
type EngineServices = WorkflowEngine | WorkflowInstance

/**
 * The durability of a body: every model call and handler run through an
 * activity with the next name. `provide` gives an activity the body's engine
 * services (the hook's signature knows none).
 *
 * @internal
 */
export const recorder = (
  next: Names,
  tools: { readonly transactional: ReadonlySet<string>; readonly passThrough: ReadonlySet<string> },
  stopRequested: Effect.Effect<boolean>,
  provide: <A, E>(effect: Effect.Effect<A, E, EngineServices>) => Effect.Effect<A, E>
): Durability => ({
  modelCall: (call) =>
    Effect.map(
      readable(provide(Activity.make({
        name: next.model(),
        success: ModelStep,
        error: ModelError,
        execute: Effect.flatMap(stopRequested, (stop) => stop ? Effect.succeed(null) : Effect.mapError(unrecorded(call), storable))
      }))),
      (turn) => turn ?? undefined
    ),
  toolCall: (call, run) => {
    if (tools.passThrough.has(call.name)) return run
    // Work inside the handler (a nested chain, a sub-agent) is part of this step, not steps of its own:
    // recorded separately, it would shift the body's names and replay the wrong results.
    const activity = Activity.make({ name: next.tool(call.id), success: StoredOutcome, execute: unrecorded(run) })
    return readable(provide(tools.transactional.has(call.name) ? activity.annotate(ClusterSchema.WithTransaction, true) : activity))
  },
  // A transactional tool's handler in a savepoint of its record's transaction (effect/sql nests it):
  // undone when the handler fails, dies or times out, whose failure the record then commits alone.
  handler: (call, handler) =>
    tools.transactional.has(call.name)
      ? Effect.flatMap(Effect.serviceOption(SqlClient), (sql) => Option.isSome(sql) ? sql.value.withTransaction(handler) : handler)
      : handler,
  // A pass-through tool died (a delegation whose child died, or whose engine failed starting it or
  // reading its result): not the call's answer, which a replay could find different, but the body's.
  fatal: (call, cause) => tools.passThrough.has(call.name) && !Cause.hasInterruptsOnly(cause) && Cause.hasDies(cause)
})

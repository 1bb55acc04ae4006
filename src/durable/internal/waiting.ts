/**
 * A durable run waiting on calls (approvals, external results): every call
 * is posted to the `WaitingCalls` store first — each once, by an activity
 * that then reads whether the run was asked to stop — so a human sees and
 * can answer all of them at once; then each answer is awaited as the durable
 * deferred named after its call (`approval/<callId>`, `result/<callId>`).
 * A stop asked before the posting is read by it; one asked after finds the
 * calls posted and answers them with `Stopped`.
 *
 * @internal
 */
import { Effect, Schedule, Schema } from "effect"
import { Activity, DurableDeferred } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import * as Approval from "../../Approval.ts"
import * as ExternalTool from "../../ExternalTool.ts"
import type { ToolCall } from "../../ToolCall.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import type { Names } from "./recorder.ts"

/** @internal what a waiting call is answered with when the run is asked to stop */
export const Stopped = Schema.Struct({ loopworkStop: Schema.Literal(true) })

/** @internal */
export type Stopped = typeof Stopped.Type

/** @internal */
export const stopMarker: Stopped = { loopworkStop: true }

const isStopped = (answer: object): answer is Stopped => "loopworkStop" in answer

/** @internal the deferred a call waiting for a decision is answered through */
export const approvalOf = (callId: string) =>
  DurableDeferred.make(`approval/${callId}`, { success: Schema.Union([Stopped, Approval.Decision]) })

/** @internal the deferred a call waiting for an external result is answered through */
export const resultOf = (callId: string) =>
  DurableDeferred.make(`result/${callId}`, { success: Schema.Union([Stopped, ExternalTool.Supplied]) })

type Engine = WorkflowEngine | WorkflowInstance

/** A store that fails now and then (a locked file, a dropped connection) is asked again before the step gives up. */
const retried = Schedule.max([Schedule.exponential("20 millis"), Schedule.recurs(5)])

/**
 * @internal whether the run was asked to stop; a store that cannot say is
 * taken as "no" (the next model call asks again)
 */
export const stopAsked = (key: string): Effect.Effect<boolean, never, WaitingCalls> =>
  Effect.flatMap(Effect.service(WaitingCalls), (store) =>
    store.stopRequested(key).pipe(
      Effect.retry(retried),
      Effect.catch((error) => Effect.as(Effect.logWarning(`loopwork: could not read whether run ${key} was asked to stop: ${error.message}`), false))
    ))

const post = (next: Names, key: string, call: ToolCall, kind: "approval" | "result") =>
  Activity.make({
    name: next.wait(call.id),
    success: Schema.Boolean,
    execute: Effect.flatMap(Effect.service(WaitingCalls), (store) =>
      Effect.andThen(
        Effect.orDie(Effect.retry(store.post(key, { callId: call.id, kind, tool: call.name, params: call.params }), retried)),
        stopAsked(key)
      ))
  })

/**
 * @internal the answers to `calls` by call id, or `undefined` when the run
 * was asked to stop while it waited
 */
export const answersTo = <A extends object>(
  next: Names,
  key: string,
  calls: ReadonlyArray<ToolCall>,
  kind: "approval" | "result",
  deferredOf: (callId: string) => DurableDeferred.DurableDeferred<Schema.Codec<A | Stopped, unknown>>
): Effect.Effect<ReadonlyMap<string, A> | undefined, never, Engine | WaitingCalls> =>
  Effect.gen(function*() {
    let stopped = false
    for (const call of calls) stopped = (yield* post(next, key, call, kind)) || stopped
    if (stopped) return undefined
    const answers = new Map<string, A>()
    for (const call of calls) {
      const answer = yield* DurableDeferred.await(deferredOf(call.id))
      if (isStopped(answer)) return undefined
      answers.set(call.id, answer)
    }
    return answers
  })

/**
 * A durable run waiting on calls (approvals, external results): every call
 * is posted to the `WaitingCalls` store first — each once, by an activity
 * that then reads whether the run was asked to stop — so a human sees and
 * can answer all of them at once; then each answer is awaited as the durable
 * deferred named after its call (`approval/<callId>`, `result/<callId>`).
 * A call that waits again (retried with new arguments, or an external tool
 * once approved) is posted again as its next wait, and answered through a
 * deferred of that wait (its n-th of that kind: `approval-<n>/<callId>`
 * from the second on): an answer given for one wait never answers another.
 * Once all are answered, a step (`answered/<callId>`, after the first call)
 * checks that the calls are the ones posted and shown. A stop asked before
 * the posting is read by it; one asked after finds the calls posted and
 * answers them with `Stopped`.
 *
 * @internal
 */
import { Effect, Schedule, Schema } from "effect"
import { Activity, DurableDeferred } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import * as Approval from "../../Approval.ts"
import * as ExternalTool from "../../ExternalTool.ts"
import type { ToolCall } from "../../ToolCall.ts"
import { canonical } from "../../internal/canonicalJson.ts"
import * as JsonBounds from "../../internal/jsonBounds.ts"
import { type WaitingCall, WaitingCalls } from "../WaitingCalls.ts"
import type { Names } from "./recorder.ts"
import { readable } from "./unreadable.ts"
import { waitOf } from "./waitNumber.ts"

/** @internal what a waiting call is answered with when the run is asked to stop */
export const Stopped = Schema.Struct({ loopworkStop: Schema.Literal(true) })

/** @internal */
export type Stopped = typeof Stopped.Type

/** @internal */
export const stopMarker: Stopped = { loopworkStop: true }

const isStopped = (answer: object): answer is Stopped => "loopworkStop" in answer

/** `kind/<callId>` for a call's first wait, `kind-<n>/<callId>` for its n-th (a prefix no first wait has). */
const deferredName = (kind: "approval" | "result", callId: string, wait: number) =>
  wait === 1 ? `${kind}/${callId}` : `${kind}-${wait}/${callId}`

/** @internal the deferred the `wait`-th wait (1 for the first) of a call waiting for a decision is answered through */
export const approvalOf = (callId: string, wait: number) =>
  DurableDeferred.make(deferredName("approval", callId, wait), { success: Schema.Union([Stopped, Approval.Decision]) })

/** @internal the deferred the `wait`-th wait (1 for the first) of a call waiting for an external result is answered through */
export const resultOf = (callId: string, wait: number) =>
  DurableDeferred.make(deferredName("result", callId, wait), { success: Schema.Union([Stopped, ExternalTool.Supplied]) })

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

const post = (name: string, key: string, call: ToolCall, kind: "approval" | "result", wait: number) =>
  Activity.make({
    name,
    success: Schema.Boolean,
    execute: Effect.flatMap(Effect.service(WaitingCalls), (store) => {
      const posted = { callId: call.id, kind, tool: call.name, params: call.params }
      return Effect.andThen(
        Effect.orDie(Effect.retry(store.post(key, wait === 1 ? posted : { ...posted, wait }), retried)),
        stopAsked(key)
      )
    })
  })

/**
 * The check of the answers to the calls posted together, once they are all
 * in, as a step: the calls are the ones posted, and each answer is the one
 * recorded for its wait (an answer that reached the run some other way
 * than `decide`, `supply` or `stop` — through the engine directly — is not
 * a human's recorded decision). What it found is recorded, so a replay
 * neither reads the store again nor depends on it (rows a later wait
 * replaced, a store that fails for a moment).
 */
const check = (
  name: string,
  key: string,
  kind: "approval" | "result",
  calls: ReadonlyArray<ToolCall>,
  waits: ReadonlyMap<string, number>,
  answers: ReadonlyMap<string, unknown>
) =>
  Activity.make({
    name,
    success: Schema.NullOr(Schema.String),
    execute: Effect.flatMap(Effect.service(WaitingCalls), (store) =>
      Effect.gen(function*() {
        const posted = yield* Effect.orDie(Effect.retry(store.posted(key), retried))
        const unlike = unlikePosted(calls, waits, posted)
        if (unlike !== undefined) return unlike
        for (const row of posted) {
          const answer = answers.get(row.callId)
          if (answer === undefined || row.kind !== kind || waitOf(row) !== waits.get(row.callId)) continue
          const recorded = yield* Effect.orDie(Effect.retry(store.answerOf(key, row.callId), retried))
          if (!sameJson(recorded, answer)) return `the answer the run received for call '${row.callId}' is not the one recorded for it`
        }
        return null
      }))
  })

/**
 * Whether `recorded` (JSON text from the store, as whichever version wrote it: key
 * order and spacing may differ) is the JSON value `answer`.
 */
const sameJson = (recorded: string | null | undefined, answer: unknown): boolean => {
  if (typeof recorded !== "string") return false
  try {
    return canonical(JSON.parse(recorded)) === canonical(answer)
  } catch {
    return false
  }
}

/** @internal what a wait on calls ended with */
export type Answered<A> =
  | { readonly _tag: "Answered"; readonly answers: ReadonlyMap<string, A> }
  | { readonly _tag: "Stopped" }
  /** The calls waited on are not the calls posted: `why`. */
  | { readonly _tag: "Corrupt"; readonly why: string }

/**
 * Why the calls a run waited on are not the calls it posted (`undefined`
 * when they are): a call whose posted wait shows another tool or other
 * arguments (what a human was shown is what the answer is for). A row a
 * later wait of the call replaced is that wait's, and says nothing of this
 * one.
 */
const unlikePosted = (
  calls: ReadonlyArray<ToolCall>,
  waits: ReadonlyMap<string, number>,
  posted: ReadonlyArray<WaitingCall>
): string | undefined => {
  const rows = new Map(posted.map((row) => [row.callId, row]))
  for (const call of calls) {
    const row = rows.get(call.id)
    if (row === undefined) return `the call '${call.id}' the run waits on was never posted`
    if (waitOf(row) !== waits.get(call.id)) continue
    // Bounded before they are compared: a row edited to hold arguments nested past the limit is not what was posted.
    if (JsonBounds.check(row.params, JsonBounds.storedLimits) !== undefined || JsonBounds.check(call.params, JsonBounds.storedLimits) !== undefined) {
      return `the call '${call.id}' the run waits on, or its posted row, holds arguments past the stored limits`
    }
    if (row.tool !== call.name || canonical(row.params) !== canonical(call.params)) {
      return `the call '${call.id}' the run waits on is not the call it posted and a human was shown`
    }
  }
  return undefined
}

/**
 * @internal the answers to `calls` by call id; `Stopped` when the run was
 * asked to stop while it waited; `Corrupt` when two calls have one id, or
 * the calls are not the ones posted (see `unlikePosted`)
 */
export const answersTo = <A extends object>(
  next: Names,
  key: string,
  calls: ReadonlyArray<ToolCall>,
  kind: "approval" | "result",
  deferredOf: (callId: string, wait: number) => DurableDeferred.DurableDeferred<Schema.Codec<A | Stopped, unknown>>
): Effect.Effect<Answered<A>, never, Engine | WaitingCalls> =>
  Effect.gen(function*() {
    // Arrival gives each call of a chain its own id: two with one id come from an edited record.
    if (new Set(calls.map((call) => call.id)).size !== calls.length) return { _tag: "Corrupt", why: "the run waits on two calls with one id" }
    let stopped = false
    let checked = ""
    const waits = new Map<string, number>()
    for (const call of calls) {
      const wait = next.wait(call.id, kind)
      waits.set(call.id, wait.n)
      if (checked === "") checked = wait.checked
      stopped = (yield* readable(post(wait.name, key, call, kind, wait.n))) || stopped
    }
    if (stopped) return { _tag: "Stopped" }
    const answers = new Map<string, A>()
    for (const call of calls) {
      const answer = yield* readable(DurableDeferred.await(deferredOf(call.id, waits.get(call.id) ?? 1)))
      if (isStopped(answer)) return { _tag: "Stopped" }
      answers.set(call.id, answer)
    }
    // Checked once the answers are in, so a change while the run waited shows; recorded, so a replay
    // reads nothing.
    const why = yield* readable(check(checked, key, kind, calls, waits, answers))
    return why === null ? { _tag: "Answered", answers } : { _tag: "Corrupt", why }
  })

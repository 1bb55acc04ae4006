/**
 * Answering calls a durable execution waits on, from outside it: the
 * answers are checked against what waits (the `WaitingCalls` store) and
 * against the tools before anything is written; the calls are then claimed
 * together, all or none (the first answer wins), and their durable deferreds
 * completed, which wakes the execution.
 *
 * @internal
 */
import { Effect, Exit, Schema } from "effect"
import type { DurableDeferred, Workflow } from "effect/workflow"
import { WorkflowEngine } from "effect/workflow"
import { isCallId, maxIdLength } from "../../internal/arrival.ts"
import { canonical } from "../../internal/canonicalJson.ts"
import { thrownMessage } from "../../internal/errorText.ts"
import * as JsonBounds from "../../internal/jsonBounds.ts"
import { checkParamsFor, encodeResultFor } from "../../internal/round.ts"
import { CallNotAwaiting, InvalidInput, InvalidResumeValue } from "../../LoopError.ts"
import { AlreadyAnswered, type AnswerError, NotDelivered, WaitChanged } from "../DurableError.ts"
import { type WaitingCall, WaitingCalls } from "../WaitingCalls.ts"
import { waitOf } from "./waitNumber.ts"
import { configOf, notDurable } from "./config.ts"
import { checkedKey } from "./executionKey.ts"
import type { Stopped } from "./waiting.ts"

/** @internal how one kind of answer is checked and delivered */
export interface Answers<A> {
  readonly kind: "approval" | "result"
  readonly field: string
  readonly schema: Schema.Codec<A, unknown>
  readonly deferred: (callId: string, wait: number) => DurableDeferred.DurableDeferred<Schema.Codec<A | Stopped, unknown>>
  /** What of the answer the tool's schemas must accept: edited arguments or a supplied result. */
  readonly edit: (answer: A) => { readonly params: unknown } | { readonly result: unknown } | undefined
}

/** At most this many answers in one call: more is not a human's decision. */
const maxAnswers = 1_000


/** A call id and its answer, decoded from a plain copy of what the caller gave. */
type Entry<A> = readonly [id: string, answer: A]

/**
 * The answers, each copied (its JSON text parsed back) and decoded from the
 * copy: what is checked, stored and handed to the run is that copy, so a
 * getter or a later change of the caller's object cannot change the answer
 * after it was checked. Input that cannot be read (a getter that throws, a
 * Proxy listing a key twice) is `InvalidInput`.
 */
const entriesOf = <A>(input: unknown, answers: Answers<A>): Effect.Effect<ReadonlyArray<Entry<A>>, InvalidInput> => {
  const invalid = (rule: string): Effect.Effect<never, InvalidInput> => Effect.fail(new InvalidInput({ field: answers.field, rule, value: input }))
  const copies: Array<readonly [string, unknown]> = []
  try {
    // Inside: Array.isArray throws on a revoked Proxy.
    if (typeof input !== "object" || input === null || Array.isArray(input)) return invalid("must be a record of call ids to answers")
    // A Map or a class instance has no entries of its own to read: refused, not taken for no answers.
    const proto: unknown = Object.getPrototypeOf(input)
    if (proto !== Object.prototype && proto !== null) return invalid("must be a plain record of call ids to answers, not a Map or a class instance")
    const entries = Object.entries(input)
    if (entries.length > maxAnswers) return invalid(`must answer at most ${maxAnswers} calls at once`)
    for (const [id, value] of entries) {
      // Call ids are as Arrival keeps them (a store would change other characters); an answer must be
      // storable before it is compared or written.
      if (!isCallId(id)) return invalid(`call ids are 1 to ${maxIdLength} printable ASCII characters`)
      const problem = JsonBounds.check(value, JsonBounds.storedLimits)
      if (problem !== undefined) return invalid(`the answer for '${id}' cannot be stored: ${JsonBounds.describe(problem)}`)
      copies.push([id, JSON.parse(canonical(value))])
    }
  } catch (error) {
    return invalid(`must be readable: reading it threw (${thrownMessage(error)})`)
  }
  const decode = Schema.decodeUnknownEffect(answers.schema)
  return Effect.forEach(copies, ([id, value]) =>
    Effect.mapError(
      Effect.map(decode(value, { onExcessProperty: "error" }), (decoded): Entry<A> => [id, decoded]),
      (error) => new InvalidInput({ field: answers.field, rule: `the answer for '${id}' is invalid (${error.message})`, value })
    ))
}

/**
 * The waits the answers are for (`options.waits`: a call id to a wait's
 * number, from `pending`); a call left out is answered for its first wait.
 */
const waitsOf = (options: unknown, field: string, answered: ReadonlySet<string>): Effect.Effect<ReadonlyMap<string, number>, InvalidInput> => {
  const invalid = (rule: string, value: unknown) => Effect.fail(new InvalidInput({ field, rule, value }))
  if (options === undefined) return Effect.succeed(noWaits)
  let waits: unknown
  let entries: ReadonlyArray<readonly [string, unknown]>
  try {
    // Inside: Array.isArray throws on a revoked Proxy.
    if (typeof options !== "object" || options === null || Array.isArray(options)) return invalid("options must be an object", options)
    waits = Object.hasOwn(options, "waits") ? (options as { readonly waits: unknown }).waits : undefined
    if (waits === undefined) return Effect.succeed(noWaits)
    if (typeof waits !== "object" || waits === null || Array.isArray(waits)) {
      return invalid("options.waits must be a record of call ids to wait numbers (the `wait` pending shows)", waits)
    }
    entries = Object.entries(waits)
  } catch (error) {
    return invalid(`options must be readable: reading them threw (${thrownMessage(error)})`, options)
  }
  if (entries.length > maxAnswers) return invalid(`options.waits must name at most ${maxAnswers} calls`, waits)
  for (const [id, n] of entries) {
    if (!isCallId(id) || typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
      return invalid(`options.waits must map call ids to wait numbers of 1 or more (the \`wait\` pending shows)`, waits)
    }
    if (!answered.has(id)) return invalid(`options.waits names '${id}', which these answers do not answer`, waits)
  }
  return Effect.succeed(new Map(entries as ReadonlyArray<readonly [string, number]>))
}

const noWaits: ReadonlyMap<string, number> = new Map()

/** What {@link answerable} checks the answers against. */
interface Against {
  readonly store: WaitingCalls["Service"]
  readonly key: string
  readonly executionId: string
  readonly kind: WaitingCall["kind"]
  /** The calls that wait for this kind of answer. */
  readonly waiting: ReadonlyArray<WaitingCall>
  /** The wait each answer is for. */
  readonly waitFor: (callId: string) => number
}

/**
 * Refuses answers that cannot be taken: for a wait the call is not at
 * (`WaitChanged`), for a call that does not wait for this kind of answer
 * (`CallNotAwaiting`), or different from the answer a wait already has
 * (`AlreadyAnswered`; the same answer to the same wait again is harmless).
 */
const answerable = <A>(against: Against, entries: ReadonlyArray<readonly [string, A]>) =>
  Effect.gen(function*() {
    const { executionId, store, waitFor } = against
    const byId = new Map(against.waiting.map((call) => [call.callId, call]))
    const unknown: Array<string> = []
    let posted: ReadonlyMap<string, WaitingCall> | undefined
    for (const [id, value] of entries) {
      // Waiting, or answered already (read once, and only then).
      const row = byId.get(id) ?? (posted ??= new Map((yield* against.store.posted(against.key)).map((call) => [call.callId, call]))).get(id)
      const given = row === undefined || row.kind !== against.kind ? undefined : byId.has(id) ? null : yield* store.answerOf(against.key, id)
      if (row === undefined || given === undefined) unknown.push(id)
      else if (waitOf(row) !== waitFor(id)) return yield* new WaitChanged({ executionId, callId: id, given: waitFor(id), current: waitOf(row) })
      else if (typeof given === "string" && given !== canonical(value)) return yield* new AlreadyAnswered({ executionId, callId: id })
    }
    if (unknown.length > 0) {
      return yield* new CallNotAwaiting({ ids: unknown, awaiting: against.kind, waiting: against.waiting.map((call) => call.callId) })
    }
  })

/** @internal */
export const answer = <A>(
  workflow: Workflow.Any,
  executionId: string,
  input: unknown,
  options: unknown,
  answers: Answers<A>
): Effect.Effect<void, AnswerError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  Effect.gen(function*() {
    const config = configOf(workflow)
    if (config === undefined) return yield* notDurable(workflow)
    const key = yield* checkedKey(workflow, executionId)
    const entries = yield* entriesOf(input, answers)
    const waits = yield* waitsOf(options, answers.field, new Set(entries.map(([id]) => id)))
    // The wait each answer is for: named, or the first. Never the call's latest by default: an answer
    // that names none may be a retry of one given before the call waited again, on other arguments.
    const waitFor = (id: string) => waits.get(id) ?? 1
    const store = yield* Effect.service(WaitingCalls)
    const waiting = (yield* store.list(key)).filter((call) => call.kind === answers.kind)
    const byId = new Map(waiting.map((call) => [call.callId, call]))
    yield* answerable({ store, key, executionId, kind: answers.kind, waiting, waitFor }, entries)
    for (const [id, value] of entries) {
      const tool = byId.get(id)?.tool
      if (tool === undefined) continue
      const checked = answers.edit(value)
      if (checked === undefined) continue
      const what = "params" in checked ? "arguments" : "result"
      yield* Effect.mapError(
        "params" in checked ? checkParamsFor(config.toolkit, tool, checked.params) : encodeResultFor(config.toolkit, tool, checked.result),
        (issue) => new InvalidResumeValue({ what, callId: id, tool, issue })
      )
    }
    // All or none: a decision on several calls is never split with another one made at the same moment.
    const refused = yield* store.claimAll(key, answers.kind, entries.map(([id, value]) => ({ callId: id, answer: canonical(value), wait: waitFor(id) })))
    if (refused?.claim === "taken") return yield* taken(store, key, executionId, refused.callId, waitFor(refused.callId), answers.kind)
    if (refused !== undefined) return yield* new CallNotAwaiting({ ids: [refused.callId], awaiting: answers.kind, waiting: [] })
    const engine = yield* Effect.service(WorkflowEngine.WorkflowEngine)
    const wake = Effect.forEach(entries, ([id, value]) => {
      const deferred = answers.deferred(id, waitFor(id))
      return engine.deferredDone(deferred, { workflowName: workflow._tag, executionId, deferredName: deferred.name, exit: Exit.succeed(value) })
    }, { discard: true })
    // The engine dies when its store fails: the answers are recorded all the same, and sent again they wake the run.
    yield* Effect.catchDefect(wake, (defect) =>
      Effect.fail(new NotDelivered({ executionId, callIds: entries.map(([id]) => id), why: thrownMessage(defect) })))
  })

/**
 * Why a claim of wait `wait` of `kind` was taken: another answer to it, or
 * the call has moved past it (to another number, or to a wait of another
 * kind: it no longer waits for this kind of answer).
 */
const taken = (store: WaitingCalls["Service"], key: string, executionId: string, callId: string, wait: number, kind: WaitingCall["kind"]) =>
  Effect.flatMap(store.posted(key), (calls): Effect.Effect<never, AlreadyAnswered | WaitChanged | CallNotAwaiting> => {
    const current = calls.find((call) => call.callId === callId)
    if (current !== undefined && current.kind !== kind) return Effect.fail(new CallNotAwaiting({ ids: [callId], awaiting: kind, waiting: [] }))
    return current !== undefined && waitOf(current) !== wait
      ? Effect.fail(new WaitChanged({ executionId, callId, given: wait, current: waitOf(current) }))
      : Effect.fail(new AlreadyAnswered({ executionId, callId }))
  })

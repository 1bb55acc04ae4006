/**
 * Answering calls a durable execution waits on, from outside it: the
 * answers are checked against what waits (the `WaitingCalls` store) and
 * against the tools before anything is written; each call is then claimed
 * (the first answer wins) and its durable deferred completed, which wakes
 * the execution.
 *
 * @internal
 */
import { Effect, Exit, Schema } from "effect"
import type { DurableDeferred, Workflow } from "effect/workflow"
import { WorkflowEngine } from "effect/workflow"
import { isCallId, maxIdLength } from "../../internal/arrival.ts"
import { canonical } from "../../internal/canonicalJson.ts"
import { describe } from "../../internal/describe.ts"
import * as JsonBounds from "../../internal/jsonBounds.ts"
import { checkParamsFor, encodeResultFor } from "../../internal/round.ts"
import { CallNotAwaiting, InvalidInput, InvalidResumeValue } from "../../LoopError.ts"
import { AlreadyAnswered, type AnswerError, NotDurableChain } from "../DurableError.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import { waitOf } from "./waitNumber.ts"
import { configOf } from "./config.ts"
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


const entriesOf = <A>(input: unknown, answers: Answers<A>): Effect.Effect<ReadonlyArray<readonly [string, A]>, InvalidInput> => {
  const invalid = (rule: string): Effect.Effect<never, InvalidInput> => Effect.fail(new InvalidInput({ field: answers.field, rule, value: input }))
  if (typeof input !== "object" || input === null || Array.isArray(input)) return invalid("must be a record of call ids to answers")
  const entries = Object.entries(input)
  if (entries.length > maxAnswers) return invalid(`must answer at most ${maxAnswers} calls at once`)
  const decode = Schema.decodeUnknownEffect(answers.schema)
  return Effect.forEach(entries, ([id, value]) => {
    // Call ids are as Arrival keeps them (a store would change other characters); an answer must be
    // storable before it is compared or written.
    if (!isCallId(id)) return invalid(`call ids are 1 to ${maxIdLength} printable ASCII characters`)
    const problem = JsonBounds.check(value, JsonBounds.storedLimits)
    if (problem !== undefined) return invalid(`the answer for '${id}' cannot be stored: ${JsonBounds.describe(problem)}`)
    return Effect.mapError(
      Effect.map(decode(value), (decoded) => [id, decoded] as const),
      (error) => new InvalidInput({ field: answers.field, rule: `the answer for '${id}' is invalid (${error.message})`, value })
    )
  })
}

/** The latest wait of a call `executionKey` posted (1 if it was posted once, or not at all). */
const latestWait = (store: WaitingCalls["Service"], executionKey: string, callId: string) =>
  Effect.map(store.posted(executionKey), (calls) => {
    const call = calls.find((posted) => posted.callId === callId)
    return call === undefined ? 1 : waitOf(call)
  })

/** @internal */
export const answer = <A>(
  workflow: Workflow.Any,
  executionId: string,
  input: unknown,
  answers: Answers<A>
): Effect.Effect<void, AnswerError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  Effect.gen(function*() {
    const config = configOf(workflow)
    if (config === undefined) return yield* new NotDurableChain({ workflow: describe(workflow?._tag) })
    const key = yield* checkedKey(workflow, executionId)
    const entries = yield* entriesOf(input, answers)
    const store = yield* Effect.service(WaitingCalls)
    const waiting = (yield* store.list(key)).filter((call) => call.kind === answers.kind)
    const byId = new Map(waiting.map((call) => [call.callId, call]))
    const unknown: Array<string> = []
    for (const [id, value] of entries) {
      if (byId.has(id)) continue
      // Answered already: the same answer again is harmless, another one is refused.
      const given = yield* store.answerOf(key, id)
      if (typeof given !== "string") unknown.push(id)
      else if (given !== canonical(value)) return yield* new AlreadyAnswered({ executionId, callId: id })
    }
    if (unknown.length > 0) {
      return yield* new CallNotAwaiting({ ids: unknown, awaiting: answers.kind, waiting: waiting.map((call) => call.callId) })
    }
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
    const engine = yield* Effect.service(WorkflowEngine.WorkflowEngine)
    for (const [id, value] of entries) {
      const call = byId.get(id)
      // Answered already (the same answer again): its wait is the latest, whose answer it is.
      const wait = call === undefined ? yield* latestWait(store, key, id) : waitOf(call)
      const claim = yield* store.claim(key, id, canonical(value), wait)
      if (claim === "taken") return yield* new AlreadyAnswered({ executionId, callId: id })
      if (claim === "unknown") return yield* new CallNotAwaiting({ ids: [id], awaiting: answers.kind, waiting: [] })
      const deferred = answers.deferred(id, wait)
      yield* engine.deferredDone(deferred, {
        workflowName: workflow._tag,
        executionId,
        deferredName: deferred.name,
        exit: Exit.succeed(value)
      })
    }
  })

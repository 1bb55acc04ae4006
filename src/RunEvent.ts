/**
 * What happens during a run, as it happens: the run started, a model call
 * started, text arrived, the call finished (usage, finish reason), a tool call
 * started and finished (result or failure, duration), the run paused,
 * finished or failed.
 *
 * Events are Schema data: `Schema.encodeSync(RunEvent.RunEvent)(event)` gives
 * JSON you can forward, e.g. over SSE to a UI. Get them as a `Stream` with
 * `Chain.stream`, or receive them in a run of your own by providing an
 * {@link Observer}.
 *
 * Numbering: `call` is the model call's number in the chain (its `runCount`
 * after the call), so events of a resumed run go on counting.
 *
 * Privacy: the `message` of failure events never holds a credential
 * (`Privacy.redactSecrets`), and with `Privacy.OmitContent` on, events carry
 * no content: no tool arguments or results, no model text, no text deltas,
 * no chain documents, and failure messages that say what failed, not what
 * the failure quoted.
 *
 * @since 0.1.0
 */
import { Context, Effect, Schema } from "effect"
import { runEventWithoutContent } from "./internal/contentFree.ts"
import { redactSecrets } from "./internal/redact.ts"
import { PauseReason } from "./Outcome.ts"
import { OmitContent } from "./Privacy.ts"

/**
 * Token counts of one model call, as the provider reported them.
 *
 * @example
 * ```ts
 * import { RunEvent } from "loopwork"
 *
 * const usage: RunEvent.Usage = { inputTokens: 120, outputTokens: 14 }
 * ```
 *
 * @since 0.1.0
 */
export const Usage = Schema.Struct({
  inputTokens: Schema.optionalKey(Schema.Number),
  outputTokens: Schema.optionalKey(Schema.Number)
}).annotate({ identifier: "Usage" })

/**
 * @since 0.1.0
 */
export type Usage = typeof Usage.Type

const Millis = Schema.Number
const CallNumber = Schema.Int

/**
 * The run began. `runCount` is the chain's count of model calls so far (not
 * zero when a paused chain resumes).
 *
 * @since 0.1.0
 */
export const RunStarted = Schema.TaggedStruct("RunStarted", { messages: Schema.Int, runCount: Schema.Int })

/**
 * A model call began, with the number of messages and the tools it is sent.
 * It ends with `ModelCallFinished` or `ModelCallFailed`, or, when
 * `StopSignal.interrupt` abandons it, with the `RunPaused` that follows.
 *
 * @since 0.1.0
 */
export const ModelCallStarted = Schema.TaggedStruct("ModelCallStarted", {
  call: CallNumber,
  messages: Schema.Int,
  tools: Schema.Array(Schema.String)
})

/**
 * A piece of the model's text, as it streams (only when the model streams,
 * e.g. under `Chain.stream`). When the attempt then fails
 * (`ModelCallFailed`), its deltas are not part of the chain: a UI should
 * drop them. Not sent when `Privacy.OmitContent` is on.
 *
 * @since 0.1.0
 */
export const TextDelta = Schema.TaggedStruct("TextDelta", { call: CallNumber, delta: Schema.String })

/**
 * A model call ended with a response. `text` is the response's text (`""`
 * when `Privacy.OmitContent` is on).
 *
 * @since 0.1.0
 */
export const ModelCallFinished = Schema.TaggedStruct("ModelCallFinished", {
  call: CallNumber,
  finishReason: Schema.String,
  usage: Usage,
  text: Schema.String,
  toolCalls: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String })),
  durationMillis: Millis
})

/**
 * An attempt of a model call failed. With a `retry` schedule more attempts
 * may follow; otherwise the run fails next. `message` is the error's
 * message, credentials redacted; with `Privacy.OmitContent` on, a
 * content-free one (`"The model call failed (HTTP 400): details omitted
 * (Privacy.OmitContent)"`): a provider's error text may quote the prompt.
 *
 * @since 0.1.0
 */
export const ModelCallFailed = Schema.TaggedStruct("ModelCallFailed", {
  call: CallNumber,
  attempt: Schema.Int,
  error: Schema.String,
  message: Schema.String,
  durationMillis: Millis
})

/**
 * The loop began settling a tool call: checking its tool and arguments,
 * asking whether it needs approval, then running its handler. Every call
 * that starts gets exactly one `ToolCallFinished`. A call that still waits
 * for a decision or a result when a run resumes is not reported again.
 * `params` are the call's arguments (absent when `Privacy.OmitContent` is
 * on).
 *
 * @since 0.1.0
 */
export const ToolCallStarted = Schema.TaggedStruct("ToolCallStarted", {
  id: Schema.String,
  name: Schema.String,
  params: Schema.optionalKey(Schema.Unknown)
})

/**
 * How a tool call settled: a result, a failure (fed back or failing the run
 * by its policy), rejected by a human, interrupted by `StopSignal.interrupt`
 * (it runs again on resume), or held for a decision or an external result.
 *
 * @since 0.1.0
 */
export const ToolCallStatus = Schema.Literals([
  "succeeded",
  "failed",
  "rejected",
  "interrupted",
  "awaiting-approval",
  "awaiting-result"
])

/**
 * A tool call settled. `result` is the encoded result (or failure) the model
 * is sent; held calls have none, and no call has one when
 * `Privacy.OmitContent` is on.
 *
 * @since 0.1.0
 */
export const ToolCallFinished = Schema.TaggedStruct("ToolCallFinished", {
  id: Schema.String,
  name: Schema.String,
  status: ToolCallStatus,
  result: Schema.optionalKey(Schema.Unknown),
  durationMillis: Millis
})

/**
 * What stands in for a chain's document in `RunPaused`, `RunFinished` and
 * `RunFailed` when `Privacy.OmitContent` is on: how many messages the chain
 * has and its `runCount`, nothing of their content.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const isSummary = Schema.is(RunEvent.ChainSummary)
 * isSummary({ _tag: "ChainSummary", messages: 4, runCount: 2 }) // true
 * ```
 *
 * @since 0.1.0
 */
export const ChainSummary = Schema.TaggedStruct("ChainSummary", { messages: Schema.Int, runCount: Schema.Int })

/**
 * @since 0.1.0
 */
export type ChainSummary = typeof ChainSummary.Type

/**
 * The run paused at a clean checkpoint. `chain` is the chain's JSON
 * document (`Chain.encode`'s form): store it, and `Chain.decode` it to resume.
 * With `Privacy.OmitContent` on it is a {@link ChainSummary} instead, and
 * the waiting calls of `reason` have `params: null`.
 *
 * @since 0.1.0
 */
export const RunPaused = Schema.TaggedStruct("RunPaused", { reason: PauseReason, chain: Schema.Unknown })

/**
 * The run finished: why (an `Outcome.OkReason`), the final text, and the
 * chain's JSON document (`""` and a {@link ChainSummary} when
 * `Privacy.OmitContent` is on).
 *
 * @since 0.1.0
 */
export const RunFinished = Schema.TaggedStruct("RunFinished", {
  reason: Schema.String,
  text: Schema.String,
  chain: Schema.Unknown
})

/**
 * The run failed: the error's tag and message (credentials redacted), and
 * the chain's JSON document as it stood. With `Privacy.OmitContent` on, the
 * chain is a {@link ChainSummary} and the message is content-free: the
 * error's tag, for a failed tool call its kind and the tool
 * (`"Tool 'lookup' failed (handler): details omitted (Privacy.OmitContent)"`),
 * for a model call the HTTP status (the `RunError` the run fails with keeps
 * its whole message).
 *
 * @since 0.1.0
 */
export const RunFailed = Schema.TaggedStruct("RunFailed", {
  error: Schema.String,
  message: Schema.String,
  chain: Schema.Unknown
})

/**
 * Any event of a run.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const json = Schema.encodeSync(RunEvent.RunEvent)({ _tag: "TextDelta", call: 1, delta: "Hel" })
 * ```
 *
 * @since 0.1.0
 */
export const RunEvent = Schema.Union([
  RunStarted,
  ModelCallStarted,
  TextDelta,
  ModelCallFinished,
  ModelCallFailed,
  ToolCallStarted,
  ToolCallFinished,
  RunPaused,
  RunFinished,
  RunFailed
]).annotate({ identifier: "RunEvent" })

/**
 * @since 0.1.0
 */
export type RunEvent = typeof RunEvent.Type

/**
 * Where a run sends its events, and whether its model calls should stream.
 * The default (`Observer.none`) receives nothing, and costs a run one
 * lookup per model call and per tool round.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode, RunEvent } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const logged = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.provideService(RunEvent.Observer, {
 *     emit: (event) => Effect.log(event._tag),
 *     streaming: false
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 */
export interface Observer {
  /** Receives every event, in order. A failure or defect here is ignored. */
  readonly emit: (event: RunEvent) => Effect.Effect<void>
  /** Call the model with `ChatModel.stream` (text deltas) instead of `generate`. */
  readonly streaming: boolean
}

const none: Observer = { emit: () => Effect.void, streaming: false }

/**
 * The observer that receives nothing (the default). Tool handlers run with
 * it, so a run started inside a handler (a sub-agent) does not report into
 * the events of the run that called the tool; provide your own observer
 * there to watch it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const unobserved = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, RunEvent.Observer, RunEvent.silent)
 * ```
 *
 * @since 0.1.0
 */
export const silent: Observer = none

/**
 * The current observer (a `Context.Reference`; the default receives nothing).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const seen: Array<RunEvent.RunEvent> = []
 * const withObserver = Effect.provideService(RunEvent.Observer, {
 *   emit: (event) => Effect.sync(() => seen.push(event)),
 *   streaming: true
 * })
 * ```
 *
 * @since 0.1.0
 */
export const Observer = Context.Reference<Observer>("loopwork/RunEvent/Observer", { defaultValue: () => none })

/**
 * Whether `observer` receives events (false for the default).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const watched = Effect.map(Effect.service(RunEvent.Observer), RunEvent.isActive)
 * ```
 *
 * @since 0.1.0
 */
export const isActive = (observer: Observer): boolean => observer !== none

/**
 * Sends `event` to `observer`, ignoring the observer's failures and defects.
 * A failure event's `message` goes out with credentials redacted; with
 * `Privacy.OmitContent` on, the event goes out without content (a
 * `TextDelta` not at all; a failure event with a content-free message).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunEvent } from "loopwork"
 *
 * const started = Effect.flatMap(Effect.service(RunEvent.Observer), (observer) =>
 *   RunEvent.emitTo(observer, { _tag: "RunStarted", messages: 1, runCount: 0 })
 * )
 * ```
 *
 * @since 0.1.0
 */
export const emitTo = (observer: Observer, event: RunEvent): Effect.Effect<void> =>
  observer === none
    ? Effect.void
    : Effect.catchCause(Effect.withFiber((fiber) => deliver(observer, event, fiber.getRef(OmitContent))), ignore)

const ignore = () => Effect.void

/** `event` as `observer` may see it. No allocation unless something is taken out. */
const deliver = (observer: Observer, event: RunEvent, omitContent: boolean): Effect.Effect<void> => {
  if (omitContent) {
    const safe = runEventWithoutContent(event)
    return safe === undefined ? Effect.void : observer.emit(safe)
  }
  return observer.emit(event._tag === "ModelCallFailed" || event._tag === "RunFailed" ? withSafeMessage(event) : event)
}

const withSafeMessage = <E extends ModelCallFailed | RunFailed>(event: E): E => {
  const message = redactSecrets(event.message)
  return message === event.message ? event : { ...event, message }
}

type ModelCallFailed = typeof ModelCallFailed.Type
type RunFailed = typeof RunFailed.Type

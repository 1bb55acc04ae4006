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
 * @since 0.1.0
 */
import { Context, Effect, Schema } from "effect"
import { PauseReason } from "./Outcome.ts"

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
 * drop them.
 *
 * @since 0.1.0
 */
export const TextDelta = Schema.TaggedStruct("TextDelta", { call: CallNumber, delta: Schema.String })

/**
 * A model call ended with a response.
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
 * may follow; otherwise the run fails next.
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
 *
 * @since 0.1.0
 */
export const ToolCallStarted = Schema.TaggedStruct("ToolCallStarted", {
  id: Schema.String,
  name: Schema.String,
  params: Schema.Unknown
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
 * is sent; held calls have none.
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
 * The run paused at a clean checkpoint. `chain` is the chain's JSON
 * document (`Chain.encode`'s form): store it, and `Chain.decode` it to resume.
 *
 * @since 0.1.0
 */
export const RunPaused = Schema.TaggedStruct("RunPaused", { reason: PauseReason, chain: Schema.Unknown })

/**
 * The run finished: why (an `Outcome.OkReason`), the final text, and the
 * chain's JSON document.
 *
 * @since 0.1.0
 */
export const RunFinished = Schema.TaggedStruct("RunFinished", {
  reason: Schema.String,
  text: Schema.String,
  chain: Schema.Unknown
})

/**
 * The run failed: the error's tag and message, and the chain's JSON
 * document as it stood.
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
  observer === none ? Effect.void : Effect.catchCause(Effect.suspend(() => observer.emit(event)), () => Effect.void)

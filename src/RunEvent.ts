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
import { Context, Effect } from "effect"
import { reporter } from "./internal/report.ts"
import type { RunEvent } from "./internal/runEvents.ts"
import { OmitContent } from "./Privacy.ts"

export {
  ChainSummary,
  ModelCallFailed,
  ModelCallFinished,
  ModelCallStarted,
  RunEvent,
  RunFailed,
  RunFinished,
  RunPaused,
  RunStarted,
  TextDelta,
  ToolCallFinished,
  ToolCallStarted,
  ToolCallStatus,
  Usage,

} from "./internal/runEvents.ts"

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
 * @category models
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
 * @category utils
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
 * @category services
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
 * @category guards
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
 * @category utils
 * @since 0.1.0
 */
export const emitTo = (observer: Observer, event: RunEvent): Effect.Effect<void> =>
  observer === none
    ? Effect.void
    // `Chain.stream`'s own observer takes the event into the stream's buffer in this one step.
    : Effect.withFiber((fiber) => reporter(observer, fiber.getRef(OmitContent))(event) ?? Effect.void)


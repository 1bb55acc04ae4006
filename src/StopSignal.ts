/**
 * A stop signal: the caller's way to ask a running chain to stop.
 *
 * Pass a signal to `Chain.run` (option `stop`) and raise it from anywhere
 * (another fiber, an HTTP handler, a UI button). The loop does not interrupt
 * work in flight and never leaves a tool call without its result: a stop
 * raised during a model call takes effect once the tool calls of that answer
 * have run, so the loop pauses before the next model call with
 * `Pause { reason: { _tag: "StopRequested" } }`. Nothing is lost: run the
 * paused chain again to continue. To hold specific calls *before* they run,
 * give their tools `needsApproval` (see `Approval`).
 *
 * A raised signal stays raised. Resume with a new signal, or `clear` this one.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"

const TypeId = "~loopwork/StopSignal" as const

/**
 * A stop signal. Create it with {@link make}.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StopSignal } from "loopwork"
 *
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   yield* StopSignal.request(stop)
 *   return yield* StopSignal.isRequested(stop) // true
 * })
 * ```
 *
 * @since 0.1.0
 */
export interface StopSignal {
  readonly [TypeId]: typeof TypeId
  /** @internal read by the loop on its hot path */
  readonly requested: boolean
}

class SignalImpl implements StopSignal {
  readonly [TypeId] = TypeId
  requested = false
}

/**
 * A new signal, not raised.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode, StopSignal } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   return yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, stop })
 * })
 * ```
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<StopSignal> = Effect.sync(() => new SignalImpl())

/**
 * Raises the signal: every run holding it pauses at its next clean point.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * declare const stop: StopSignal.StopSignal
 * const onCancelClicked = StopSignal.request(stop)
 * ```
 *
 * @since 0.1.0
 */
export const request = (signal: StopSignal): Effect.Effect<void> =>
  Effect.sync(() => {
    ;(signal as SignalImpl).requested = true
  })

/**
 * Lowers the signal again, e.g. before resuming a chain it paused.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * declare const stop: StopSignal.StopSignal
 * const beforeResume = StopSignal.clear(stop)
 * ```
 *
 * @since 0.1.0
 */
export const clear = (signal: StopSignal): Effect.Effect<void> =>
  Effect.sync(() => {
    ;(signal as SignalImpl).requested = false
  })

/**
 * Whether the signal is raised.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * declare const stop: StopSignal.StopSignal
 * const raised = StopSignal.isRequested(stop)
 * ```
 *
 * @since 0.1.0
 */
export const isRequested = (signal: StopSignal): Effect.Effect<boolean> => Effect.sync(() => signal.requested)

/**
 * A signal raised when `abort` fires (or already raised if it has), so a
 * request's `AbortSignal` can stop a run at a clean point.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * const controller = new AbortController()
 * const stop = StopSignal.fromAbortSignal(controller.signal)
 * ```
 *
 * @since 0.1.0
 */
export const fromAbortSignal = (abort: AbortSignal): StopSignal => {
  const signal = new SignalImpl()
  if (abort.aborted) signal.requested = true
  else abort.addEventListener("abort", () => {
    signal.requested = true
  }, { once: true })
  return signal
}

/**
 * `true` when `u` is a stop signal.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * StopSignal.isStopSignal({}) // false
 * ```
 *
 * @since 0.1.0
 */
export const isStopSignal = (u: unknown): u is StopSignal => typeof u === "object" && u !== null && TypeId in u

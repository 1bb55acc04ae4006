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
 * give their tools `needsApproval` (see `Approval`). When waiting for the
 * clean point is too long, {@link interrupt} cuts the work in flight short
 * and still pauses with a resumable chain.
 *
 * A raised signal stays raised. Resume with a new signal, or `clear` this one.
 *
 * Given a value that is not a signal (from JavaScript), {@link request},
 * {@link clear} and {@link interrupt} do nothing but log a warning, and
 * {@link isRequested} is `false`: `Chain.run` refuses anything but a signal
 * as its `stop` option, so no run can be listening on such a value and there
 * is nothing to stop. They keep their infallible type, so a tool handler or a
 * finalizer can raise a signal without handling an error that cannot happen
 * for a real signal.
 *
 * @since 0.1.0
 */
import { Deferred, Effect } from "effect"
import { InvalidInput } from "./LoopError.ts"
import { SignalImpl, type StopSignal as Signal } from "./internal/stopSignal.ts"

/**
 * A stop signal. Create it with {@link make}.
 *
 * @example
 * ```ts
 * import { Deferred, Effect, Option } from "effect"
 * import { StopSignal } from "loopwork"
 *
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   yield* StopSignal.request(stop)
 *   return yield* StopSignal.isRequested(stop) // true
 * })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type StopSignal = Signal

/** What `operation` does with a value that is not a signal: nothing, but say so. */
const notASignal = (operation: string, value: unknown): Effect.Effect<void> =>
  Effect.logWarning(
    `StopSignal.${operation}: not a StopSignal (got ${value === null ? "null" : typeof value}); nothing to do, as no run can hold it`
  )

/**
 * A new signal, not raised.
 *
 * @example
 * ```ts
 * import { Deferred, Effect, Option } from "effect"
 * import { Chain, ChatModel, Mode, StopSignal } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   return yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, stop })
 * })
 * ```
 *
 * @category constructors
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
 * @category utils
 * @since 0.1.0
 */
export const request = (signal: StopSignal): Effect.Effect<void> =>
  signal instanceof SignalImpl
    ? Effect.sync(() => {
      signal.requested = true
    })
    : notASignal("request", signal)

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
 * @category utils
 * @since 0.1.0
 */
export const clear = (signal: StopSignal): Effect.Effect<void> =>
  signal instanceof SignalImpl
    ? Effect.sync(() => {
      signal.requested = false
      if (signal.interrupted) {
        signal.interrupted = false
        signal.now = Deferred.makeUnsafe<void>()
      }
    })
    : notASignal("clear", signal)

/**
 * Raises the signal and cuts short the work in flight, for when waiting for
 * the next clean point is too long. A model call in flight is abandoned (its
 * request aborted): the run pauses with the chain as it was before the call.
 * In a tool round, the calls that finished keep their results, the calls
 * still running are interrupted (their finalizers run) and stay pending, to
 * run again on resume. Either way the run ends with
 * `Pause { reason: { _tag: "StopRequested" } }` and a chain you can encode,
 * store and resume; no call that finished is lost. A handler that was
 * interrupted runs again on resume, even if part of its work happened (Effect
 * reports an uninterruptible section that ends under a pending interruption
 * as interrupted): give tools with side effects an idempotency key (the call
 * id), or use {@link request} to wait for a clean point. Runs given this signal
 * as `stop` race each model call and tool round against it (a few
 * microseconds per step).
 *
 * @example
 * ```ts
 * import { Effect, Fiber } from "effect"
 * import { Chain, Mode, StopSignal } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   const fiber = yield* Effect.forkChild(Chain.run(chain, { mode: Mode.whileNeedsResponse, stop }))
 *   yield* StopSignal.interrupt(stop) // e.g. the user closed the tab
 *   return yield* Fiber.join(fiber) // Pause (StopRequested), resumable
 * })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const interrupt = (signal: StopSignal): Effect.Effect<void> =>
  signal instanceof SignalImpl
    ? Effect.suspend(() => {
      signal.requested = true
      signal.interrupted = true
      return Effect.asVoid(Deferred.succeed(signal.now, undefined))
    })
    : notASignal("interrupt", signal)

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
 * @category guards
 * @since 0.1.0
 */
export const isRequested = (signal: StopSignal): Effect.Effect<boolean> =>
  signal instanceof SignalImpl
    ? Effect.sync(() => signal.requested)
    : Effect.as(notASignal("isRequested", signal), false)

/**
 * A signal raised when `abort` fires (or already raised if it has), so a
 * request's `AbortSignal` can stop a run at a clean point. Given anything but
 * an `AbortSignal` (from JavaScript), it does not throw: it returns a signal
 * that `Chain.run` (and every step given it) refuses as `stop` with
 * `InvalidInput`.
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * const controller = new AbortController()
 * const stop = StopSignal.fromAbortSignal(controller.signal)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromAbortSignal = (abort: AbortSignal): StopSignal => {
  const signal = new SignalImpl()
  if (!(abort instanceof AbortSignal)) {
    signal.problem = new InvalidInput({
      field: "stop",
      rule: "StopSignal.fromAbortSignal needs an AbortSignal (controller.signal)",
      value: abort
    })
    return signal
  }
  if (abort.aborted) signal.requested = true
  else abort.addEventListener("abort", () => {
    signal.requested = true
  }, { once: true })
  return signal
}

/**
 * `true` when `u` is a stop signal made by {@link make} or
 * {@link fromAbortSignal} (an object that merely carries the signal's key,
 * e.g. from JSON, is not one).
 *
 * @example
 * ```ts
 * import { StopSignal } from "loopwork"
 *
 * StopSignal.isStopSignal({}) // false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isStopSignal = (u: unknown): u is StopSignal => u instanceof SignalImpl

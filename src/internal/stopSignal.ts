/**
 * The stop signal's representation, and what the loop reads of it: whether
 * it is raised, whether it was interrupted, racing work against an
 * interrupt, and the problem of a signal made from bad input. The public
 * operations are in `StopSignal.ts`.
 *
 * @internal
 */
import { Deferred, Effect, Option } from "effect"
import type { InvalidInput } from "../LoopError.ts"

/** @internal */
export const TypeId = "~loopwork/StopSignal" as const

/** @internal the public shape: a brand, nothing to read */
export interface StopSignal {
  readonly [TypeId]: typeof TypeId
}

/** @internal the one implementation; `StopSignal.isStopSignal` is `instanceof` this class */
export class SignalImpl implements StopSignal {
  readonly [TypeId] = TypeId
  requested = false
  /** Completed by `interrupt`: work in flight is cut short. */
  now: Deferred.Deferred<void> = Deferred.makeUnsafe<void>()
  interrupted = false
  /** Set when the signal was made from bad input (`fromAbortSignal` without an AbortSignal). */
  problem: InvalidInput | undefined = undefined
}

/**
 * @internal whether the signal is raised, read synchronously on the loop's
 * hot path; the loop checks every signal it is given is a `SignalImpl` first
 */
export const isRaised = (signal: StopSignal): boolean => (signal as SignalImpl).requested

/** @internal whether `interrupt` was called (and not cleared) */
export const isInterrupted = (signal: StopSignal): boolean => (signal as SignalImpl).interrupted

/**
 * @internal `work`'s value, or `None` when `interrupt` is called first (then
 * `work` is interrupted, and has finished its finalizers when this returns)
 */
export const raceInterrupt = <A, E, R>(signal: StopSignal, work: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.raceFirst(
    Effect.map(work, Option.some),
    Effect.as(Effect.suspend(() => Deferred.await((signal as SignalImpl).now)), Option.none<A>())
  )

/** @internal the problem of a signal made from bad input, if any */
export const problemOf = (signal: StopSignal): InvalidInput | undefined =>
  signal instanceof SignalImpl ? signal.problem : undefined

/**
 * `Effect.contextWith(f)` without a step of the runtime, for an effect
 * built while its fiber runs and run by that fiber next: `f` gets the
 * running fiber's context now. A step's function is such a caller (it runs
 * inside the continuation of the step before it, and the runtime runs what
 * it returns at once). Called outside any fiber, it falls back to
 * `Effect.contextWith`.
 *
 * Not for an effect built now and run later or elsewhere: it would see the
 * context of the fiber that built it.
 *
 * @internal
 */
import { Effect, Fiber } from "effect"
import type { Context } from "effect"

/** @internal */
export const contextNow = <A, E, R, R2>(
  f: (context: Context.Context<R2>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | R2> => {
  const fiber = Fiber.getCurrent()
  return fiber === undefined ? Effect.contextWith(f) : f(fiber.context as Context.Context<R2>)
}

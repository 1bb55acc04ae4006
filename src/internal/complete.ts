/**
 * Whether an effect is already complete (an `Exit`), so its result can be
 * branched on now, with no step of the runtime. Exits are the instances of
 * two prototypes: comparing the prototype is a load, where `Exit.isExit`
 * walks the prototype chain of every other effect looking for its key.
 * Were an exit ever made otherwise, it would only take the general path.
 *
 * @internal
 */
import { Effect, Exit } from "effect"

const successes: object = Object.getPrototypeOf(Exit.succeed(undefined))
const failures: object = Object.getPrototypeOf(Exit.die(undefined))

/** @internal `effect` is an `Exit` (see the module's note) */
export const isComplete = <A, E, R>(effect: Effect.Effect<A, E, R>): effect is Exit.Exit<A, E> => {
  const proto: unknown = Object.getPrototypeOf(effect)
  return proto === successes || proto === failures
}

/** @internal `effect` is a successful `Exit` */
export const isSucceeded = <A, E, R>(effect: Effect.Effect<A, E, R>): effect is Exit.Success<A, E> =>
  Object.getPrototypeOf(effect) === successes

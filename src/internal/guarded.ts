/**
 * Calling a function the user gave the loop (a policy, a predicate): a
 * throw, a failure or a defect ends the loop with `PolicyFailed` and the
 * chain as it stood, instead of killing the run.
 *
 * @internal
 */
import { Cause, Effect, Schema } from "effect"
import { type Chain, isChain } from "./chain.ts"
import { PolicyFailed } from "../LoopError.ts"
import { messageOf } from "./describe.ts"
import * as Outcome from "../Outcome.ts"


/**
 * Runs `run` (a value or an Effect) and continues with `then`; a throw (of
 * either), a failure or a defect becomes an `Error` outcome with
 * `PolicyFailed`.
 *
 * @internal
 */
export const guarded = <A, R>(
  chain: Chain,
  policy: string,
  run: () => A | Effect.Effect<A, unknown, R>,
  then: (value: A) => Outcome.Outcome | Effect.Effect<Outcome.Outcome, never, R>
): Effect.Effect<Outcome.Outcome, never, R> => {
  const fail = (u: unknown): Outcome.Outcome => new Outcome.Error(chain, new PolicyFailed({ policy, detail: messageOf(u) }))
  let value: A | Effect.Effect<A, unknown, R>
  try {
    value = run()
  } catch (error) {
    return Effect.succeed(fail(error))
  }
  const next = (a: A): Effect.Effect<Outcome.Outcome, never, R> => {
    let outcome: Outcome.Outcome | Effect.Effect<Outcome.Outcome, never, R>
    try {
      // Reading what the function gave may throw too (a getter of a JavaScript value).
      outcome = then(a)
    } catch (error) {
      return Effect.succeed(fail(error))
    }
    return Effect.isEffect(outcome) ? outcome : Effect.succeed(outcome)
  }
  return Effect.isEffect(value)
    ? Effect.matchCauseEffect(value, { onFailure: (cause) => Effect.succeed(fail(Cause.squash(cause))), onSuccess: next })
    : next(value)
}

const isPauseReason = Schema.is(Outcome.PauseReason)

/**
 * @internal whether `u` (what a user's function gave) is an outcome of the
 * loop holding a chain (and, for a pause, one of the pause reasons); never
 * throws (a revoked proxy is not one)
 */
export const isOutcome = (u: unknown): u is Outcome.Outcome => {
  try {
    if (u instanceof Outcome.Pause) return isChain(u.chain) && isPauseReason(u.reason)
    return (u instanceof Outcome.Ok || u instanceof Outcome.Error || u instanceof Outcome.Continue) && isChain(u.chain)
  } catch {
    return false
  }
}

/**
 * Holding a function the user gave the loop (a mode, a step) to its
 * contract, `(chain) => Effect<Outcome>`: one that throws, returns no
 * Effect, or succeeds with something that is not an Outcome (all possible
 * from JavaScript) ends the loop with `Error`, an `InvalidInput` naming what
 * it did, and the chain as it stood, instead of a defect. Its failures go on
 * as they are: a durable engine's own signals travel through them.
 *
 * @internal
 */
import { Effect, Exit } from "effect"
import type { Chain } from "./chain.ts"
import { isComplete } from "./complete.ts"
import { isOutcome } from "./guarded.ts"
import { InvalidInput } from "../LoopError.ts"
import * as Outcome from "../Outcome.ts"
import { thrownMessage } from "./errorText.ts"

/** @internal what a function is held to: the field it was given as, and the rule it must keep */
export interface Contract {
  readonly field: string
  readonly rule: string
}

const broken = (chain: Chain, contract: Contract, did: string): Outcome.Outcome =>
  new Outcome.Error(chain, new InvalidInput({ field: contract.field, rule: `${contract.rule} (it ${did})`, value: "(not shown)" }))

const notOutcome = (value: unknown): string =>
  value instanceof Outcome.Pause
    ? "paused with a reason that is not an Outcome.PauseReason"
    : "succeeded with something that is not an Outcome"

/**
 * @internal `call()`'s outcome for `chain`, held to `contract`. A result
 * already complete (an Exit) is checked at once, with no step of the runtime.
 */
export const heldToContract = <R>(chain: Chain, contract: Contract, call: () => unknown): Effect.Effect<Outcome.Outcome, never, R> => {
  let made: unknown
  try {
    made = call()
  } catch (defect) {
    return Effect.succeed(broken(chain, contract, `threw: ${thrownMessage(defect, 500)}`))
  }
  if (!Effect.isEffect(made)) return Effect.succeed(broken(chain, contract, "returned no Effect"))
  const effect = made as Effect.Effect<unknown, never, R>
  if (isComplete(effect)) {
    return Exit.isSuccess(effect) && !isOutcome(effect.value) ? Effect.succeed(broken(chain, contract, notOutcome(effect.value))) : effect as Exit.Exit<Outcome.Outcome>
  }
  return Effect.map(effect, (outcome) => isOutcome(outcome) ? outcome : broken(chain, contract, notOutcome(outcome)))
}

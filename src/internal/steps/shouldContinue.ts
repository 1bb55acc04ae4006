/**
 * `checkShouldContinue`: the end of one step of `Mode.step`, which asks the
 * run's `shouldContinue` whether to take another.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Chain } from "../chain.ts"
import { guarded } from "../guarded.ts"
import * as Outcome from "../../Outcome.ts"
import { continued, lift, type Step } from "../step.ts"

const stepped = (chain: Chain): Outcome.Outcome => new Outcome.Ok(chain, "step")

/**
 * Ends the run with `Ok` (reason `"step"`) unless `shouldContinue` returns
 * `true` for the chain, which then continues; without a predicate, always
 * ends. A predicate that throws or fails ends the run with `PolicyFailed`.
 *
 * @internal
 */
export const checkShouldContinue = (shouldContinue: ((chain: Chain) => boolean) | undefined): Step =>
  shouldContinue === undefined
    ? lift((chain) => Effect.succeed(stepped(chain)))
    : lift((chain) =>
      guarded(chain, "shouldContinue", () => shouldContinue(chain), (more) => (more ? continued(chain) : stepped(chain)))
    )

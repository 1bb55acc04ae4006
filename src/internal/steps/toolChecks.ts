/**
 * `checkUntilTool` and `checkToolSuccess`: ending a loop on a watched tool, or on a round without failures.
 *
 * @internal
 */
import { Effect } from "effect"
import { checkToolNames } from "../checks.ts"
import * as Outcome from "../../Outcome.ts"
import { blocksReturn, justRanTools } from "./roundState.ts"
import { continued, make, refused, type Step } from "../step.ts"

/**
 * Ends the loop with `Ok` (reason `"tool-used"`, `extra` = the result) when
 * the tool round that just ran has a successful call to one of `names`
 * (the first such call in call order). A failed (or rejected) call to a
 * watched tool does not end the loop: the model sees the failure and may try
 * again.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const untilSubmitted = Step.checkUntilTool(["submit"])
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkUntilTool = (names: string | ReadonlyArray<string>): Step => {
  const invalid = checkToolNames(names, "checkUntilTool names")
  if (invalid !== undefined) return refused(invalid)
  const watched = new Set(typeof names === "string" ? [names] : names)
  return make((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    for (const result of chain.lastToolResults) {
      if (!blocksReturn(result) && watched.has(result.name)) {
        return Effect.succeed(new Outcome.Ok(chain, "tool-used", result))
      }
    }
    return continued(chain)
  })
}

/**
 * Ends the loop with `Ok` (reason `"tools-succeeded"`) when the tool round
 * that just ran had no failure (and no rejected call), and with `Ok` (reason
 * `"done"`) when the chain needs no response. Used by `untilSuccess`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkToolSuccess)
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkToolSuccess: Step = make((chain) => {
  if (justRanTools(chain)) {
    for (const result of chain.lastToolResults) if (blocksReturn(result)) return continued(chain)
    return Effect.succeed(new Outcome.Ok(chain, "tools-succeeded"))
  }
  return chain.needsResponse ? continued(chain) : Effect.succeed(new Outcome.Ok(chain, "done"))
})

/**
 * `checkUntilTool` and `checkToolSuccess`: ending a loop on a watched tool, or on a round without failures.
 *
 * @internal
 */
import { Effect } from "effect"
import { checkToolNames } from "../checks.ts"
import { compile } from "../tools/compile.ts"
import { InvalidInput, ToolNamesNotFound } from "../../LoopError.ts"
import * as Outcome from "../../Outcome.ts"
import { blocksReturn, justRanTools } from "./roundState.ts"
import { continued, lift, refused, type Step } from "../step.ts"

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
  return lift((chain) => {
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
 * Ends the loop with `Error` unless `names` name at least one tool, each in
 * the chain's toolkit: `InvalidInput` (field `field`) for names that are not
 * names or none, `ToolNamesNotFound` ("Tool name 'x' not found in available
 * tools") for names the toolkit lacks. Placed first in `Mode.untilToolUsed`,
 * so it ends the run before any model call.
 *
 * @internal
 */
export const checkToolsExist = (names: string | ReadonlyArray<string>, field: string): Step => {
  const invalid = checkToolNames(names, field) ??
    (typeof names !== "string" && names.length === 0 ? new InvalidInput({ field, rule: "must name at least one tool", value: names }) : undefined)
  if (invalid !== undefined) return refused(invalid)
  const list = typeof names === "string" ? [names] : [...names]
  return lift((chain) => {
    const byName = compile(chain.toolkit).byName
    const missing = list.filter((name) => !byName.has(name))
    return missing.length === 0
      ? continued(chain)
      : Effect.succeed(new Outcome.Error(chain, new ToolNamesNotFound({ names: missing, available: [...byName.keys()] })))
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
export const checkToolSuccess: Step = lift((chain) => {
  if (justRanTools(chain)) {
    for (const result of chain.lastToolResults) if (blocksReturn(result)) return continued(chain)
    return Effect.succeed(new Outcome.Ok(chain, "tools-succeeded"))
  }
  return chain.needsResponse ? continued(chain) : Effect.succeed(new Outcome.Ok(chain, "done"))
})

/**
 * `checkNoTool`: what a model answer without tool calls means (the no-tool policy).
 *
 * @internal
 */
import { Effect } from "effect"
import type { Chain, ModelResponse } from "../chain.ts"
import { addUser } from "../chainInput.ts"
import { checkNoTool as noToolProblem } from "../checks.ts"
import { guarded } from "../guarded.ts"
import { InvalidInput } from "../../LoopError.ts"
import * as NoToolPolicy from "../../NoToolPolicy.ts"
import * as Outcome from "../../Outcome.ts"
import { continued, lift, refused, type Step } from "../step.ts"

/** @internal */
export const applyNoTool = (chain: Chain, response: ModelResponse, decision: NoToolPolicy.Decision): Outcome.Outcome => {
  if (typeof decision === "string" && decision.length > 0) {
    if (decision === "done") return new Outcome.Ok(chain, "done", response.text)
    if (decision === "user") return new Outcome.Pause(chain, { _tag: "UserInputWanted" })
    return new Outcome.Continue(addUser(decision)(chain))
  }
  if (typeof decision !== "string" && NoToolPolicy.isDecision(decision)) {
    return decision._tag === "Remind"
      ? new Outcome.Continue(addUser(decision.text)(chain))
      : new Outcome.Ok(chain, "no-tool-result", decision.result)
  }
  return new Outcome.Error(
    chain,
    new InvalidInput({
      field: "noTool",
      rule:
        "the policy (or its function) must give \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text) or NoToolPolicy.result(value)",
      value: decision
    })
  )
}

/**
 * The no-tool fallback: when the model has just answered without any tool
 * call, `policy` decides what happens (see `NoToolPolicy`): `"done"` ends with
 * the answer's text as `extra`, `"user"` pauses for user input, a reminder
 * string is appended as a user message so the loop calls the model again,
 * `NoToolPolicy.result(value)` ends with `value`, and a function decides per
 * answer. Place it right after `callLlm`.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const nudge = Step.checkNoTool("Please answer by calling the submit tool.")
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkNoTool = (policy: NoToolPolicy.Policy): Step => {
  const invalid = noToolProblem(policy, "checkNoTool policy")
  if (invalid !== undefined) return refused(invalid)
  return lift((chain) => {
    const response = chain.lastResponse
    if (
      response === undefined || response.toolCalls.length > 0 || chain.pendingToolCalls.length > 0 ||
      chain.messages[chain.messages.length - 1]?.role !== "assistant"
    ) return continued(chain)
    if (typeof policy !== "function") return Effect.succeed(applyNoTool(chain, response, policy))
    return guarded(chain, "noTool", () => policy(response, chain), (decision) => applyNoTool(chain, response, decision))
  })
}

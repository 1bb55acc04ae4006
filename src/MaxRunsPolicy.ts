/**
 * What the loop does when it has made `maxRuns` model calls and would need
 * another (run option `onMaxRuns`):
 *
 * | policy | what happens |
 * |---|---|
 * | `"fail"` (default) | the run fails with `MaxRunsExceeded` ("Exceeded maximum number of runs (n/m)"), carrying the chain |
 * | `"stop"` | end with `Ok { reason: "max-runs", extra: <the last response's text> }`; the chain is as it stands (every tool call has its result) |
 * | `"final-answer"` or {@link finalAnswer} | one more model call with `toolChoice: "none"` (the tool definitions are still sent, as providers such as Anthropic require when the prompt holds tool calls), after a user message asking for the answer now ({@link instruction}); end with `Ok { reason: "final-answer", extra: <its text> }` |
 * | a function `(chain, { runs, maxRuns }) => Effect<Outcome>` | your handler decides the outcome |
 *
 * A run that pauses and is resumed keeps its budget: `maxRuns` counts the
 * model calls since the run started, across the pause.
 *
 * The final-answer call is the one model call allowed beyond `maxRuns`. If
 * the model still asks for tools there (or the call fails), the run fails
 * with `MaxRunsExceeded` (or the model error) and the chain as it was before
 * that call.
 *
 * A policy from JSON or JavaScript that is none of these (an unknown string,
 * `finalAnswer(5)`, `{ _tag: "FinalAnswer" }` without an instruction) is
 * refused before any model call: `Chain.run` fails, and `Step.checkMaxRuns`
 * ends the loop, with `InvalidInput` for `onMaxRuns`.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { Chain } from "./internal/chain.ts"
import type * as Outcome from "./Outcome.ts"

/**
 * The user message sent before the final-answer call.
 *
 * @example
 * ```ts
 * import { MaxRunsPolicy } from "loopwork"
 *
 * MaxRunsPolicy.instruction.startsWith("You have reached") // true
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const instruction =
  "You have reached the limit of steps for this task. Do not call any tools. Give your best final answer now, using what you have found so far."

/**
 * Final answer with your own instruction.
 *
 * @example
 * ```ts
 * import { MaxRunsPolicy } from "loopwork"
 *
 * const policy = MaxRunsPolicy.finalAnswer("Summarise what you found, in one paragraph.")
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface FinalAnswer {
  readonly _tag: "FinalAnswer"
  readonly instruction: string
}

/**
 * See {@link FinalAnswer}.
 *
 * @example
 * ```ts
 * import { MaxRunsPolicy } from "loopwork"
 *
 * MaxRunsPolicy.finalAnswer("Answer now.").instruction // "Answer now."
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const finalAnswer = (text: string = instruction): FinalAnswer => ({ _tag: "FinalAnswer", instruction: text })

/**
 * What a handler is told: the model calls made in this run and the budget.
 *
 * @example
 * ```ts
 * import { MaxRunsPolicy } from "loopwork"
 *
 * const info: MaxRunsPolicy.Info = { runs: 10, maxRuns: 10 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Info {
  readonly runs: number
  readonly maxRuns: number
}

/**
 * A max-runs policy.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MaxRunsPolicy, Outcome } from "loopwork"
 *
 * const pauseForHuman: MaxRunsPolicy.Policy = (chain) =>
 *   Effect.succeed(new Outcome.Pause(chain, { _tag: "Requested", message: "Budget used up; continue?" }))
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Policy =
  | "fail"
  | "stop"
  | "final-answer"
  | FinalAnswer
  | ((chain: Chain, info: Info) => Effect.Effect<Outcome.Terminal>)

/**
 * `checkMaxRuns`: the `maxRuns` budget and its policy (fail, stop, a final answer, a handler of your own).
 *
 * @internal
 */
import { Effect, Schedule } from "effect"
import type { Chain } from "../chain.ts"
import { addUser } from "../chainInput.ts"
import { ChatModel, type ChatModelError } from "../../ChatModel.ts"
import * as Arrival from "../arrival.ts"
import { defaults, type Options } from "../options.ts"
import { checkSince } from "../checks.ts"
import { guarded, isOutcome } from "../guarded.ts"
import { compile } from "../tools/compile.ts"
import { MaxRunsExceeded, PolicyFailed } from "../../LoopError.ts"
import * as MaxRunsPolicy from "../../MaxRunsPolicy.ts"
import * as Outcome from "../../Outcome.ts"
import type { StopSignal as Signal } from "../stopSignal.ts"
import { generate, stopRequested, unlessInterrupted } from "./callLlm.ts"
import { continued, lift, optionsProblem, refused, type Step } from "../step.ts"

/**
 * Options of {@link checkMaxRuns}.
 *
 * - `maxRuns`: model calls allowed (default 25).
 * - `since`: the chain's `runCount` when the budget started. The built-in
 *   modes pass the `runCount` at the start of each run, so `maxRuns` is a
 *   budget per run (a follow-up question gets a fresh one). The default 0
 *   counts the chain's whole life.
 * - `onMaxRuns`: what to do at the limit (see `MaxRunsPolicy`; default
 *   `"fail"`).
 * - `retry`: retry schedule of the final-answer call.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.MaxRunsOptions = { maxRuns: 10, since: 4, onMaxRuns: "final-answer" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface MaxRunsOptions extends Pick<Options, "maxRuns" | "onMaxRuns" | "retry" | "stop"> {
  /**
   * The chain's `runCount` when the budget started (default 0: the chain's
   * whole life). `Step.forRun` passes the start of the run.
   */
  readonly since?: number | undefined
}

/** @internal */
export const finalAnswer = (
  chain: Chain,
  text: string,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  info: MaxRunsPolicy.Info,
  stop: Signal | undefined
): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
  // The tool definitions are sent with toolChoice "none": providers such as Anthropic reject a prompt
  // holding tool calls and results without them.
  Effect.map(
    unlessInterrupted(
      stop,
      () => generate(addUser(text)(chain), compile(chain.toolkit).tools, "none", retry, Arrival.defaultLimits, false),
      () => new Outcome.Pause(chain, stopRequested)
    ),
    (outcome) => {
    if (outcome._tag === "Pause") return outcome
    if (outcome._tag === "Error") return new Outcome.Error(chain, outcome.error)
    const answered = outcome.chain
    if (answered.pendingToolCalls.length > 0) {
      return new Outcome.Error(chain, new MaxRunsExceeded({ runs: info.runs, maxRuns: info.maxRuns }))
    }
    return new Outcome.Ok(answered, "final-answer", answered.lastResponse?.text ?? "")
  })

/** @internal */
export type MaxRunsHandler = (chain: Chain, info: MaxRunsPolicy.Info) => Effect.Effect<Outcome.Terminal>

/**
 * Acts when `maxRuns` model calls have been made and the next thing the loop
 * would do is another model call (the chain needs a response and no tool
 * calls are pending). By default it ends the loop with `MaxRunsExceeded`
 * ("Exceeded maximum number of runs (25/25)"); `onMaxRuns` can stop quietly,
 * ask for a final answer, or hand over to your function (see
 * `MaxRunsPolicy`). A final answer on the last allowed run is not an error,
 * and pending tool calls still run first, so a chain stopped here has a
 * result for every tool call. The step needs a `ChatModel` only for the
 * final-answer policy.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const atMostFive = Step.checkMaxRuns({ maxRuns: 5 })
 * const answerAtTen = Step.checkMaxRuns({ maxRuns: 10, onMaxRuns: "final-answer" })
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export function checkMaxRuns(
  options?: MaxRunsOptions & { readonly onMaxRuns?: "fail" | "stop" | MaxRunsHandler | undefined }
): Step
export function checkMaxRuns(options?: MaxRunsOptions): Step<ChatModel>
export function checkMaxRuns(options?: MaxRunsOptions): Step<ChatModel> {
  const invalid = optionsProblem(options, "checkMaxRuns options", true) ?? checkSince(options?.since)
  if (invalid !== undefined) return refused(invalid)
  const maxRuns = options?.maxRuns ?? defaults.maxRuns
  const since = options?.since ?? 0
  const policy = options?.onMaxRuns ?? "fail"
  const retry = options?.retry
  const stop = options?.stop
  return lift((chain) => {
    const runs = chain.runCount - since
    if (!(runs >= maxRuns && chain.pendingToolCalls.length === 0 && chain.needsResponse)) return continued(chain)
    if (policy === "fail") return Effect.succeed(new Outcome.Error(chain, new MaxRunsExceeded({ runs, maxRuns })))
    if (policy === "stop") return Effect.succeed(new Outcome.Ok(chain, "max-runs", chain.lastResponse?.text ?? ""))
    if (policy === "final-answer") return finalAnswer(chain, MaxRunsPolicy.instruction, retry, { runs, maxRuns }, stop)
    if (typeof policy === "function") {
      return guarded(chain, "onMaxRuns", () => policy(chain, { runs, maxRuns }), (outcome) =>
        isOutcome(outcome)
          ? outcome
          : new Outcome.Error(chain, new PolicyFailed({ policy: "onMaxRuns", detail: "it must succeed with an Outcome (Ok, Pause, Error or Continue)" })))
    }
    return finalAnswer(chain, policy.instruction, retry, { runs, maxRuns }, stop)
  })
}


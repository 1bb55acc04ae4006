/**
 * `forRun`: the built-in steps bound to one run's options, what every built-in mode is made of.
 *
 * @internal
 */
import type { Chain } from "../chain.ts"
import { ChatModel } from "../../ChatModel.ts"
import { type Options } from "../options.ts"
import { budgetStart } from "../budget.ts"
import * as NoToolPolicy from "../../NoToolPolicy.ts"
import { checkDirectReturn, checkReturnBehaviorWith } from "./returns.ts"
import { executeToolsWith } from "./executeTools.ts"
import { type Step } from "../step.ts"
import { checkStop } from "./pauses.ts"
import { checkNoTool } from "./noTool.ts"
import { callLlmWith } from "./callLlm.ts"
import { checkMaxRuns } from "./maxRuns.ts"
import { checkShouldContinue } from "./shouldContinue.ts"

/**
 * The built-in steps bound to one run's options: what every built-in mode is
 * made of, so a custom mode made of them does everything a built-in does.
 *
 * - `executeTools`: `concurrency`, `maxFailures`, `toolTimeout`,
 *   `onToolFailure`, `stop`.
 * - `checkStop`, `checkDirectReturn`, `checkReturnBehavior`: the checks after
 *   a tool round, in the priority order (with `checkAwaiting` between stop and
 *   direct return); `returnMemory`.
 * - `checkMaxRuns`: `maxRuns` counted from the start of the run (a run resumed
 *   after a pause continues its budget), `onMaxRuns`, `retry`, `stop`.
 * - `callLlm`: `toolChoice`, `retry`, `stop`, `maxArgumentDepth`,
 *   `maxArgumentSize`.
 * - `checkNoTool`: `noTool`, or the mode's default (`modeDefaults.noTool`);
 *   passes everything through when neither is set.
 * - `checkShouldContinue`: `shouldContinue`; ends the run with `Ok` (reason
 *   `"step"`) unless it returns `true` for the chain (without it, always).
 *   What ends each step of `Mode.step`.
 *
 * @example
 * ```ts
 * import { Chain, ChatModel, Mode, Step } from "loopwork"
 *
 * const steps = (chain: Chain.Chain, options: Mode.Options) => Step.forRun(chain, options)
 * ```
 *
 * @category steps
 * @since 0.2.0
 */
export const forRun = (
  chain: Chain,
  options: Options,
  modeDefaults?: { readonly noTool?: NoToolPolicy.Policy | undefined }
): RunSteps => {
  const noTool = options.noTool ?? modeDefaults?.noTool
  return {
    executeTools: executeToolsWith(options),
    checkStop: options.stop === undefined ? passThrough : checkStop(options.stop),
    checkDirectReturn: checkDirectReturn({ returnMemory: options.returnMemory }),
    checkReturnBehavior: checkReturnBehaviorWith({ returnMemory: options.returnMemory }),
    checkMaxRuns: checkMaxRuns({
      maxRuns: options.maxRuns,
      since: budgetStart(chain),
      onMaxRuns: options.onMaxRuns,
      retry: options.retry,
      stop: options.stop
    }),
    callLlm: callLlmWith(options),
    checkNoTool: noTool === undefined ? passThrough : checkNoTool(noTool),
    checkShouldContinue: checkShouldContinue(options.shouldContinue)
  }
}

/**
 * The steps {@link forRun} returns.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const roundChecks = (s: Step.RunSteps): ReadonlyArray<Step.Step> => [s.checkStop, s.checkDirectReturn]
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface RunSteps {
  readonly executeTools: Step
  readonly checkStop: Step
  readonly checkDirectReturn: Step
  readonly checkReturnBehavior: Step
  readonly checkMaxRuns: Step<ChatModel>
  readonly callLlm: Step<ChatModel>
  readonly checkNoTool: Step<ChatModel>
  readonly checkShouldContinue: Step
}

/** @internal */
export const passThrough: Step = (self) => self

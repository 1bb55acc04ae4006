/**
 * `forRun`: the built-in steps bound to one run's options, what every built-in mode is made of.
 *
 * @internal
 */
import { type Chain, isChain } from "../chain.ts"
import { checkObject, readably } from "../checks.ts"
import { InvalidInput } from "../../LoopError.ts"
import { ChatModel } from "../../ChatModel.ts"
import { isChecked, optionNames, type Options, whileChecked } from "../options.ts"
import { budgetStart } from "../budget.ts"
import * as NoToolPolicy from "../../NoToolPolicy.ts"
import { checkDirectReturn, checkReturnBehaviorWith } from "./returns.ts"
import { executeToolsWith } from "./executeTools.ts"
import { refused, type Step } from "../step.ts"
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
  // From JavaScript anything may come: every step then ends the loop with the problem, as a factory's do.
  let values: ReadonlyArray<unknown> = []
  const problem = isChain(chain)
    ? readably("Step.forRun options", () => {
      const invalid = checkObject(options, "Step.forRun options")
      if (invalid === undefined) values = read(options)
      return invalid
    })
    : new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: "(not shown)" })
  if (problem !== undefined) return refusedSteps(refused(problem))
  const since = budgetStart(chain)
  const noTool = modeDefaults?.noTool
  if (last !== undefined && last.since === since && last.noTool === noTool && same(last.values, values)) return last.steps
  const made = snapshot(values)
  // Options `Chain.run` checked need no check again in the factories: nor does their copy.
  const steps = isChecked(options) ? whileChecked(made, () => build(made, since, noTool)) : build(made, since, noTool)
  last = { values, since, noTool, steps }
  return steps
}

/**
 * The steps {@link forRun} made last, and what they were made of: runs with
 * the same options (whatever object holds them) and the same budget start
 * share them, so a run builds no steps of its own. Steps keep no state
 * between calls (a run's state is its chain), so sharing them is safe.
 */
let last: {
  readonly values: ReadonlyArray<unknown>
  readonly since: number
  readonly noTool: NoToolPolicy.Policy | undefined
  readonly steps: RunSteps
} | undefined

/** The value of each option the steps read (`optionNames`), each read once. */
const read = (options: Options): ReadonlyArray<unknown> => optionNames.map((name) => options[name])

const same = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>): boolean => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The options of `values`, as the steps are made of them. */
const snapshot = (values: ReadonlyArray<unknown>): Options => {
  const options: Record<string, unknown> = {}
  for (let i = 0; i < optionNames.length; i++) if (values[i] !== undefined) options[optionNames[i]] = values[i]
  return options as Options
}

/** The steps of {@link forRun} for `options` (read once already). */
const build = (options: Options, since: number, modeNoTool: NoToolPolicy.Policy | undefined): RunSteps => {
  const noTool = options.noTool ?? modeNoTool
  return {
    executeTools: executeToolsWith(options),
    checkStop: options.stop === undefined ? passThrough : checkStop(options.stop),
    checkDirectReturn: checkDirectReturn({ returnMemory: options.returnMemory }),
    checkReturnBehavior: checkReturnBehaviorWith({ returnMemory: options.returnMemory }),
    checkMaxRuns: checkMaxRuns({
      maxRuns: options.maxRuns,
      since,
      onMaxRuns: options.onMaxRuns,
      retry: options.retry,
      stop: options.stop
    }),
    callLlm: callLlmWith(options),
    checkNoTool: noTool === undefined ? passThrough : checkNoTool(noTool),
    checkShouldContinue: checkShouldContinue(options.shouldContinue)
  }
}

/** Every step of {@link forRun} as `step` (one that ends the loop with a problem). */
const refusedSteps = (step: Step): RunSteps => ({
  executeTools: step,
  checkStop: step,
  checkDirectReturn: step,
  checkReturnBehavior: step,
  checkMaxRuns: step,
  callLlm: step,
  checkNoTool: step,
  checkShouldContinue: step
})

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

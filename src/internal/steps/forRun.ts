/**
 * `forRun`: the built-in steps bound to one run's options, what every built-in mode is made of.
 *
 * @internal
 */
import { Duration, Schedule } from "effect"
import { type Chain, isChain } from "../chain.ts"
import { SignalImpl } from "../stopSignal.ts"
import { checkObject, readably } from "../checks.ts"
import { InvalidInput } from "../../LoopError.ts"
import { ChatModel } from "../../ChatModel.ts"
import { optionNames, type Options, validateOptions, whileChecked } from "../options.ts"
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
 * Each option is read once per call. Runs whose options hold the same
 * values (in whatever object) and whose budget starts at the same count
 * share the steps themselves, which keep no state between calls; each call
 * gets an object of its own holding them. Steps made of a value that may be
 * changed in place (a plain object or array, such as a `toolTimeout` pair)
 * are made again at every call.
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
  const steps = sharedSteps(chain, options, modeDefaults)
  // A copy: the steps are shared between runs, and a caller may change the object it is given.
  return { ...steps }
}

/**
 * @internal {@link forRun}'s steps themselves, frozen: the same object for
 * runs whose options hold the same values ({@link last}), so a built-in mode
 * can build its round once for it (`roundFor`). For the library's modes,
 * which never change it.
 */
export const sharedSteps = (
  chain: Chain,
  options: Options,
  modeDefaults?: { readonly noTool?: NoToolPolicy.Policy | undefined }
): RunSteps => {
  // From JavaScript anything may come: every step then ends the loop with the problem, as a factory's do.
  if (!isChain(chain)) {
    return refusedSteps(refused(new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: "(not shown)" })))
  }
  let values: ReadonlyArray<unknown> = []
  const problem = readably("Step.forRun options", () => {
    const invalid = checkObject(options, "Step.forRun options")
    // Each option read once, here, where a read that throws is the problem.
    if (invalid === undefined) values = read(options)
    return invalid
  })
  if (problem !== undefined) return refusedSteps(refused(problem))
  const since = budgetStart(chain)
  const modeNoTool = modeDefaults?.noTool
  if (last !== undefined && last.since === since && last.modeNoTool === modeNoTool && same(last.values, values)) return last.steps
  const steps = build(snapshot(values), since, modeNoTool)
  last = values.every(unchanging) && unchanging(modeNoTool) ? { values, since, modeNoTool, steps } : undefined
  return steps
}

/**
 * The steps {@link sharedSteps} made last, and what they were made of: runs
 * with the same option values (whatever object holds them) and the same
 * budget start share them, so a run builds no steps of its own. Sharing is
 * safe because the steps keep no state between calls (a run's state is its
 * chain), the object is frozen, and they are kept only when no value they
 * were made of can change afterwards ({@link unchanging}).
 */
let last: {
  readonly values: ReadonlyArray<unknown>
  readonly since: number
  readonly modeNoTool: NoToolPolicy.Policy | undefined
  readonly steps: RunSteps
} | undefined

/**
 * Whether steps made of `value` stay right for it: a value that cannot be
 * changed in place (a primitive, a function, a StopSignal, a Schedule, a
 * Duration, a frozen object). A plain object or array (a `toolTimeout` pair,
 * a `toolChoice` object, a no-tool `remind`) may be changed by its owner
 * between two runs, and the steps made of it hold what it said then.
 */
const unchanging = (value: unknown): boolean =>
  typeof value !== "object" || value === null || value instanceof SignalImpl || Schedule.isSchedule(value) ||
  Duration.isDuration(value) || Object.isFrozen(value)

/** The value of each option the steps read (`optionNames`), each read once, in that order. */
const read = (options: Options): ReadonlyArray<unknown> => optionNames.map((name) => options[name])

/** Whether two lists of option values (both in `optionNames`' order, so of the same length) are the same values. */
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

/**
 * The steps of {@link forRun} for `options` (read once already), frozen.
 * Options that pass the check are not checked again by each factory; those
 * that do not are, so that each step refuses them as its factory does.
 */
const build = (options: Options, since: number, modeNoTool: NoToolPolicy.Policy | undefined): RunSteps =>
  Object.freeze(validateOptions(options) === undefined ? whileChecked(options, () => fromFactories(options, since, modeNoTool)) : fromFactories(options, since, modeNoTool))

const fromFactories = (options: Options, since: number, modeNoTool: NoToolPolicy.Policy | undefined): RunSteps => {
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
const refusedSteps = (step: Step): RunSteps => Object.freeze({
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

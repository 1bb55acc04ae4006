/**
 * The one place that knows each option the loop reads: its declaration (with
 * its doc), its default and its rule. `Chain.run` checks its options here
 * before any model call, and every step factory (`Step.callLlmWith`,
 * `Step.checkMaxRuns`, …) and mode checks theirs here too, so a value from
 * JSON or JavaScript that breaks a rule is always answered with the same
 * `InvalidInput` naming the field.
 *
 * @internal
 */
import { type Duration, Schedule, Schema } from "effect"
import type { ChatModelError, ToolChoice } from "../ChatModel.ts"
import type * as DirectReturn from "../DirectReturn.ts"
import { InvalidInput } from "../LoopError.ts"
import type * as MaxRunsPolicy from "../MaxRunsPolicy.ts"
import type * as NoToolPolicy from "../NoToolPolicy.ts"
import type { StopSignal } from "./stopSignal.ts"
import * as ToolFailurePolicy from "../ToolFailurePolicy.ts"
import type { Chain } from "./chain.ts"
import { checkNoTool, checkReturnMemory, checkStop, isPositiveDuration, isPositiveInt, refusalOf } from "./checks.ts"
import { depthCeiling, storedLimits } from "./jsonBounds.ts"

/**
 * Options every built-in mode reads; `Mode.Options` re-exports it and the
 * steps' option types pick from it, so each option is declared once here,
 * defaulted once (`defaults`) and checked once (`validateOptions`).
 *
 * @internal
 */
export interface Options {
  /** Model calls allowed per run (default 25). */
  readonly maxRuns?: number | undefined
  /** Consecutive tool rounds with a failure allowed (default 3). */
  readonly maxFailures?: number | undefined
  /** Tool calls of one round run at once (default `"unbounded"`); results keep call order. */
  readonly concurrency?: number | "unbounded" | undefined
  /** Timeout of each call of a tool that declares none (`ToolTimeout`). */
  readonly toolTimeout?: Duration.Input | undefined
  /**
   * Tool-call arguments from the model nested deeper than this (default 64
   * levels, at most 512) are refused on arrival: the model gets a failed
   * result saying so and the handler never runs. With `output`, an answer
   * given as text is held to it too (re-asked like one that does not decode).
   */
  readonly maxArgumentDepth?: number | undefined
  /**
   * Tool-call arguments larger than this many characters of JSON (default
   * 1,000,000) are refused the same way, and so is a larger structured answer
   * given as text.
   */
  readonly maxArgumentSize?: number | undefined
  /** Passed to the model (default `"auto"`). */
  readonly toolChoice?: ToolChoice | undefined
  /** Retries a failed model call by this schedule (its input is the error). */
  readonly retry?: Schedule.Schedule<unknown, ChatModelError> | undefined
  /** Raising it pauses the run at the next clean point; interrupting it cuts running work short. */
  readonly stop?: StopSignal | undefined
  /** What to do when `maxRuns` is reached: `"fail"` (default), `"stop"`, `"final-answer"` or a handler (`MaxRunsPolicy`). */
  readonly onMaxRuns?: MaxRunsPolicy.Policy | undefined
  /** Per kind of failed call: feed back (default), fail, or repair (`ToolFailurePolicy`). */
  readonly onToolFailure?: ToolFailurePolicy.Options | undefined
  /** What a model answer without tool calls means (`NoToolPolicy`); the default depends on the mode. */
  readonly noTool?: NoToolPolicy.Policy | undefined
  /** What the chain keeps when a tool round ends the loop (`DirectReturn.Memory`, default `"results"`). */
  readonly returnMemory?: DirectReturn.Memory | undefined
  /** `Mode.step` only: keep stepping while it returns true. */
  readonly shouldContinue?: ((chain: Chain) => boolean) | undefined
}

/**
 * The default of every option that has one.
 *
 * @internal
 */
export const defaults = {
  maxRuns: 25,
  maxFailures: 3,
  concurrency: "unbounded" as number | "unbounded",
  toolChoice: "auto" as ToolChoice,
  onMaxRuns: "fail" as MaxRunsPolicy.Policy,
  returnMemory: "results" as DirectReturn.Memory,
  maxArgumentDepth: 64,
  maxArgumentSize: 1_000_000
} as const

const isMaxRunsPolicy = (u: unknown): boolean =>
  u === "fail" || u === "stop" || u === "final-answer" || typeof u === "function" ||
  (typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "FinalAnswer" &&
    typeof (u as { instruction?: unknown }).instruction === "string")

const isFailurePolicy = (u: unknown): boolean => u === "feed-back" || u === "fail" || typeof u === "function"

const checkOnToolFailure = (value: unknown): InvalidInput | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new InvalidInput({ field: "onToolFailure", rule: "must be an object of policies by failure kind", value })
  }
  for (const [key, policy] of Object.entries(value)) {
    if (policy === undefined) continue
    if (key === "format") {
      if (typeof policy !== "function") {
        return new InvalidInput({ field: "onToolFailure.format", rule: "must be a function of the failure", value: policy })
      }
      continue
    }
    if (!(ToolFailurePolicy.kinds as ReadonlyArray<string>).includes(key)) {
      return new InvalidInput({
        field: `onToolFailure.${key}`,
        rule: `is not a failure kind; use one of ${ToolFailurePolicy.kinds.join(", ")} (or format)`,
        value: policy
      })
    }
    if (!isFailurePolicy(policy)) {
      return new InvalidInput({
        field: `onToolFailure.${key}`,
        rule: "must be \"feed-back\", \"fail\" or a repair function",
        value: policy
      })
    }
  }
  return undefined
}

const isToolChoice = Schema.is(Schema.Union([
  Schema.Literals(["auto", "none", "required"]),
  Schema.Struct({ tool: Schema.String }),
  Schema.Struct({ mode: Schema.optionalKey(Schema.Literals(["auto", "required"])), oneOf: Schema.Array(Schema.String) })
]))

/** A rule for one option: its problem, for a value that is not `undefined`. */
type Rule = (value: unknown) => InvalidInput | undefined

const rule = (field: string, holds: (value: unknown) => boolean, says: string): Rule => (value) =>
  holds(value) ? undefined : new InvalidInput({ field, rule: says, value })

const durationRule = "must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds)"

/** Each option's rule, in the order problems are reported. */
const rules: ReadonlyArray<readonly [keyof Options, Rule]> = [
  ["maxRuns", rule("maxRuns", isPositiveInt, "must be a positive integer")],
  ["maxFailures", rule("maxFailures", isPositiveInt, "must be a positive integer")],
  ["concurrency", rule("concurrency", (u) => u === "unbounded" || isPositiveInt(u), "must be a positive integer or \"unbounded\"")],
  [
    "maxArgumentDepth",
    rule("maxArgumentDepth", (u) => isPositiveInt(u) && (u as number) <= depthCeiling, `must be a positive integer, at most ${depthCeiling}`)
  ],
  [
    "maxArgumentSize",
    rule(
      "maxArgumentSize",
      (u) => isPositiveInt(u) && (u as number) <= storedLimits.maxSize,
      `must be a positive integer (characters of JSON), at most ${storedLimits.maxSize}`
    )
  ],
  ["shouldContinue", rule("shouldContinue", (u) => typeof u === "function", "must be a function of the chain")],
  ["toolTimeout", rule("toolTimeout", isPositiveDuration, durationRule)],
  [
    "toolChoice",
    rule("toolChoice", isToolChoice, "must be \"auto\", \"none\", \"required\", { tool: name } or { oneOf: [names], mode? }")
  ],
  [
    "retry",
    (u) =>
      Schedule.isSchedule(u)
        ? refusalOf(u)
        : new InvalidInput({ field: "retry", rule: "must be a Schedule (e.g. Schedule.recurs(3))", value: u })
  ],
  ["stop", (u) => checkStop(u, "stop")],
  [
    "onMaxRuns",
    rule(
      "onMaxRuns",
      isMaxRunsPolicy,
      "must be \"fail\", \"stop\", \"final-answer\", MaxRunsPolicy.finalAnswer(text) or a handler function"
    )
  ],
  ["onToolFailure", checkOnToolFailure],
  ["noTool", (u) => checkNoTool(u, "noTool")],
  ["returnMemory", (u) => checkReturnMemory(u, "returnMemory")]
]

/**
 * The name of every option a built-in mode reads, in the order problems are
 * reported.
 *
 * @internal
 */
export const optionNames: ReadonlyArray<keyof Options> = rules.map(([name]) => name)

/** The options `Chain.run` checked and is handing to its mode right now (see {@link whileChecked}). */
let checkedNow: object | undefined

/**
 * Runs `f` (the synchronous construction of a run's mode, its steps bound to
 * `options`) with `options` known to be checked already, so the mode and the
 * step factories it calls with the same object do not check it again.
 *
 * @internal
 */
export const whileChecked = <A>(options: object, f: () => A): A => {
  const before = checkedNow
  checkedNow = options
  try {
    return f()
  } finally {
    checkedNow = before
  }
}

/**
 * Checks the options every built-in mode reads; returns the first problem.
 * A caller whose options may not be an object checks `checkObject` first.
 *
 * @internal
 */
export const validateOptions = (options: Options): InvalidInput | undefined => {
  if (options === checkedNow) return undefined
  for (const [field, check] of rules) {
    const value: unknown = options[field]
    if (value === undefined) continue
    const problem = check(value)
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * The one place that knows the rule of each option the loop reads: `Chain.run`
 * checks its options here before any model call, and every step factory
 * (`Step.callLlmWith`, `Step.checkMaxRuns`, …) and `Mode.untilToolUsed` check
 * theirs here too, so a value from JSON or JavaScript that breaks a rule is
 * always answered with the same `InvalidInput` naming the field.
 *
 * @internal
 */
import { Duration, Schedule, Schema } from "effect"
import type { ChatModelError, ToolChoice } from "../ChatModel.ts"
import type * as DirectReturn from "../DirectReturn.ts"
import type * as MaxRunsPolicy from "../MaxRunsPolicy.ts"
import type { StopSignal } from "../StopSignal.ts"
import type { Chain } from "./chain.ts"
import type { Toolkit } from "effect/ai"
import { InvalidInput } from "../LoopError.ts"
import { depthCeiling, storedLimits } from "./jsonBounds.ts"
import * as NoToolPolicy from "../NoToolPolicy.ts"
import { PauseReason } from "../Outcome.ts"
import { isStopSignal, problemOf as signalProblem } from "../StopSignal.ts"
import * as ToolFailurePolicy from "../ToolFailurePolicy.ts"
import * as ToolTimeout from "../ToolTimeout.ts"

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
   * result saying so and the handler never runs.
   */
  readonly maxArgumentDepth?: number | undefined
  /** Tool-call arguments larger than this many characters of JSON (default 1,000,000) are refused the same way. */
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

/** @internal */
export const isPositiveInt = (u: unknown): boolean => typeof u === "number" && Number.isInteger(u) && u > 0

/** @internal */
export const isNonNegativeInt = (u: unknown): boolean => typeof u === "number" && Number.isInteger(u) && u >= 0

/** @internal */
export const isPositiveDuration = (u: unknown): boolean => {
  try {
    const duration = Duration.fromInputUnsafe(u as Duration.Input)
    return Duration.isGreaterThan(duration, Duration.zero)
  } catch {
    return false
  }
}

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

/**
 * Values built by a constructor that cannot throw (`ModelRetry.schedule`
 * given bad options), with the problem to report when they are used.
 */
const refusedValues = new WeakMap<object, InvalidInput>()

/**
 * Records that `value` was built from bad input: option validation reports
 * `problem` wherever the value is given (e.g. as `retry`).
 *
 * @internal
 */
export const refuse = <A extends object>(value: A, problem: InvalidInput): A => {
  refusedValues.set(value, problem)
  return value
}

/**
 * An options argument must be an object (or, where the argument is optional,
 * `undefined`).
 *
 * @internal
 */
export const checkObject = (value: unknown, field: string, optional = false): InvalidInput | undefined =>
  (optional && value === undefined) || (typeof value === "object" && value !== null && !Array.isArray(value))
    ? undefined
    : new InvalidInput({ field, rule: "must be an object of options", value })

/** @internal */
export const checkFunction = (value: unknown, field: string, rule: string): InvalidInput | undefined =>
  typeof value === "function" ? undefined : new InvalidInput({ field, rule, value })

/**
 * Tool names (`Mode.untilToolUsed`, `Step.checkUntilTool`): one name or an
 * array of names.
 *
 * @internal
 */
export const checkToolNames = (value: unknown, field: string): InvalidInput | undefined => {
  if (typeof value === "string") return undefined
  if (!Array.isArray(value)) {
    return new InvalidInput({ field, rule: "must be a tool name or an array of tool names", value })
  }
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== "string") {
      return new InvalidInput({ field: `${field}[${i}]`, rule: "must be a tool name (a string)", value: value[i] })
    }
  }
  return undefined
}

/** @internal */
export const checkStop = (value: unknown, field: string): InvalidInput | undefined =>
  isStopSignal(value)
    ? signalProblem(value)
    : new InvalidInput({ field, rule: "must be a StopSignal (yield* StopSignal.make)", value })

/** @internal */
export const checkNoTool = (value: unknown, field: string): InvalidInput | undefined => {
  if (value === "") return new InvalidInput({ field, rule: "a reminder must not be empty", value })
  return typeof value === "function" || NoToolPolicy.isDecision(value) ? undefined : new InvalidInput({
    field,
    rule:
      "must be \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text), NoToolPolicy.result(value) or a function",
    value
  })
}

/** @internal */
export const checkReturnMemory = (value: unknown, field: string): InvalidInput | undefined =>
  value === undefined || value === "results" || value === "answer" || value === "placeholder"
    ? undefined
    : new InvalidInput({ field, rule: "must be \"results\", \"answer\" or \"placeholder\"", value })

/** `Step.checkMaxRuns`' `since`: a `runCount`. @internal */
export const checkSince = (value: unknown): InvalidInput | undefined =>
  value === undefined || isNonNegativeInt(value)
    ? undefined
    : new InvalidInput({ field: "since", rule: "must be a whole number, at least 0 (a chain's runCount)", value })

const isPauseReason = Schema.is(PauseReason)

/** @internal */
export const checkPauseReason = (value: unknown, field: string): InvalidInput | undefined =>
  isPauseReason(value) ? undefined : new InvalidInput({
    field,
    rule: "must be a pause reason ({ _tag: \"StopRequested\" }, { _tag: \"Requested\", message }, …)",
    value
  })

const isToolChoice = Schema.is(Schema.Union([
  Schema.Literals(["auto", "none", "required"]),
  Schema.Struct({ tool: Schema.String }),
  Schema.Struct({ mode: Schema.optionalKey(Schema.Literals(["auto", "required"])), oneOf: Schema.Array(Schema.String) })
]))

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
 * A caller whose options may not be an object checks {@link checkObject}
 * first.
 *
 * @internal
 */
export const validateOptions = (options: Options): InvalidInput | undefined => {
  if (options === checkedNow) return undefined
  if (options.maxRuns !== undefined && !isPositiveInt(options.maxRuns)) {
    return new InvalidInput({ field: "maxRuns", rule: "must be a positive integer", value: options.maxRuns })
  }
  if (options.maxFailures !== undefined && !isPositiveInt(options.maxFailures)) {
    return new InvalidInput({ field: "maxFailures", rule: "must be a positive integer", value: options.maxFailures })
  }
  if (options.concurrency !== undefined && options.concurrency !== "unbounded" && !isPositiveInt(options.concurrency)) {
    return new InvalidInput({
      field: "concurrency",
      rule: "must be a positive integer or \"unbounded\"",
      value: options.concurrency
    })
  }
  if (
    options.maxArgumentDepth !== undefined &&
    !(isPositiveInt(options.maxArgumentDepth) && options.maxArgumentDepth <= depthCeiling)
  ) {
    return new InvalidInput({
      field: "maxArgumentDepth",
      rule: `must be a positive integer, at most ${depthCeiling}`,
      value: options.maxArgumentDepth
    })
  }
  if (
    options.maxArgumentSize !== undefined &&
    !(isPositiveInt(options.maxArgumentSize) && options.maxArgumentSize <= storedLimits.maxSize)
  ) {
    return new InvalidInput({
      field: "maxArgumentSize",
      rule: `must be a positive integer (characters of JSON), at most ${storedLimits.maxSize}`,
      value: options.maxArgumentSize
    })
  }
  if (options.shouldContinue !== undefined && typeof options.shouldContinue !== "function") {
    return new InvalidInput({ field: "shouldContinue", rule: "must be a function of the chain", value: options.shouldContinue })
  }
  if (options.toolTimeout !== undefined && !isPositiveDuration(options.toolTimeout)) {
    return new InvalidInput({
      field: "toolTimeout",
      rule: "must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds)",
      value: options.toolTimeout
    })
  }
  if (options.toolChoice !== undefined && !isToolChoice(options.toolChoice)) {
    return new InvalidInput({
      field: "toolChoice",
      rule: "must be \"auto\", \"none\", \"required\", { tool: name } or { oneOf: [names], mode? }",
      value: options.toolChoice
    })
  }
  if (options.retry !== undefined) {
    if (!Schedule.isSchedule(options.retry)) {
      return new InvalidInput({ field: "retry", rule: "must be a Schedule (e.g. Schedule.recurs(3))", value: options.retry })
    }
    const problem = refusedValues.get(options.retry)
    if (problem !== undefined) return problem
  }
  if (options.stop !== undefined) {
    const invalid = checkStop(options.stop, "stop")
    if (invalid !== undefined) return invalid
  }
  if (options.onMaxRuns !== undefined && !isMaxRunsPolicy(options.onMaxRuns)) {
    return new InvalidInput({
      field: "onMaxRuns",
      rule: "must be \"fail\", \"stop\", \"final-answer\", MaxRunsPolicy.finalAnswer(text) or a handler function",
      value: options.onMaxRuns
    })
  }
  if (options.onToolFailure !== undefined) {
    const invalid = checkOnToolFailure(options.onToolFailure)
    if (invalid !== undefined) return invalid
  }
  if (options.noTool !== undefined) {
    const invalid = checkNoTool(options.noTool, "noTool")
    if (invalid !== undefined) return invalid
  }
  return checkReturnMemory(options.returnMemory, "returnMemory")
}

/**
 * `true` when `u` is an effect/ai `Toolkit` (a JavaScript caller may pass
 * anything).
 *
 * @internal
 */
export const isToolkit = (u: unknown): u is Toolkit.Any => {
  // A toolkit made by Toolkit.make is a function (it can be yielded); Toolkit.empty an object.
  if ((typeof u !== "object" && typeof u !== "function") || u === null) return false
  if (!("~effect/ai/Toolkit" in u) || !Object.hasOwn(u, "tools")) return false
  const tools: unknown = (u as unknown as { readonly tools: unknown }).tools
  return typeof tools === "object" && tools !== null
}

/**
 * Checks what the tools of a toolkit declare for the loop (their timeouts).
 *
 * @internal
 */
export const validateToolkit = (toolkit: Toolkit.Any): InvalidInput | undefined => {
  for (const tool of Object.values(toolkit.tools)) {
    if ((typeof tool !== "object" && typeof tool !== "function") || tool === null || !("~effect/ai/Tool" in tool)) {
      return new InvalidInput({ field: "chain.toolkit", rule: "must hold effect/ai Tools (Tool.make(...))", value: tool })
    }
    const timeout = ToolTimeout.of(tool)
    if (timeout !== undefined && !isPositiveDuration(timeout)) {
      return new InvalidInput({
        field: `ToolTimeout of tool '${tool.name}'`,
        rule: "must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds)",
        value: timeout
      })
    }
  }
  return undefined
}

import { Duration, Schedule } from "effect"
import type { Toolkit } from "effect/ai"
import { InvalidInput } from "../LoopError.ts"
import { depthCeiling, storedLimits } from "./jsonBounds.ts"
import type { Options } from "../Mode.ts"
import * as NoToolPolicy from "../NoToolPolicy.ts"
import { isStopSignal } from "../StopSignal.ts"
import * as ToolFailurePolicy from "../ToolFailurePolicy.ts"
import * as ToolTimeout from "../ToolTimeout.ts"

/** @internal */
export const defaults = {
  maxRuns: 25,
  maxFailures: 3,
  concurrency: "unbounded" as number | "unbounded"
}

/** @internal */
export const isPositiveInt = (u: unknown): boolean => typeof u === "number" && Number.isInteger(u) && u > 0

const isPositiveDuration = (u: unknown): boolean => {
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
 * Checks the options every built-in mode reads; returns the first problem.
 *
 * @internal
 */
export const validateOptions = (options: Options): InvalidInput | undefined => {
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
  if (options.retry !== undefined && !Schedule.isSchedule(options.retry)) {
    return new InvalidInput({ field: "retry", rule: "must be a Schedule (e.g. Schedule.recurs(3))", value: options.retry })
  }
  if (options.stop !== undefined && !isStopSignal(options.stop)) {
    return new InvalidInput({ field: "stop", rule: "must be a StopSignal (yield* StopSignal.make)", value: options.stop })
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
  if (options.noTool === "") {
    return new InvalidInput({ field: "noTool", rule: "a reminder must not be empty", value: options.noTool })
  }
  if (options.noTool !== undefined && typeof options.noTool !== "function" && !NoToolPolicy.isDecision(options.noTool)) {
    return new InvalidInput({
      field: "noTool",
      rule:
        "must be \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text), NoToolPolicy.result(value) or a function",
      value: options.noTool
    })
  }
  if (
    options.returnMemory !== undefined && options.returnMemory !== "results" && options.returnMemory !== "answer" &&
    options.returnMemory !== "placeholder"
  ) {
    return new InvalidInput({
      field: "returnMemory",
      rule: "must be \"results\", \"answer\" or \"placeholder\"",
      value: options.returnMemory
    })
  }
  return undefined
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

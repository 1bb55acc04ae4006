/**
 * The rules of single values the loop is handed (from TypeScript, JSON or
 * JavaScript): numbers, durations, tool names, stop signals, policies,
 * toolkits, and the registry of values built from bad input. `options.ts`
 * applies them to a run's options; step factories to their arguments.
 *
 * @internal
 */
import { Duration, Schema } from "effect"
import type * as Toolkit from "effect/ai/Toolkit"
import { InvalidInput } from "../LoopError.ts"
import * as NoToolPolicy from "../NoToolPolicy.ts"
import { PauseReason } from "../Outcome.ts"
import { problemOf as signalProblem, SignalImpl } from "./stopSignal.ts"
import * as ReturnBehavior from "../ReturnBehavior.ts"
import * as ToolTimeout from "../ToolTimeout.ts"
import { thrownMessage } from "./errorText.ts"

/** @internal */
export const isPositiveInt = (u: unknown): u is number => typeof u === "number" && Number.isInteger(u) && u > 0

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

/**
 * Values built by a constructor that cannot throw (`ModelRetry.schedule`
 * given bad options), with the problem to report when they are used.
 */
const refusedValues = new WeakMap<object, InvalidInput>()

/** @internal the problem `value` was built with, if it was built from bad input */
export const refusalOf = (value: object): InvalidInput | undefined => refusedValues.get(value)

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

/**
 * `check()`, with a read that throws (a getter, a revoked proxy from
 * JavaScript) becoming an `InvalidInput` on `field` instead of a defect.
 *
 * @internal
 */
export const readably = (field: string, check: () => InvalidInput | undefined): InvalidInput | undefined => {
  try {
    return check()
  } catch (error) {
    return new InvalidInput({
      field,
      rule: `must be an object of options whose fields can be read (reading it threw: ${thrownMessage(error)})`,
      value: "(not shown)"
    })
  }
}

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
  value instanceof SignalImpl
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

/**
 * `true` when `u` is an effect/ai `Toolkit` (a JavaScript caller may pass
 * anything).
 *
 * @internal
 */
export const isToolkit = (u: unknown): u is Toolkit.Any => {
  // A toolkit made by Toolkit.make is a function (it can be yielded); Toolkit.empty an object.
  if ((typeof u !== "object" && typeof u !== "function") || u === null) return false
  try {
    if (!("~effect/ai/Toolkit" in u) || !Object.hasOwn(u, "tools")) return false
    const tools: unknown = (u as unknown as { readonly tools: unknown }).tools
    return typeof tools === "object" && tools !== null
  } catch {
    // A revoked Proxy, a getter that throws: not a toolkit to use.
    return false
  }
}

/**
 * Checks what the tools of a toolkit declare for the loop (their timeouts).
 *
 * @internal
 */
export const validateToolkit = (toolkit: Toolkit.Any): InvalidInput | undefined => {
  // A toolkit is checked once (like its compiled form, `tools/compile.ts`): every run of a chain repeats it.
  if (validToolkits.has(toolkit)) return undefined
  const problem = toolkitProblem(toolkit)
  if (problem === undefined) validToolkits.add(toolkit)
  return problem
}

/** Toolkits that passed {@link validateToolkit}. */
const validToolkits = new WeakSet<Toolkit.Any>()

const toolkitProblem = (toolkit: Toolkit.Any): InvalidInput | undefined => {
  for (const tool of Object.values(toolkit.tools)) {
    if ((typeof tool !== "object" && typeof tool !== "function") || tool === null || !("~effect/ai/Tool" in tool)) {
      return new InvalidInput({ field: "chain.toolkit", rule: "must hold effect/ai Tools (Tool.make(...))", value: tool })
    }
    const behavior: unknown = ReturnBehavior.of(tool)
    if (behavior !== "TO_LLM" && behavior !== "IMMEDIATE" && behavior !== "IMMEDIATE_IF_LAST") {
      // From JavaScript anything can be annotated; an unknown value must not end runs as "IMMEDIATE" would.
      return new InvalidInput({
        field: `ReturnBehavior of tool '${tool.name}'`,
        rule: "must be \"TO_LLM\", \"IMMEDIATE\" or \"IMMEDIATE_IF_LAST\"",
        value: behavior
      })
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

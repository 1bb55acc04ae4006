import { InvalidInput } from "../LoopError.ts"
import type { Options } from "../Mode.ts"

/** @internal */
export const defaults = {
  maxRuns: 25,
  maxFailures: 3,
  concurrency: "unbounded" as number | "unbounded"
}

const isPositiveInt = (u: unknown): boolean => typeof u === "number" && Number.isInteger(u) && u > 0

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
  if (options.shouldContinue !== undefined && typeof options.shouldContinue !== "function") {
    return new InvalidInput({ field: "shouldContinue", rule: "must be a function of the chain", value: options.shouldContinue })
  }
  return undefined
}

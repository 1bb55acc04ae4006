/**
 * Retrying failed model calls the way providers ask to be retried: with
 * exponential backoff, never sooner than the provider's `retry-after`, and
 * not at all when the failure cannot pass by itself (a 400 stays a 400).
 *
 * Pass the schedule as the `retry` option of a run (or of `Step.callLlmWith`);
 * any other `Schedule` works there too.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Schedule } from "effect"
import type { ChatModelError } from "./ChatModel.ts"
import { isNonNegativeInt, isPositiveDuration, readably, refuse } from "./internal/checks.ts"
import { InvalidInput } from "./LoopError.ts"

/**
 * Options of {@link schedule}.
 *
 * - `times`: retries after the first attempt (default 3).
 * - `base`: the first delay, doubled each retry (default 500 ms).
 * - `max`: the longest backoff delay (default 30 s); a longer `retry-after`
 *   from the provider still wins, up to `maxRetryAfter`.
 * - `maxRetryAfter`: the longest `retry-after` a provider may ask for
 *   (default 5 minutes). A provider that asks for longer (an hour, or a
 *   `retry-after` of 1e308 seconds) is not waited for: the call fails with
 *   its error, whose `retryAfterMillis` says when to come back.
 *
 * @example
 * ```ts
 * import { ModelRetry } from "loopwork"
 *
 * const options: ModelRetry.Options = { times: 5, base: "1 second" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly times?: number | undefined
  readonly base?: Duration.Input | undefined
  readonly max?: Duration.Input | undefined
  readonly maxRetryAfter?: Duration.Input | undefined
}

/**
 * Whether retrying can help: false only when the provider said so
 * (`retryable: false`, e.g. HTTP 400). A scripted model running out of turns
 * is not retried either.
 *
 * @example
 * ```ts
 * import { LoopError, ModelRetry } from "loopwork"
 *
 * ModelRetry.isRetryable(new LoopError.ModelCallFailed({ description: "bad request", cause: undefined, status: 400, retryable: false }))
 * // false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isRetryable = (error: ChatModelError): boolean =>
  error._tag === "ModelCallFailed" && error.retryable !== false

/**
 * How long the provider asked to wait before the next attempt (zero when it
 * did not say).
 *
 * @example
 * ```ts
 * import { LoopError, ModelRetry } from "loopwork"
 *
 * ModelRetry.retryAfter(new LoopError.ModelCallFailed({ description: "slow down", cause: undefined, retryAfterMillis: 1500 }))
 * // Duration.millis(1500)
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const retryAfter = (error: ChatModelError): Duration.Duration => {
  const millis = error._tag === "ModelCallFailed" ? error.retryAfterMillis : undefined
  // From a provider: NaN or a negative wait is no wait; an endless one stays endless (and is not waited for).
  return millis === undefined || !(millis > 0) ? Duration.zero : Duration.millis(millis)
}

/** The first problem of `schedule`'s options, if any. */
const optionsProblem = (options: unknown): InvalidInput | undefined => {
  if (options === undefined) return undefined
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    return new InvalidInput({ field: "ModelRetry.schedule options", rule: "must be an object { times?, base?, max?, maxRetryAfter? }", value: options })
  }
  const { base, max, maxRetryAfter, times } = options as Options
  if (times !== undefined && !isNonNegativeInt(times)) {
    return new InvalidInput({ field: "ModelRetry.schedule times", rule: "must be a whole number of retries, at least 0", value: times })
  }
  for (const [field, value] of [["base", base], ["max", max], ["maxRetryAfter", maxRetryAfter]] as const) {
    if (value !== undefined && !isPositiveDuration(value)) {
      return new InvalidInput({
        field: `ModelRetry.schedule ${field}`,
        rule: "must be a positive duration (e.g. \"500 millis\" or 500 for milliseconds)",
        value
      })
    }
  }
  return undefined
}

/**
 * Exponential backoff (`base`, doubled each time, at most `max`) for up to
 * `times` retries; each delay is at least the provider's `retry-after`, and
 * failures that are not retryable end the retries at once.
 *
 * Options from JSON or JavaScript are checked, but the constructor does not
 * throw: given bad options (`null`, `times: "x"`, `max: "soon"`) it returns a
 * schedule that never retries, and `Chain.run` (or the step it is given to:
 * `Step.callLlmWith`, `Step.checkMaxRuns`) refuses it as `retry` with an
 * `InvalidInput` naming the option (`ModelRetry.schedule times`) before any
 * model call.
 *
 * @example
 * ```ts
 * import { Chain, Mode, ModelRetry } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const run = Chain.run(chain, { mode: Mode.whileNeedsResponse, retry: ModelRetry.schedule({ times: 4 }) })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const schedule = (options?: Options): Schedule.Schedule<Duration.Duration, ChatModelError> => {
  const problem = readably("ModelRetry.schedule options", () => optionsProblem(options))
  if (problem !== undefined) {
    const never: Schedule.Schedule<Duration.Duration, ChatModelError> = Schedule.exponential("500 millis").pipe(
      Schedule.while(() => false)
    )
    return refuse(never, problem)
  }
  const times = options?.times ?? 3
  const max = Duration.fromInputUnsafe(options?.max ?? "30 seconds")
  const longest = Duration.fromInputUnsafe(options?.maxRetryAfter ?? "5 minutes")
  const backoff: Schedule.Schedule<Duration.Duration, ChatModelError> = Schedule.exponential(options?.base ?? "500 millis")
  return backoff.pipe(
    Schedule.while(({ attempt, input }) =>
      attempt <= times && isRetryable(input) && Duration.isLessThanOrEqualTo(retryAfter(input), longest)
    ),
    Schedule.modifyDelay(({ duration, input }) => Effect.succeed(Duration.max(Duration.min(duration, max), retryAfter(input))))
  )
}

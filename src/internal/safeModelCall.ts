/**
 * A model's call held to the model's contract, whatever a model written in
 * JavaScript does: `generate` that throws, dies, returns no Effect, fails
 * with something that is not one of the model's errors, or answers with
 * something that is not a list of response parts gives `ModelCallFailed`
 * (the run then ends with the chain, or retries); so does a retry schedule
 * that throws. An interruption goes on.
 *
 * @internal
 */
import { Cause, Effect, type Exit, type Schedule } from "effect"
import type * as Response from "effect/ai/Response"
import type { ChatModelError } from "./chatModel.ts"
import { ModelCallFailed, ScriptExhausted } from "../LoopError.ts"
import { isSucceeded } from "./complete.ts"
import { describe } from "./describe.ts"
import { thrownMessage } from "./errorText.ts"
import { redactedShort } from "./redact.ts"

/** The failure of a model (or client) that threw or died. */
const failedUnexpectedly = (defect: unknown): ModelCallFailed =>
  new ModelCallFailed({ description: `the model failed unexpectedly: ${thrownMessage(defect, 1_000)}`, cause: defect })

/**
 * `attempt`, with a model (or client) that throws or dies failing the call
 * instead: the run then ends with the chain, or retries.
 */
export const safely = (
  attempt: () => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => Effect.suspend(() => safelyNow(attempt))

/**
 * {@link safely}, with `attempt` called now, not when the effect runs: for a
 * call made once (no retry) by a caller that is itself running.
 */
export const safelyNow = (
  attempt: () => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  let answered: Effect.Effect<ReadonlyArray<Response.AnyPart>, unknown>
  try {
    const effect: unknown = attempt()
    // Inside the try: a JavaScript model's revoked Proxy throws on this read too.
    if (!Effect.isEffect(effect)) return Effect.fail(failedUnexpectedly(new Error(noEffect(effect))))
    answered = effect as Effect.Effect<ReadonlyArray<Response.AnyPart>, unknown>
  } catch (defect) {
    return Effect.fail(failedUnexpectedly(defect))
  }
  // A complete success has no failure to classify: passed on as it is, still complete.
  return succeededNow(answered) ? answered as Exit.Success<ReadonlyArray<Response.AnyPart>> : Effect.catchCause(answered, classified)
}

/** Whether `effect` is a successful Exit; an effect whose prototype cannot be read (a Proxy) is run like every other. */
const succeededNow = (effect: Effect.Effect<unknown, unknown>): boolean => {
  try {
    return isSucceeded(effect)
  } catch {
    return false
  }
}

/**
 * @internal the failure of a call whose answer cannot be used (`problem`,
 * from `Arrival.received`): not retried, since the same model would answer
 * the same way. Checked where the answer is read (the loop's `callLlm`, an
 * observed attempt), so that no call pays a step of the runtime for it.
 */
export const unusableAnswer = (problem: string): ModelCallFailed =>
  new ModelCallFailed({ description: problem, cause: undefined, retryable: false })

const noEffect = (made: unknown): string =>
  `the model's generate returned ${made instanceof Promise ? "a Promise" : "something"} that is not an Effect`

/**
 * A model's failure as the loop takes it: its own errors as they are, any
 * other failure (a JavaScript model's `Error`) or a defect as
 * `ModelCallFailed`; an interruption goes on.
 */
const classified = (cause: Cause.Cause<unknown>): Effect.Effect<never, ChatModelError> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const found = Cause.findError(cause)
  if (found._tag === "Success") {
    return isChatModelError(found.success) ? Effect.failCause(cause as Cause.Cause<ChatModelError>) : Effect.fail(failedWith(found.success))
  }
  return Effect.fail(failedUnexpectedly(Cause.squash(cause)))
}

/**
 * A failure that is not one of the model's errors (a JavaScript model's
 * `Error`, or a `ModelCallFailed` of another copy of loopwork), as one: the
 * look-alike's `status`, `retryAfterMillis` and `retryable` are kept when
 * they have their types; anything else is not retried (unlike a defect, a
 * failure is the model's answer, and an HTTP 401 will not pass).
 */
const failedWith = (error: unknown): ModelCallFailed => {
  const kept: { status?: number; retryAfterMillis?: number; retryable?: boolean } = {}
  let said: unknown
  try {
    if (typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "ModelCallFailed") {
      const { description, retryAfterMillis, retryable, status } = error as Partial<Record<string, unknown>>
      if (typeof status === "number" && Number.isSafeInteger(status)) kept.status = status
      if (typeof retryAfterMillis === "number") kept.retryAfterMillis = retryAfterMillis
      if (typeof retryable === "boolean") kept.retryable = retryable
      said = description
    }
  } catch {
    // a value that cannot be read: described below as it can be
  }
  const description = redactedShort(typeof said === "string" ? said : describe(error), 1_000)
  return new ModelCallFailed({ description: `the model failed: ${description}`, cause: error, retryable: false, ...kept })
}

/** Whether `error` is one of a model's own errors; a revoked proxy is not. */
const isChatModelError = (error: unknown): error is ChatModelError => {
  try {
    return error instanceof ModelCallFailed || error instanceof ScriptExhausted
  } catch {
    return false
  }
}

/** A defect of an attempt itself (not of the schedule), carried past the retry as it was. */
class OfAttempt {
  readonly defect: unknown
  constructor(defect: unknown) {
    this.defect = defect
  }
}

/**
 * `once` retried by `retry`. A schedule that throws or dies (a JavaScript
 * predicate) fails the call with `ModelCallFailed` rather than the run with
 * a defect; a defect of an attempt (an observer's, say) goes on as it was.
 */
export const retrying = (
  once: Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>,
  retry: Schedule.Schedule<unknown, ChatModelError>,
  observed: boolean
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  // An unobserved attempt (`safely`) never dies: only an observed one, whose events may, is marked.
  const marked = observed ? Effect.catchDefect(once, (defect) => Effect.die(new OfAttempt(defect))) : once
  return Effect.catchDefect(Effect.retry(marked, retry), (defect) =>
    defect instanceof OfAttempt ? Effect.die(defect.defect) : Effect.fail(
      new ModelCallFailed({
        description: `the retry schedule failed unexpectedly: ${thrownMessage(defect, 1_000)}`,
        cause: defect,
        retryable: false
      })
    ))
}

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
import { Cause, Effect, Exit, type Schedule } from "effect"
import type { Response } from "effect/ai"
import type { ChatModelError } from "./chatModel.ts"
import { ModelCallFailed, ScriptExhausted } from "../LoopError.ts"
import { messageOf } from "./describe.ts"
import * as Arrival from "./arrival.ts"

/** The failure of a model (or client) that threw or died. */
const failedUnexpectedly = (defect: unknown): ModelCallFailed =>
  new ModelCallFailed({ description: `the model failed unexpectedly: ${messageOf(defect)}`, cause: defect })

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
  let effect: unknown
  try {
    effect = attempt()
  } catch (defect) {
    return Effect.fail(failedUnexpectedly(defect))
  }
  if (!Effect.isEffect(effect)) return Effect.fail(failedUnexpectedly(new Error(noEffect(effect))))
  // An answer already complete (an Exit) is checked now, with no step of the runtime.
  const answered = effect as Effect.Effect<unknown, unknown>
  const shaped: Effect.Effect<ReadonlyArray<Response.AnyPart>, unknown> = Exit.isExit(answered)
    ? Exit.isSuccess(answered) ? partsOrFailure(answered.value, answered) : answered as Exit.Exit<never, unknown>
    : Effect.flatMap(answered, (parts) => partsOrFailure(parts, undefined))
  return Effect.catchCause(shaped, classified)
}

/**
 * `answer` when it has the shape of a response (an array of objects, each
 * with a string `type`; what is inside is checked where it is read), else a
 * `ModelCallFailed` saying so. `done` is `answer` already as an Exit.
 */
const partsOrFailure = (
  answer: unknown,
  done: Exit.Exit<unknown, unknown> | undefined
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelCallFailed> => {
  const problem = Arrival.shapeProblem(answer)
  if (problem === undefined) return (done ?? Effect.succeed(answer)) as Effect.Effect<ReadonlyArray<Response.AnyPart>>
  return Effect.fail(new ModelCallFailed({ description: `the model answered with ${problem}`, cause: undefined, retryable: false }))
}

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
    return isChatModelError(found.success) ? Effect.failCause(cause as Cause.Cause<ChatModelError>) : Effect.fail(failedUnexpectedly(found.success))
  }
  return Effect.fail(failedUnexpectedly(Cause.squash(cause)))
}

/** Whether `error` is one of a model's own errors; a revoked proxy is not. */
const isChatModelError = (error: unknown): error is ChatModelError => {
  try {
    return error instanceof ModelCallFailed || error instanceof ScriptExhausted
  } catch {
    return false
  }
}

/**
 * `once` retried by `retry`. A schedule that throws or dies (a JavaScript
 * predicate) fails the call with `ModelCallFailed` rather than the run with
 * a defect: every defect of the model itself is a failure already.
 */
export const retrying = (
  once: Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>,
  retry: Schedule.Schedule<unknown, ChatModelError>
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> =>
  Effect.catchDefect(Effect.retry(once, retry), (defect) =>
    Effect.fail(
      new ModelCallFailed({
        description: `the retry schedule failed unexpectedly: ${messageOf(defect)}`,
        cause: defect,
        retryable: false
      })
    ))

/**
 * A failed tool call under the run's `onToolFailure` policy: fed back to the
 * model (with the policy's `format`, if any), recorded so the run fails, or
 * handed to a repair function that may retry the call with new arguments or
 * succeed with a result of its own. Every failure ends as something the
 * round can keep: a failure never escapes a call.
 *
 * @internal
 */
import { Effect } from "effect"
import type { FailureOrigin, ToolCall, ToolResult } from "../../ToolCall.ts"
import * as ToolFailurePolicy from "../../ToolFailurePolicy.ts"
import * as JsonBounds from "../jsonBounds.ts"
import type { CompiledTool } from "./compile.ts"
import type { RoundContext } from "./roundContext.ts"
import type { Settled } from "./settled.ts"

/**
 * What the model sees for a failure when it is fed back unformatted.
 *
 * @internal
 */
export interface Shown {
  readonly result: unknown
  readonly encoded: unknown
}

const formatted = (ctx: RoundContext, failure: ToolFailurePolicy.ToolFailure, shown: Shown): unknown => {
  const format = ctx.policy.onFailure?.format
  if (format === undefined) return shown.encoded
  try {
    return format(failure)
  } catch {
    // A throwing formatter must not lose the round: fall back to the default text.
    return shown.encoded
  }
}

const feedBack = (
  ctx: RoundContext,
  failure: ToolFailurePolicy.ToolFailure,
  shown: Shown
): ToolResult => {
  const encoded = formatted(ctx, failure, shown)
  return failure.kind === "rejected"
    ? { id: failure.call.id, name: failure.call.name, isFailure: false, result: encoded, encoded, rejected: true }
    : {
      id: failure.call.id,
      name: failure.call.name,
      isFailure: true,
      result: shown.result,
      encoded,
      failureOrigin: failure.kind as FailureOrigin
    }
}

/**
 * How a failed call may be repaired: `retry` reruns it with repaired
 * arguments (absent: it cannot be retried, e.g. an unknown tool). `undefined`
 * as a whole: the call is already a repair's retry, so repair functions are
 * not consulted again (string policies still apply).
 *
 * @internal
 */
export type Repairs = { readonly retry: ((params: unknown) => Effect.Effect<Settled>) | undefined } | undefined

/**
 * What a repair function answered, as a repair: "feed back" for anything
 * else (a JavaScript function may answer `null`, an unknown tag, a tag
 * whose getter throws).
 */
const repairOf = (u: unknown): ToolFailurePolicy.Repair => {
  try {
    if (typeof u !== "object" || u === null) return ToolFailurePolicy.feedBack
    const tag: unknown = (u as { readonly _tag?: unknown })._tag
    switch (tag) {
      case "FeedBack":
      case "Fail":
        return u as ToolFailurePolicy.Repair
      case "RetryWith":
        return Object.hasOwn(u, "params") ? { _tag: "RetryWith", params: (u as { readonly params: unknown }).params } : ToolFailurePolicy.feedBack
      case "SucceedWith":
        return Object.hasOwn(u, "result") ? { _tag: "SucceedWith", result: (u as { readonly result: unknown }).result } : ToolFailurePolicy.feedBack
      default:
        return ToolFailurePolicy.feedBack
    }
  } catch {
    return ToolFailurePolicy.feedBack
  }
}

/** What `policy` answers for `failure`: a function that throws, fails or dies, or answers with anything but a repair, "feed back". */
const asked = (policy: (failure: ToolFailurePolicy.ToolFailure) => unknown, failure: ToolFailurePolicy.ToolFailure): Effect.Effect<ToolFailurePolicy.Repair> =>
  Effect.catchCause(
    Effect.suspend(() => {
      const made: unknown = policy(failure)
      return Effect.isEffect(made) ? Effect.map(made as Effect.Effect<unknown, unknown>, repairOf) : Effect.succeed(ToolFailurePolicy.feedBack)
    }),
    () => Effect.succeed(ToolFailurePolicy.feedBack)
  )

/**
 * Applies the run's policy for `kind` to a failed call.
 *
 * @internal
 */
export const onFailure = (
  ctx: RoundContext,
  call: ToolCall,
  kind: ToolFailurePolicy.Kind,
  message: string,
  shown: Shown,
  error: unknown,
  entry: CompiledTool | undefined,
  repairs: Repairs
): Effect.Effect<Settled> => {
  const failure: ToolFailurePolicy.ToolFailure = error === undefined
    ? { kind, call, message }
    : { kind, call, message, error }
  const policy = ctx.policy.onFailure?.[kind]
  if (policy === undefined || policy === "feed-back" || repairs === undefined && typeof policy === "function") {
    return Effect.succeed(feedBack(ctx, failure, shown))
  }
  if (policy === "fail") {
    ctx.log.fails.push(failure)
    return Effect.succeed(feedBack(ctx, failure, shown))
  }
  const retry = repairs?.retry
  return Effect.flatMap(
    asked(policy, failure),
    (repair): Effect.Effect<Settled> => {
      switch (repair._tag) {
        case "FeedBack":
          return Effect.succeed(feedBack(ctx, failure, shown))
        case "Fail":
          ctx.log.fails.push(failure)
          return Effect.succeed(feedBack(ctx, failure, shown))
        case "RetryWith":
          // Repaired arguments are written into the transcript: they must be storable.
          if (retry === undefined || JsonBounds.check(repair.params, JsonBounds.storedLimits) !== undefined) {
            return Effect.succeed(feedBack(ctx, failure, shown))
          }
          ctx.log.edits.set(call.id, repair.params)
          return retry(repair.params)
        case "SucceedWith":
          if (entry === undefined) {
            return Effect.succeed({ id: call.id, name: call.name, isFailure: false, result: repair.result, encoded: repair.result })
          }
          return Effect.match(entry.encodeSuccess(repair.result), {
            onFailure: (issue): ToolResult => ({
              id: call.id,
              name: call.name,
              isFailure: true,
              result: repair.result,
              encoded:
                `Tool '${call.name}': the repaired result does not match the tool's success schema: ${issue.message}`,
              failureOrigin: "result"
            }),
            onSuccess: (encoded): ToolResult => ({ id: call.id, name: call.name, isFailure: false, result: repair.result, encoded })
          })
      }
    }
  )
}

/**
 * `onFailure` for a failure the model sees as `message` itself.
 *
 * @internal
 */
export const failWith = (
  ctx: RoundContext,
  call: ToolCall,
  kind: ToolFailurePolicy.Kind,
  message: string,
  entry: CompiledTool | undefined,
  repairs: Repairs,
  error?: unknown
): Effect.Effect<Settled> => onFailure(ctx, call, kind, message, { result: message, encoded: message }, error, entry, repairs)

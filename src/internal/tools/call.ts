/**
 * Settles one tool call: an unknown tool, a rejected call or arguments that
 * do not decode become failures under the run's policy; a call whose tool
 * needs an approval no one gave, or whose tool is external, is `Held`;
 * otherwise its handler is invoked. A call a repair function retries with
 * new arguments goes through the same checks again, approval included.
 *
 * @internal
 */
import { Cause, Effect, Option } from "effect"
import type { CallState, ToolCall } from "../../ToolCall.ts"
import * as ToolFailurePolicy from "../../ToolFailurePolicy.ts"
import { refusalOf } from "../arrival.ts"
import { isSucceeded } from "../complete.ts"
import { describe } from "../describe.ts"
import { raceInterrupt } from "../stopSignal.ts"
import type { CompiledTool } from "./compile.ts"
import { failWith, type Repairs } from "./failure.ts"
import { invoke } from "./handler.ts"
import type { RoundContext } from "./roundContext.ts"
import { Cut, Held, type Settled } from "./settled.ts"

/**
 * Whether the call needs a human's approval. Anything but a clear "no" asks
 * a human (fails closed): a predicate that throws or dies, or that returns
 * (or succeeds with) anything but `false` — `undefined`, a Promise, a number.
 * An Effect is bounded by {@link boundedApproval}.
 */
const needsApproval = (
  entry: CompiledTool,
  call: ToolCall,
  params: unknown,
  ctx: RoundContext
): boolean | Effect.Effect<boolean> => {
  const needs: unknown = entry.tool.needsApproval
  if (needs === undefined || needs === false) return false
  if (typeof needs !== "function") return true
  try {
    const decided: unknown = needs(params, { toolCallId: call.id, messages: ctx.messages })
    if (typeof decided === "boolean") return decided
    if (!Effect.isEffect(decided)) return true
    return Effect.match(decided as Effect.Effect<unknown, unknown>, { onFailure: () => true, onSuccess: (yes) => yes !== false }).pipe(
      Effect.catchDefect(() => Effect.succeed(true))
    )
  } catch {
    return true
  }
}

/**
 * A predicate's Effect bounded as a handler is: past the call's timeout it
 * asks a human (fails closed), and `StopSignal.interrupt` cuts it short
 * (`None`: the call stays pending, to be asked again on resume).
 */
const boundedApproval = (
  needs: Effect.Effect<boolean>,
  entry: CompiledTool,
  ctx: RoundContext
): Effect.Effect<Option.Option<boolean>> => {
  const timeout = entry.timeout ?? ctx.policy.timeout
  const timed = timeout === undefined
    ? needs
    : Effect.timeoutOrElse(needs, { duration: timeout, orElse: () => Effect.succeed(true) })
  const stop = ctx.policy.stop
  return stop === undefined ? Effect.map(timed, Option.some) : raceInterrupt(stop, timed)
}

const awaitingApproval: CallState = { _tag: "AwaitingApproval" }
const awaitingResult: CallState = { _tag: "AwaitingResult" }

/** The call with its decoded `params`: held when it is external, its handler invoked otherwise. */
const proceed = (ctx: RoundContext, entry: CompiledTool, call: ToolCall, params: unknown, repairs: Repairs): Effect.Effect<Settled> =>
  entry.external ? Effect.succeed(new Held(call, awaitingResult)) : invoke(ctx, entry, call, params, repairs)

/** The call once its arguments decoded: held for an approval it needs and has not got, {@link proceed}ed otherwise. */
const decoded = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  approved: boolean,
  repairs: Repairs,
  params: unknown
): Effect.Effect<Settled> => {
  if (approved) return proceed(ctx, entry, call, params, repairs)
  const needs = needsApproval(entry, call, params, ctx)
  if (typeof needs === "boolean") return needs ? Effect.succeed(new Held(call, awaitingApproval)) : proceed(ctx, entry, call, params, repairs)
  return Effect.flatMap(boundedApproval(needs, entry, ctx), (yes) =>
    Option.isNone(yes)
      ? Effect.succeed(new Cut(call, ctx.states.get(call.id)))
      : yes.value
      ? Effect.succeed(new Held(call, awaitingApproval))
      : proceed(ctx, entry, call, params, repairs))
}

/** The call whose arguments did not decode: a "parameters" failure under the run's policy. */
const undecoded = (ctx: RoundContext, entry: CompiledTool, call: ToolCall, repairs: Repairs, cause: Cause.Cause<unknown>): Effect.Effect<Settled> => {
  const error = Cause.squash(cause)
  return failWith(ctx, call, "parameters", `Invalid arguments for tool '${call.name}': ${describe(error)}`, entry, repairs, error)
}

/**
 * Decodes the arguments, then holds the call or invokes its handler. A call
 * that is `repairable` may be retried once by a repair function with new
 * arguments; the retry is not repairable, and its new arguments are checked
 * for approval again (an approval covers the arguments a human saw).
 */
const attempt = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  approved: boolean,
  repairable: boolean
): Effect.Effect<Settled> => {
  const repairs: Repairs = repairable
    ? { retry: (params) => attempt(ctx, entry, { id: call.id, name: call.name, params }, false, false) }
    : undefined
  const refusal = refusalOf(call.params)
  if (refusal !== undefined) {
    return failWith(ctx, call, "parameters", `Invalid arguments for tool '${call.name}': ${refusal}; the tool did not run`, entry, repairs)
  }
  const decoding = entry.decodeParameters(call.params)
  // A decoder that completed synchronously (an Exit, as a schema without effects gives) is branched on
  // now: no step of the runtime, and no handlers built for one.
  if (isSucceeded(decoding)) return decoded(ctx, entry, call, approved, repairs, decoding.value)
  return Effect.matchCauseEffectEager(decoding, {
    onFailure: (cause) => undecoded(ctx, entry, call, repairs, cause),
    onSuccess: (params) => decoded(ctx, entry, call, approved, repairs, params)
  })
}

/**
 * Runs one call. Never fails: unknown tools, invalid arguments, handler
 * failures and defects, timeouts and results that fail the success schema all
 * become results (or failures recorded for a "fail" policy). Calls that wait
 * for a decision or an external result come back `Held`. Interruption
 * propagates.
 *
 * @internal
 */
export const settle = (ctx: RoundContext, call: ToolCall, state: CallState | undefined): Effect.Effect<Settled> => {
  // Calls still waiting for a decision or a result never get here (settleTraced holds them).
  if (state !== undefined) {
    switch (state._tag) {
      case "Rejected": {
        const entry = ctx.compiled.byName.get(call.name)
        return failWith(
          ctx,
          call,
          "rejected",
          state.message ?? ToolFailurePolicy.rejectedMessage(call.name),
          entry,
          {
            retry: entry === undefined ? undefined : (params) =>
              attempt(ctx, entry, { id: call.id, name: call.name, params }, false, false)
          }
        )
      }
      case "Approved":
        break
    }
  }
  const entry = ctx.compiled.byName.get(call.name)
  if (entry === undefined) {
    return failWith(
      ctx,
      call,
      "unknown-tool",
      `Tool '${call.name}' not found. Available tools: ${ctx.compiled.available}`,
      undefined,
      { retry: undefined }
    )
  }
  return attempt(ctx, entry, call, state !== undefined, true)
}

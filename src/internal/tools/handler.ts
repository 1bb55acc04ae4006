/**
 * Invokes a tool's handler for one call whose arguments are decoded and that
 * may run: the handler is read from the run's context and called directly,
 * bounded by the tool's timeout and cut short by `StopSignal.interrupt`; then
 * its outcome is classified. A success is encoded with the tool's success
 * schema; a failure, a defect, a timeout or a result that fails the schema
 * goes to the failure policy; a handler cut short leaves the call `Cut`.
 *
 * @internal
 */
import { Cause, Context, Duration, Effect, Exit, Fiber, Option, Result, type Schema } from "effect"
import * as AiError from "effect/ai/AiError"
import { isSucceeded } from "../complete.ts"
import { type Cell, CurrentCall } from "../directReturn.ts"
import { isInterrupted, raceInterrupt, type StopSignal } from "../stopSignal.ts"
import type { ToolCall, ToolResult } from "../../ToolCall.ts"
import { describe } from "../describe.ts"
import { redactSecrets } from "../redact.ts"
import type { CompiledTool } from "./compile.ts"
import { failWith, onFailure, type Repairs } from "./failure.ts"
import type { RoundContext } from "./roundContext.ts"
import { Cut, type Settled } from "./settled.ts"
import type { Durability } from "../durability.ts"
import { type HandlerOutcome, recordable, revive, toStored } from "./handlerOutcome.ts"
import { asHandler, type CallCell, type Handler, handlerContext, inRunContext, released } from "./handlerContext.ts"
import { called, completedNow } from "./handlerCall.ts"
import { ranNow } from "./syncNow.ts"

/** The handler was interrupted by `StopSignal.interrupt` before it finished. */
class CutShort {}

/**
 * `handler` in its own fiber, interrupted when `stop` is interrupted. A
 * handler that finishes anyway (it was uninterruptible, or finished at that
 * moment) keeps its result; otherwise it fails with `CutShort` after its
 * finalizers have run.
 */
const cuttable = (handler: Effect.Effect<unknown, unknown>, stop: StopSignal): Effect.Effect<unknown, unknown> =>
  Effect.suspend(() => {
    // The handler's own exit, recorded as it ends: a handler that finishes while the
    // interruption is pending (uninterruptible work) still counts as finished.
    let ended: Exit.Exit<unknown, unknown> | undefined
    const recorded = Effect.onExit(handler, (exit) =>
      Effect.sync(() => {
        ended = exit
      }))
    return Effect.flatMap(Effect.forkChild(recorded), (fiber) =>
      Effect.flatMap(
        raceInterrupt(stop, Fiber.await(fiber)),
        (finished) =>
          Option.isSome(finished)
            ? finished.value
            : Effect.flatMap(Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber)), (exit) => {
              const own = ended ?? exit
              return Exit.isSuccess(own)
                ? Effect.succeed(own.value)
                : Cause.hasInterruptsOnly(own.cause)
                ? Effect.fail(new CutShort())
                : own
            })
      ))
  })

class TimedOut {
  readonly after: Duration.Duration
  constructor(after: Duration.Duration) {
    this.after = after
  }
}

/**
 * The handler's run: in the handler's own context plus the call's
 * direct-return cell (a run inside it reports no events into this one), or
 * in the run's context as it is when that adds nothing and the run's slot
 * is free (see {@link inRunContext}); failing with `TimedOut` past the
 * call's timeout and with `CutShort` when the round's stop signal is
 * interrupted. Whoever runs it calls {@link released} with `cell` when it
 * has ended.
 */
const running = (
  ctx: RoundContext,
  entry: CompiledTool,
  direct: Effect.Effect<unknown, unknown>,
  handler: Handler,
  cell: CallCell
): Effect.Effect<unknown, unknown> => {
  let run = inRunContext(handler, cell, ctx.services)
    ? direct
    : Effect.updateContext(direct, (input: Context.Context<never>) => Context.add(handlerContext(handler.context, input), CurrentCall, cell))
  const timeout = entry.timeout ?? ctx.policy.timeout
  if (timeout !== undefined) {
    run = Effect.timeoutOrElse(run, { duration: timeout, orElse: () => Effect.fail(new TimedOut(timeout)) })
  }
  const stop = ctx.policy.stop
  return stop === undefined ? run : cuttable(run, stop)
}

const normalizeFailure = (name: string, error: unknown): unknown => {
  try {
    return AiError.isAiErrorReason(error) ? AiError.make({ module: "loopwork", method: `${name}.handle`, reason: error }) : error
  } catch {
    return error // a value that cannot be read (a revoked proxy) is no AiError
  }
}

/** Whether `u` is one of the markers of this module; a value that cannot be read (a revoked proxy) is not. */
const isOwn = <C>(u: unknown, Class: abstract new(...args: never) => C): u is C => {
  try {
    return u instanceof Class
  } catch {
    return false
  }
}

/** Whether `u` can be read at all: a revoked proxy throws on every operation. */
const readable = (u: unknown): boolean => {
  try {
    Array.isArray(u)
    return true
  } catch {
    return false
  }
}

const notEncoded = Result.fail(undefined)

/** How a handler's run that did not succeed ended. Interruption propagates. */
const failedOutcome = (
  entry: CompiledTool,
  call: ToolCall,
  cause: Cause.Cause<unknown>
): Effect.Effect<HandlerOutcome> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const found = Cause.findError(cause)
  if (found._tag === "Success" && isOwn(found.success, CutShort)) return Effect.succeed(cut)
  if (found._tag === "Success" && isOwn(found.success, TimedOut)) {
    return Effect.succeed({ _tag: "TimedOut", after: found.success.after })
  }
  if (found._tag === "Success" && !readable(found.success)) {
    const defect = new Error("the handler failed with a value that cannot be read (a revoked proxy)")
    return Effect.succeed({ _tag: "Died", defect, message: `Tool '${call.name}' failed unexpectedly: ${defect.message}` })
  }
  if (found._tag === "Success") {
    const error = normalizeFailure(call.name, found.success)
    const encoding = Effect.catchDefect(Effect.result(entry.encodeFailure(error)), () => Effect.succeed(notEncoded))
    return Effect.map(encoding, (encoded) => ({
      _tag: "Raised",
      error,
      encoded: encoded._tag === "Success" ? { value: encoded.success } : undefined,
      message: `Tool '${call.name}' failed: ${redactSecrets(describe(error))}`
    }))
  }
  const defect = Cause.squash(cause)
  return Effect.succeed({ _tag: "Died", defect, message: `Tool '${call.name}' failed unexpectedly: ${redactSecrets(describe(defect))}` })
}

const cut: HandlerOutcome = { _tag: "Cut" }

const returned = (result: unknown, encoded: unknown, cell: Cell): HandlerOutcome => ({
  _tag: "Returned",
  result,
  encoded,
  directReturn: cell.directReturn
})

const mismatched = (call: ToolCall, result: unknown, issue: Schema.SchemaError): HandlerOutcome => ({
  _tag: "Mismatched",
  result,
  issue,
  message: `Tool '${call.name}' returned a result that does not match its success schema: ${redactSecrets(issue.message)}`
})

/** What a handler's outcome settles to under the run's failure policy. */
const settleOutcome = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  repairs: Repairs,
  outcome: HandlerOutcome
): Effect.Effect<Settled> => {
  switch (outcome._tag) {
    case "Returned":
      return Effect.succeed<ToolResult>(
        outcome.directReturn
          ? { id: call.id, name: call.name, isFailure: false, result: outcome.result, encoded: outcome.encoded, directReturn: true }
          : { id: call.id, name: call.name, isFailure: false, result: outcome.result, encoded: outcome.encoded }
      )
    case "Raised": {
      const shown = { result: outcome.error, encoded: outcome.encoded === undefined ? outcome.message : outcome.encoded.value }
      return onFailure(ctx, call, "handler", outcome.message, shown, outcome.error, entry, repairs)
    }
    case "TimedOut":
      return failWith(ctx, call, "timeout", `Tool '${call.name}' timed out after ${Duration.format(outcome.after)}`, entry, repairs)
    case "Mismatched":
      return onFailure(ctx, call, "result", outcome.message, { result: outcome.result, encoded: outcome.message }, outcome.issue, entry, repairs)
    case "Died":
      return failWith(ctx, call, "handler", outcome.message, entry, repairs, outcome.defect)
    case "Cut":
      return Effect.succeed(new Cut(call, ctx.states.get(call.id)))
  }
}

/**
 * One run of the handler through the run's durability: its outcome, as
 * recorded (or replayed) and revived; an end the durability calls fatal
 * goes on as it is.
 */
const durableOutcome = (
  durability: Durability,
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  params: unknown,
  handler: Handler
): Effect.Effect<HandlerOutcome> => {
  const run = Effect.suspend(() => {
    const cell: CallCell = { directReturn: false }
    const direct = asHandler(handler, ctx.report !== undefined, () => called(handler, params, call))
    const ran = running(ctx, entry, direct, handler, cell)
    return Effect.matchCauseEffect(durability.handler === undefined ? ran : durability.handler(call, ran), {
      onFailure: (cause) =>
        (released(cell), durability.fatal?.(call, cause) === true ? Effect.failCause(cause as Cause.Cause<never>) : failedOutcome(entry, call, cause)),
      onSuccess: (result) =>
        (released(cell), Effect.match(entry.encodeSuccess(result), {
          onFailure: (issue) => mismatched(call, result, issue),
          onSuccess: (encoded) => returned(result, encoded, cell)
        }))
    })
  })
  const stored = Effect.map(run, (outcome) => toStored(recordable(call.name, outcome)))
  return Effect.flatMap(durability.toolCall(call, stored), (recorded) => revive(entry, recorded))
}

/**
 * Runs the handler of `call` with its decoded `params` and settles the call
 * by its outcome. A tool without a handler in the context fails as a
 * "handler" failure; a call whose stop signal is already interrupted does not
 * start and comes back `Cut`.
 *
 * @internal
 */
export const invoke = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  params: unknown,
  repairs: Repairs
): Effect.Effect<Settled> => {
  // Looked up by key, not through mapUnsafe, which would copy a context that has overlays.
  const handler = Context.getOrUndefined(ctx.services, entry.handlerKey) as Handler | undefined
  if (handler === undefined) {
    return failWith(
      ctx,
      call,
      "handler",
      `Tool '${call.name}' has no handler: provide its handlers with toolkit.toLayer({ ${call.name}: ... })`,
      entry,
      repairs === undefined ? undefined : { retry: undefined }
    )
  }
  const stop = ctx.policy.stop
  if (stop !== undefined && isInterrupted(stop)) return Effect.succeed(new Cut(call, ctx.states.get(call.id)))
  const durability = ctx.durability
  if (durability !== undefined) {
    return Effect.flatMap(
      durableOutcome(durability, ctx, entry, call, params, handler),
      (outcome) => settleOutcome(ctx, entry, call, repairs, outcome)
    )
  }
  // Directly, with no step between the handler's end and its settlement: the hot path. A handler's
  // completed effect, or its `Effect.sync` run now (see ranNow), is settled now, so the call is complete
  // too (a round then runs it in no fiber of its own).
  const cell: CallCell = { directReturn: false }
  // In a watched run, the handler's function runs in the handler's context (asHandler): a run it starts reports nowhere.
  const direct = asHandler(handler, ctx.report !== undefined, () => called(handler, params, call))
  const now = completedNow(direct) ?? ranNow(ctx, handler, cell, direct)
  if (now === "cut") return Effect.succeed(new Cut(call, ctx.states.get(call.id)))
  const onSuccess = (result: unknown) => {
    released(cell)
    const encoding = entry.encodeSuccess(result)
    // Encoded at once (an Exit, as a schema without effects gives): settled now, with no handlers built for the encoding.
    if (isSucceeded(encoding)) return settleOutcome(ctx, entry, call, repairs, returned(result, encoding.value, cell))
    return encodedThen(
      encoding,
      (issue) => settleOutcome(ctx, entry, call, repairs, mismatched(call, result, issue)),
      (encoded) => settleOutcome(ctx, entry, call, repairs, returned(result, encoded, cell))
    )
  }
  if (now !== undefined && Exit.isSuccess(now)) return onSuccess(now.value)
  const settle = {
    onFailure: (cause: Cause.Cause<unknown>) =>
      (released(cell), Effect.flatMap(failedOutcome(entry, call, cause), (outcome) => settleOutcome(ctx, entry, call, repairs, outcome))),
    onSuccess
  }
  return now === undefined
    ? Effect.matchCauseEffect(running(ctx, entry, direct, handler, cell), settle)
    : Effect.matchCauseEffectEager(now, settle)
}

/**
 * What an encoding leads to: `onIssue` with its schema error, `onValue` with
 * the encoded value; a defect propagates. An encoder that completed
 * synchronously (an Exit, as a schema without effects gives) is branched on
 * now, with no step of the runtime.
 */
const encodedThen = (
  encoding: Effect.Effect<unknown, Schema.SchemaError>,
  onIssue: (issue: Schema.SchemaError) => Effect.Effect<Settled>,
  onValue: (encoded: unknown) => Effect.Effect<Settled>
): Effect.Effect<Settled> =>
  Effect.matchCauseEffectEager(encoding, {
    onFailure: (cause) => {
      const issue = Cause.findError(cause)
      return issue._tag === "Success" ? onIssue(issue.success) : Effect.failCause(cause as Cause.Cause<never>)
    },
    onSuccess: onValue
  })

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
import { Cause, Context, Duration, Effect, Exit, Fiber, Option } from "effect"
import { AiError } from "effect/ai"
import type { Tool, Toolkit } from "effect/ai"
import { type Cell, CurrentCall } from "../directReturn.ts"
import { Observer, silent } from "../../RunEvent.ts"
import { isInterrupted, raceInterrupt, type StopSignal } from "../stopSignal.ts"
import type { ToolCall, ToolResult } from "../../ToolCall.ts"
import { describe } from "../describe.ts"
import type { CompiledTool } from "./compile.ts"
import { failWith, onFailure, type Repairs } from "./failure.ts"
import type { RoundContext } from "./roundContext.ts"
import { Cut, type Settled } from "./settled.ts"

const noPreliminary = () => Effect.void

interface Handler {
  readonly handler: (params: unknown, context: Toolkit.HandlerContext<Tool.Any>) => Effect.Effect<unknown, unknown>
  readonly context: Context.Context<never>
}

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
 * direct-return cell (a run inside it reports no events into this one),
 * failing with `TimedOut` past the call's timeout and with `CutShort` when
 * the round's stop signal is interrupted.
 */
const running = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  params: unknown,
  handler: Handler,
  cell: Cell
): Effect.Effect<unknown, unknown> => {
  // Suspended: a handler that throws instead of returning an Effect is a defect of this call only.
  let run: Effect.Effect<unknown, unknown> = Effect.suspend(() =>
    handler.handler(params, { toolCallId: call.id, preliminary: noPreliminary })
  )
    .pipe(
      Effect.updateContext((input: Context.Context<never>) =>
        // A run inside a handler (a sub-agent) does not report into this run's events.
        Context.add(Context.add(Context.merge(handler.context, input), CurrentCall, cell), Observer, silent)
      )
    )
  const timeout = entry.timeout ?? ctx.policy.timeout
  if (timeout !== undefined) {
    run = Effect.timeoutOrElse(run, { duration: timeout, orElse: () => Effect.fail(new TimedOut(timeout)) })
  }
  const stop = ctx.policy.stop
  return stop === undefined ? run : cuttable(run, stop)
}

const normalizeFailure = (name: string, error: unknown): unknown =>
  AiError.isAiErrorReason(error) ? AiError.make({ module: "loopwork", method: `${name}.handle`, reason: error }) : error

/** What a handler's run that did not succeed settles to. Interruption propagates. */
const failed = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  repairs: Repairs,
  cause: Cause.Cause<unknown>
): Effect.Effect<Settled> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const found = Cause.findError(cause)
  if (found._tag === "Success" && found.success instanceof CutShort) {
    return Effect.succeed(new Cut(call, ctx.states.get(call.id)))
  }
  if (found._tag === "Success") {
    if (found.success instanceof TimedOut) {
      return failWith(
        ctx,
        call,
        "timeout",
        `Tool '${call.name}' timed out after ${Duration.format(found.success.after)}`,
        entry,
        repairs
      )
    }
    const error = normalizeFailure(call.name, found.success)
    return Effect.flatMap(
      Effect.result(entry.encodeFailure(error)),
      (encoded) => {
        const message = `Tool '${call.name}' failed: ${describe(error)}`
        const shown = encoded._tag === "Success" ? { result: error, encoded: encoded.success } : { result: error, encoded: message }
        return onFailure(ctx, call, "handler", message, shown, error, entry, repairs)
      }
    )
  }
  const defect = Cause.squash(cause)
  return failWith(
    ctx,
    call,
    "handler",
    `Tool '${call.name}' failed unexpectedly: ${describe(defect)}`,
    entry,
    repairs,
    defect
  )
}

/** What a handler's `result` settles to: encoded, or a "result" failure when it fails the success schema. */
const succeeded = (
  ctx: RoundContext,
  entry: CompiledTool,
  call: ToolCall,
  repairs: Repairs,
  result: unknown,
  cell: Cell
): Effect.Effect<Settled> =>
  Effect.matchEffect(entry.encodeSuccess(result), {
    onFailure: (error) =>
      onFailure(
        ctx,
        call,
        "result",
        `Tool '${call.name}' returned a result that does not match its success schema: ${error.message}`,
        {
          result,
          encoded: `Tool '${call.name}' returned a result that does not match its success schema: ${error.message}`
        },
        error,
        entry,
        repairs
      ),
    onSuccess: (encoded) =>
      Effect.succeed<ToolResult>(
        cell.directReturn
          ? { id: call.id, name: call.name, isFailure: false, result, encoded, directReturn: true }
          : { id: call.id, name: call.name, isFailure: false, result, encoded }
      )
  })

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
  const handler = ctx.services.mapUnsafe.get(entry.tool.id) as Handler | undefined
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
  const cell: Cell = { directReturn: false }
  return Effect.matchCauseEffect(running(ctx, entry, call, params, handler, cell), {
    onFailure: (cause) => failed(ctx, entry, call, repairs, cause),
    onSuccess: (result) => succeeded(ctx, entry, call, repairs, result, cell)
  })
}

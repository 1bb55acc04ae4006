/**
 * Runs tool calls without `Toolkit.handle`'s per-call queue, fiber and
 * stream: per toolkit, the parameter decoders and result encoders are compiled
 * once (weakly cached); handlers are read from the Effect context and called
 * directly. Semantics follow `Toolkit.handle` with `failureMode: "return"`:
 * every failure becomes a result the model can see, unless the run's
 * `onToolFailure` policy says otherwise.
 *
 * Before a handler runs, the call may be held: its tool needs approval and no
 * one has approved it, or the tool is external. Held calls stay pending.
 *
 * @internal
 */
import { Cause, Clock, Context, Duration, Effect, Exit, Fiber, Option, Schema } from "effect"
import { AiError, Tool } from "effect/ai"
import type { Prompt, Toolkit } from "effect/ai"
import { CurrentCall } from "../DirectReturn.ts"
import * as ExternalTool from "../ExternalTool.ts"
import * as ReturnBehavior from "../ReturnBehavior.ts"
import { isInterrupted, raceInterrupt, type StopSignal } from "../StopSignal.ts"
import { emitTo, isActive, Observer, silent } from "../RunEvent.ts"
import type { CallState, FailureOrigin, ToolCall, ToolResult } from "../ToolCall.ts"
import * as ToolFailurePolicy from "../ToolFailurePolicy.ts"
import * as ToolTimeout from "../ToolTimeout.ts"
import { refusalOf } from "./arrival.ts"
import { describe } from "./describe.ts"
import * as JsonBounds from "./jsonBounds.ts"
import { isTraced, spanText } from "./tracing.ts"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

/** @internal */
export interface CompiledTool {
  readonly tool: Tool.Any
  readonly behavior: ReturnBehavior.Kind
  readonly external: boolean
  readonly timeout: Duration.Duration | undefined
  readonly decodeParameters: Codec
  readonly encodeSuccess: Codec
  readonly encodeFailure: Codec
}

/** @internal */
export interface CompiledToolkit {
  readonly tools: ReadonlyArray<Tool.Any>
  readonly byName: ReadonlyMap<string, CompiledTool>
  readonly available: string
}

const cache = new WeakMap<Toolkit.Any, CompiledToolkit>()

const succeed: Codec = (u) => Effect.succeed(u)

/** A declared timeout as a Duration; an invalid one is ignored here (`Chain.run` rejects it up front). */
const timeoutOf = (tool: Tool.Any): Duration.Duration | undefined => {
  const declared = ToolTimeout.of(tool)
  if (declared === undefined) return undefined
  const duration = Duration.fromInput(declared)
  return duration._tag === "Some" && Duration.isGreaterThan(duration.value, Duration.zero) ? duration.value : undefined
}

const compileTool = (tool: Tool.Any): CompiledTool => {
  return {
    tool,
    behavior: ReturnBehavior.of(tool),
    external: ExternalTool.isExternal(tool),
    timeout: timeoutOf(tool),
    decodeParameters: Schema.isSchema(tool.parametersSchema)
      ? Schema.decodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown>)
      : succeed,
    encodeSuccess: Schema.encodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown>),
    encodeFailure: Schema.encodeUnknownEffect(
      Tool.failureResultSchema(tool) as unknown as Schema.Codec<unknown, unknown>
    )
  }
}

/** @internal */
export const compile = (toolkit: Toolkit.Any): CompiledToolkit => {
  let compiled = cache.get(toolkit)
  if (compiled === undefined) {
    const tools = Object.values(toolkit.tools)
    const byName = new Map<string, CompiledTool>()
    for (const tool of tools) byName.set(tool.name, compileTool(tool))
    compiled = { tools, byName, available: tools.length === 0 ? "(none)" : tools.map((t) => t.name).join(", ") }
    cache.set(toolkit, compiled)
  }
  return compiled
}

// -----------------------------------------------------------------------------
// Round context
// -----------------------------------------------------------------------------

/**
 * A call that did not run: it waits for a decision or an external result.
 *
 * @internal
 */
export class Held {
  readonly call: ToolCall
  readonly state: CallState
  constructor(call: ToolCall, state: CallState) {
    this.call = call
    this.state = state
  }
}

/**
 * A call whose handler was cut short by `StopSignal.interrupt` (or that had
 * not started when it came): it stays pending with the state it had, to run
 * again on resume.
 *
 * @internal
 */
export class Cut {
  readonly call: ToolCall
  readonly state: CallState | undefined
  constructor(call: ToolCall, state: CallState | undefined) {
    this.call = call
    this.state = state
  }
}

/** @internal */
export type Settled = ToolResult | Held | Cut

/** @internal how a round's calls are run */
export interface RoundPolicy {
  readonly concurrency: number | "unbounded"
  /** The default timeout of tools that declare none. */
  readonly timeout: Duration.Duration | undefined
  /** `undefined`: every failure is fed back with the default text. */
  readonly onFailure: ToolFailurePolicy.Options | undefined
  /** `StopSignal.interrupt` on it cuts running handlers short. */
  readonly stop?: StopSignal | undefined
}

/** @internal what a round reports besides its results */
export interface RoundLog {
  /** Failures whose policy is "fail" (in completion order). */
  readonly fails: Array<ToolFailurePolicy.ToolFailure>
  /** Arguments a repair replaced, by call id. */
  readonly edits: Map<string, unknown>
}

interface RoundContext {
  readonly compiled: CompiledToolkit
  readonly services: Context.Context<never>
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly policy: RoundPolicy
  readonly log: RoundLog
  /** Receives the calls' events; `undefined` when no one watches. */
  readonly observer: Observer | undefined
  /** Whether calls get `execute_tool` spans (a tracing backend is installed). */
  readonly traced: boolean
  /** The calls' states before the round (a cut call keeps its own). */
  readonly states: ReadonlyMap<string, CallState>
}

/** @internal */
export const defaultPolicy: RoundPolicy = { concurrency: "unbounded", timeout: undefined, onFailure: undefined }

// -----------------------------------------------------------------------------
// Failures
// -----------------------------------------------------------------------------

const normalizeFailure = (name: string, error: unknown): unknown =>
  AiError.isAiErrorReason(error) ? AiError.make({ module: "loopwork", method: `${name}.handle`, reason: error }) : error

/** What the model sees for a failure when it is fed back unformatted. */
interface Shown {
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
 */
type Repairs = { readonly retry: ((params: unknown) => Effect.Effect<Settled>) | undefined } | undefined

/** Applies the run's policy for `kind` to a failed call. */
const onFailure = (
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
    // A repair function that throws, fails or dies is treated as "feed back".
    Effect.catchCause(Effect.suspend(() => policy(failure)), () => Effect.succeed(ToolFailurePolicy.feedBack)),
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

const failWith = (
  ctx: RoundContext,
  call: ToolCall,
  kind: ToolFailurePolicy.Kind,
  message: string,
  entry: CompiledTool | undefined,
  repairs: Repairs,
  error?: unknown
): Effect.Effect<Settled> => onFailure(ctx, call, kind, message, { result: message, encoded: message }, error, entry, repairs)

// -----------------------------------------------------------------------------
// One call
// -----------------------------------------------------------------------------

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
 * Whether the call needs a human's approval. Anything but a clear "no" asks
 * a human (fails closed): a predicate that throws or dies, or that returns
 * (or succeeds with) anything but `false` — `undefined`, a Promise, a number.
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

const invoke = (
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
  const cell = { directReturn: false }
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
  if (stop !== undefined) {
    if (isInterrupted(stop)) return Effect.succeed(new Cut(call, ctx.states.get(call.id)))
    run = cuttable(run, stop)
  }
  return Effect.matchCauseEffect(run, {
    onFailure: (cause): Effect.Effect<Settled> => {
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
    },
    onSuccess: (result) =>
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
  })
}

const awaitingApproval: CallState = { _tag: "AwaitingApproval" }
const awaitingResult: CallState = { _tag: "AwaitingResult" }

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
  return Effect.matchCauseEffect(entry.decodeParameters(call.params), {
    onFailure: (cause) => {
      const error = Cause.squash(cause)
      return failWith(
        ctx,
        call,
        "parameters",
        `Invalid arguments for tool '${call.name}': ${describe(error)}`,
        entry,
        repairs,
        error
      )
    },
    onSuccess: (params) => {
      const proceed = (): Effect.Effect<Settled> =>
        entry.external ? Effect.succeed(new Held(call, awaitingResult)) : invoke(ctx, entry, call, params, repairs)
      if (approved) return proceed()
      const needs = needsApproval(entry, call, params, ctx)
      if (typeof needs === "boolean") return needs ? Effect.succeed(new Held(call, awaitingApproval)) : proceed()
      return Effect.flatMap(needs, (yes) => yes ? Effect.succeed(new Held(call, awaitingApproval)) : proceed())
    }
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
const settle = (ctx: RoundContext, call: ToolCall, state: CallState | undefined): Effect.Effect<Settled> => {
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

/**
 * `settled`, or a failed result in its place when its value could not be
 * stored (nested past the depth ceiling, cyclic, or not JSON): every result
 * a chain keeps serialises.
 *
 * @internal
 */
export const storable = (settled: Settled): Settled => {
  if (settled instanceof Held || settled instanceof Cut) return settled
  const problem = JsonBounds.check(settled.encoded, JsonBounds.storedLimits)
  if (problem === undefined) return settled
  const message = `Tool '${settled.name}' returned a result that cannot be stored: it is ${JsonBounds.describe(problem)}`
  return { id: settled.id, name: settled.name, isFailure: true, result: message, encoded: message, failureOrigin: "result" }
}

const statusOf = (settled: Settled) =>
  settled instanceof Cut
    ? "interrupted" as const
    : settled instanceof Held
    ? settled.state._tag === "AwaitingApproval" ? "awaiting-approval" as const : "awaiting-result" as const
    : settled.rejected === true
    ? "rejected" as const
    : settled.isFailure
    ? "failed" as const
    : "succeeded" as const

const annotateSettled = (settled: Settled): Effect.Effect<void> =>
  Effect.annotateCurrentSpan("loopwork.tool.status", statusOf(settled))

/** `settle`, reported to the round's observer: started, then finished with the status and duration. */
const observed = (ctx: RoundContext, observer: Observer, call: ToolCall, state: CallState | undefined) =>
  Effect.gen(function*() {
    yield* emitTo(observer, { _tag: "ToolCallStarted", id: call.id, name: call.name, params: call.params })
    // The clock is read after the start is reported: a slow consumer is not the tool's time.
    const started = yield* Clock.currentTimeMillis
    const settled = storable(yield* settle(ctx, call, state))
    const durationMillis = (yield* Clock.currentTimeMillis) - started
    const { id, name } = call
    const status = statusOf(settled)
    // Fields in the Schema's order, so the event equals its JSON round trip.
    yield* emitTo(
      observer,
      settled instanceof Held || settled instanceof Cut
        ? { _tag: "ToolCallFinished", id, name, status, durationMillis }
        : { _tag: "ToolCallFinished", id, name, status, result: settled.encoded, durationMillis }
    )
    return settled
  })

/**
 * Settles one call of a round inside an `execute_tool` span, reporting it to
 * the observer. A call that still waits for a decision or a result is
 * neither traced nor reported again.
 */
const settleTraced = (ctx: RoundContext, call: ToolCall, state: CallState | undefined): Effect.Effect<Settled> => {
  if (state !== undefined && (state._tag === "AwaitingApproval" || state._tag === "AwaitingResult")) {
    return Effect.succeed(new Held(call, state))
  }
  const run = ctx.observer === undefined ? settle(ctx, call, state) : observed(ctx, ctx.observer, call, state)
  if (!ctx.traced) return run
  // The tool name and id come from the model: bounded and redacted before they reach a span.
  return Effect.tap(run, annotateSettled).pipe(
    Effect.withSpan(`execute_tool ${spanText(call.name)}`, {
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": spanText(call.name),
        "gen_ai.tool.call.id": call.id
      }
    }, { captureStackTrace: false })
  )
}

const emptyMessages: ReadonlyArray<Prompt.Message> = []
const noStates: ReadonlyMap<string, CallState> = new Map()

/**
 * Runs one call with the default policy (every failure fed back). Used by
 * the tests that compare against `Toolkit.handle`.
 *
 * @internal
 */
export const runCall = (
  compiled: CompiledToolkit,
  call: ToolCall,
  services: Context.Context<never>
): Effect.Effect<ToolResult> =>
  Effect.flatMap(
    settle({
      compiled,
      services,
      messages: emptyMessages,
      policy: defaultPolicy,
      log: { fails: [], edits: new Map() },
      observer: undefined,
      traced: false,
      states: noStates
    }, call, undefined),
    (settled) =>
      settled instanceof Held || settled instanceof Cut
        ? Effect.die(new Error(`runCall: call ${call.id} was held`))
        : Effect.succeed(settled)
  )

/**
 * Runs a round of calls; what each call settled to comes back in call order
 * whatever the concurrency, with the round's log.
 *
 * @internal
 */
export const runRound = (
  compiled: CompiledToolkit,
  calls: ReadonlyArray<ToolCall>,
  states: ReadonlyMap<string, CallState>,
  messages: ReadonlyArray<Prompt.Message>,
  policy: RoundPolicy
): Effect.Effect<{ readonly settled: ReadonlyArray<Settled>; readonly log: RoundLog }> =>
  Effect.contextWith((services: Context.Context<never>) => {
    const log: RoundLog = { fails: [], edits: new Map() }
    const observer = Context.get(services, Observer)
    const ctx: RoundContext = {
      compiled,
      services,
      messages,
      policy,
      log,
      observer: isActive(observer) ? observer : undefined,
      traced: isTraced(services),
      states
    }
    const one = (call: ToolCall) => settleTraced(ctx, call, states.get(call.id))
    const settled = calls.length === 1
      ? Effect.map(one(calls[0]), (only) => [only])
      : Effect.forEach(calls, one, { concurrency: policy.concurrency })
    return Effect.map(settled, (all) => ({ settled: all, log }))
  })

/**
 * Runs a round of calls with the default policy and returns the results in
 * call order.
 *
 * @internal
 */
export const runCalls = (
  compiled: CompiledToolkit,
  calls: ReadonlyArray<ToolCall>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<ToolResult>> =>
  Effect.map(
    runRound(compiled, calls, noStates, emptyMessages, { ...defaultPolicy, concurrency }),
    ({ settled }) => settled.filter((s): s is ToolResult => !(s instanceof Held) && !(s instanceof Cut))
  )

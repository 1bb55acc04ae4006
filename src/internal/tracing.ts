/**
 * Spans of the loop (`invoke_agent`, `chat`, `execute_tool`), created only
 * when someone can see them: tracing is enabled and a tracer other than
 * Effect's built-in `nativeTracer` is installed (an OpenTelemetry exporter, a
 * test tracer). The native tracer exports nothing, and three spans per step
 * would roughly double the loop's own cost.
 *
 * A span that ends in a failure records it, with `error.type` (the
 * failure's tag, `telemetry/errorType.ts`): an exporter writes the error's
 * name, message and stack (with its `cause` chain) into the span
 * (`exception.*` and the status). With `Privacy.OmitContent` on, the
 * `invoke_agent` and `chat` spans record a stand-in instead — the error's
 * tag and a content-free message ({@link failureMessage}) — and the caller
 * still gets the real failure; `reported` (the run's events) sees the same
 * stand-in. A `chat` span (and any {@link withFailureSpan}) always records a
 * stand-in: it never records a `ModelCallFailed`'s `cause` (the provider's
 * error, which may hold the request). The spans' names and attributes are
 * made in `telemetry/`.
 *
 * @internal
 */
import { Cause, Context, Effect, References, Tracer } from "effect"
import { type Reason, RunError } from "../LoopError.ts"
import { OmitContent } from "../Privacy.ts"
import { AgentName } from "../Telemetry.ts"
import { failureMessage, omittedDetails } from "./contentFree.ts"
import { redactSecrets } from "./redact.ts"
import { errorTypeOf } from "./telemetry/errorType.ts"

/** Whether spans created under `context` reach a tracing backend. */
export const isTraced = (context: Context.Context<never>): boolean =>
  Context.get(context, References.TracerEnabled) && Context.get(context, Tracer.Tracer) !== Tracer.nativeTracer

/** `effect` inside a span named `name`, when `context` is traced; `effect` itself otherwise. */
export const withSpanIn = <A, E, R>(
  context: Context.Context<never>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, R> =>
  isTraced(context) ? Effect.withSpan(effect, name, { ...options, captureStackTrace: false }) : effect

/** The longest span name or string attribute made from text that came from outside. */
const maxSpanText = 256

/**
 * Text that came from outside (a tool name the model made up, a provider's
 * message) as it may go into a span name or attribute: credentials
 * redacted, at most 256 characters.
 */
export const spanText = (text: string): string => {
  const safe = redactSecrets(text)
  return safe.length <= maxSpanText ? safe : `${safe.slice(0, maxSpanText)}…`
}

// -----------------------------------------------------------------------------
// Failures as spans (and a run's events) may see them
// -----------------------------------------------------------------------------

/** A failure with a tag and a message: what the loop fails with. */
interface Tagged {
  readonly _tag: string
  readonly message: string
}

/**
 * What stands in for a failure (or a defect) where it would otherwise be
 * recorded: a tag, a name and a message, and nothing else an exporter would
 * render (no `cause`, no `stack`, no other fields). The cause it stands in
 * for is kept out of sight, for the way back.
 */
class StandIn implements Tagged {
  readonly _tag: string
  readonly name: string
  readonly message: string
  readonly #original: Cause.Cause<unknown>
  constructor(tag: string, message: string, original: Cause.Cause<unknown>) {
    this._tag = tag
    this.name = tag
    this.message = message
    this.#original = original
  }
  /** The whole cause this stand-in replaced. */
  get original(): Cause.Cause<unknown> {
    return this.#original
  }
}

/**
 * `cause` with each failure replaced by `conceal`'s stand-in and, when
 * `omit`, each defect by a content-free one.
 */
const concealed = <E>(cause: Cause.Cause<E>, conceal: (error: E) => E, omit: boolean): Cause.Cause<E> => {
  if (cause.reasons.every(Cause.isInterruptReason)) return cause
  return Cause.fromReasons(cause.reasons.map((reason): Cause.Reason<E> =>
    // The reason's annotations (where it failed: stack frames, the span) are kept.
    Cause.isFailReason(reason)
      ? Cause.makeFailReason(conceal(reason.error)).annotate(Cause.reasonAnnotations(reason))
      : omit && Cause.isDieReason(reason)
      ? Cause.makeDieReason(new StandIn("Defect", `An unexpected error: ${omittedDetails}`, cause)).annotate(
        Cause.reasonAnnotations(reason)
      )
      : reason
  ))
}

/** The stand-in in a reason of `cause`, when there is one. */
const standInOf = (cause: Cause.Cause<unknown>): StandIn | undefined => {
  for (const reason of cause.reasons) {
    const value: unknown = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (value instanceof StandIn) return value
    if (value instanceof RunError && value.reason instanceof StandIn) return value.reason
  }
  return undefined
}

/** `effect` with the cause its stand-ins replaced restored (the caller gets the real failure). */
const revealed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchCause(effect, (cause) => Effect.failCause((standInOf(cause)?.original ?? cause) as Cause.Cause<E>))

/**
 * `effect` whose failures become stand-ins made by `conceal`, and, when
 * `omit`, whose defects become content-free stand-ins (each remembers the
 * whole cause).
 */
const concealing = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  conceal: (error: E, cause: Cause.Cause<E>) => E,
  omit: boolean
): Effect.Effect<A, E, R> =>
  Effect.catchCause(effect, (cause) => Effect.failCause(concealed(cause, (error) => conceal(error, cause), omit)))

/** Annotates the current span with `error.type`: the failure's tag (the run's reason's, for a run). */
const annotateErrorType = <E>(cause: Cause.Cause<E>): Effect.Effect<void> =>
  Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.annotateCurrentSpan("error.type", errorTypeOf(cause))

/**
 * `effect` in a span named `name` that also says what kind of failure ended
 * it (`error.type`).
 *
 * @internal
 */
export const spanWithErrorType = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, R> =>
  Effect.withSpan(Effect.tapCause(effect, annotateErrorType), name, { ...options, captureStackTrace: false })

/** A run's failure as its span and its events see it with content omitted: the same tag and chain, a content-free message. */
const concealRun = (error: RunError, cause: Cause.Cause<RunError>): RunError =>
  // Only inside the span, and put back before anyone matches on the reason (`revealed`).
  new RunError({ reason: new StandIn(error.reason._tag, failureMessage(error.reason), cause) as unknown as Reason, chain: error.chain })

/**
 * A run (`core`), reported by `report` (its events; `undefined` when no one
 * watches), inside its `invoke_agent` span (named and attributed by `span`,
 * read only then) when `context` is traced (`traced`, as `isTraced` says of
 * it). The span gets `error.type` (the
 * reason's tag) when the run fails. A run inside this one (started by a tool
 * handler) does not inherit `Telemetry.AgentName`.
 *
 * With `Privacy.OmitContent` on, `report` and the span see a `RunError`
 * whose reason has the same tag and a content-free message (for a
 * `ToolCallFailed`, its kind and tool; see {@link failureMessage}), defects
 * become a content-free stand-in, and the caller gets the real `RunError`
 * back.
 */
export const withRunSpanIn = <A, R>(
  context: Context.Context<never>,
  traced: boolean,
  report: ((run: Effect.Effect<A, RunError, R>) => Effect.Effect<A, RunError, R>) | undefined,
  core: Effect.Effect<A, RunError, R>,
  span: () => { readonly name: string; readonly options: Tracer.SpanOptionsNoTrace }
): Effect.Effect<A, RunError, R> => {
  if (!traced && report === undefined) return core
  const omit = Context.get(context, OmitContent)
  const own = traced && Context.get(context, AgentName) !== undefined ? Effect.provideService(core, AgentName, undefined) : core
  const inner = omit ? concealing(own, concealRun, true) : own
  const reported = report === undefined ? inner : report(inner)
  if (!traced) return omit ? revealed(reported) : reported
  const { name, options } = span()
  const spanned = spanWithErrorType(reported, name, options)
  return omit ? revealed(spanned) : spanned
}

/**
 * How a span records a failure: its tag (`error.type`, the exception's
 * name) and message, content-free when `omit`.
 *
 * @internal
 */
export type Label<E> = (error: E, omit: boolean) => { readonly tag: string; readonly message: string }

/** A failure of the loop: its tag; its message, content-free with content omitted, never its `cause`. */
const byTag: Label<Tagged> = (error, omit) => ({
  tag: error._tag,
  message: omit ? failureMessage(error as Parameters<typeof failureMessage>[0]) : redactSecrets(error.message)
})

/**
 * `effect` inside a span named `name`; for a `context` that {@link isTraced}
 * (the caller checks). The span records a stand-in of a failure, as `label`
 * makes it (tag and message, nothing else: no `cause`, no other fields), and
 * `error.type`; with `Privacy.OmitContent` on, a defect becomes a
 * content-free stand-in. The caller gets the real failure.
 *
 * @internal
 */
export const withFailureSpan = <A, E, R>(
  context: Context.Context<never>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace,
  label: Label<E>
): Effect.Effect<A, E, R> => {
  const omit = Context.get(context, OmitContent)
  const conceal = (error: E, cause: Cause.Cause<E>): E => {
    const { tag, message } = label(error, omit)
    return new StandIn(tag, message, cause) as unknown as E
  }
  return revealed(spanWithErrorType(concealing(effect, conceal, omit), name, options))
}

/**
 * `effect` (a model call) inside a span named `name`; for a `context` that
 * {@link isTraced} (the caller checks). The span records a stand-in of a
 * failure: its tag and message, never its `cause` (a `ModelCallFailed`'s
 * `cause` is the provider's error, which may hold the request), and
 * `error.type`. With `Privacy.OmitContent` on, the message is content-free.
 * The caller gets the real failure.
 */
export const withCallSpan = <A, E extends Tagged, R>(
  context: Context.Context<never>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, R> => withFailureSpan(context, effect, name, options, byTag)

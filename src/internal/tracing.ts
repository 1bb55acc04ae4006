/**
 * Spans of the loop (`invoke_agent`, `chat`, `execute_tool`), created only
 * when someone can see them: tracing is enabled and a tracer other than
 * Effect's built-in `nativeTracer` is installed (an OpenTelemetry exporter, a
 * test tracer). The native tracer exports nothing, and three spans per step
 * would roughly double the loop's own cost.
 *
 * A span that ends in a failure records it: an exporter writes the error's
 * name, message and stack (with its `cause` chain) into the span
 * (`exception.*` and the status). With `Privacy.OmitContent` on, the
 * `invoke_agent` and `chat` spans record a stand-in instead — the error's
 * tag, a content-free message ({@link failureMessage}), `error.type` — and
 * the caller still gets the real failure; `reported` (the run's events)
 * sees the same stand-in. A `chat` span never records a `ModelCallFailed`'s
 * `cause` (the provider's error, which may hold the request).
 *
 * @internal
 */
import { Cause, Context, Effect, References, Tracer } from "effect"
import { type Reason, RunError } from "../LoopError.ts"
import { OmitContent } from "../Privacy.ts"
import { failureMessage, omittedDetails } from "./contentFree.ts"
import { redactSecrets } from "./redact.ts"

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
const annotateErrorType = <E>(cause: Cause.Cause<E>): Effect.Effect<void> => {
  for (const reason of cause.reasons) {
    if (Cause.isFailReason(reason)) {
      const error: unknown = reason.error
      const tagged = error instanceof RunError ? error.reason : error
      const tag = typeof tagged === "object" && tagged !== null && typeof (tagged as Tagged)._tag === "string"
        ? (tagged as Tagged)._tag
        : "_OTHER"
      return Effect.annotateCurrentSpan("error.type", spanText(tag))
    }
    if (Cause.isDieReason(reason)) return Effect.annotateCurrentSpan("error.type", "Defect")
  }
  return Effect.void
}

/** `effect` in a span named `name` that also says what kind of failure ended it (`error.type`). */
const spanWithErrorType = <A, E, R>(
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
 * watches), inside an `invoke_agent` span when `context` is traced.
 *
 * With `Privacy.OmitContent` off this is exactly
 * `withSpanIn(context, report(core), …)`. With it on, `report` and the span
 * see a `RunError` whose reason has the same tag and a content-free message
 * (for a `ToolCallFailed`, its kind and tool; see {@link failureMessage}),
 * defects become a content-free stand-in, the span gets `error.type` (the
 * reason's tag), and the caller gets the real `RunError` back.
 */
export const withRunSpanIn = <A, R>(
  context: Context.Context<never>,
  report: ((run: Effect.Effect<A, RunError, R>) => Effect.Effect<A, RunError, R>) | undefined,
  core: Effect.Effect<A, RunError, R>,
  spanOptions: () => Tracer.SpanOptionsNoTrace
): Effect.Effect<A, RunError, R> => {
  const traced = isTraced(context)
  if (!traced && report === undefined) return core
  if (!Context.get(context, OmitContent)) {
    const reported = report === undefined ? core : report(core)
    return traced ? Effect.withSpan(reported, "invoke_agent", { ...spanOptions(), captureStackTrace: false }) : reported
  }
  const inner = concealing(core, concealRun, true)
  const reported = report === undefined ? inner : report(inner)
  return revealed(traced ? spanWithErrorType(reported, "invoke_agent", spanOptions()) : reported)
}

/** A model call's failure as its span records it: tag and message (content-free with content omitted), never its `cause`. */
const concealCall = (omit: boolean) => <E extends Tagged>(error: E, cause: Cause.Cause<E>): E =>
  new StandIn(error._tag, omit ? failureMessage(error) : redactSecrets(error.message), cause) as unknown as E

const concealCallOmitting = concealCall(true)
const concealCallKeeping = concealCall(false)

/**
 * `effect` (a model call) inside a span named `name`; for a `context` that
 * {@link isTraced} (the caller checks). The span records a stand-in of a
 * failure: its tag and message, never its `cause` (a `ModelCallFailed`'s
 * `cause` is the provider's error, which may hold the request). With
 * `Privacy.OmitContent` on, the message is content-free and the span gets
 * `error.type`. The caller gets the real failure.
 */
export const withCallSpan = <A, E extends Tagged, R>(
  context: Context.Context<never>,
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: Tracer.SpanOptionsNoTrace
): Effect.Effect<A, E, R> => {
  if (!Context.get(context, OmitContent)) {
    return revealed(Effect.withSpan(concealing(effect, concealCallKeeping, false), name, { ...options, captureStackTrace: false }))
  }
  return revealed(spanWithErrorType(concealing(effect, concealCallOmitting, true), name, options))
}

/**
 * Spans of the loop (`invoke_agent`, `chat`, `execute_tool`), created only
 * when someone can see them: tracing is enabled and a tracer other than
 * Effect's built-in `nativeTracer` is installed (an OpenTelemetry exporter, a
 * test tracer). The native tracer exports nothing, and three spans per step
 * would roughly double the loop's own cost.
 *
 * @internal
 */
import { Context, Effect, References, Tracer } from "effect"
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

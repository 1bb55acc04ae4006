/**
 * Token usage counted once per model call. The loop's `chat` span carries
 * `gen_ai.usage.*` (from the response's finish part); a model made with
 * effect/ai's `LanguageModel` opens a span of its own under it
 * (`LanguageModel.generateText` / `streamText`), where its provider may write
 * the same `gen_ai.usage.*` again — and a backend that sums usage over a
 * trace would count it twice. Inside a `chat` span, those spans keep every
 * attribute but `gen_ai.usage.*`.
 *
 * It is done with Effect's own tracer API: the model call runs with a tracer
 * that hands every span request to the installed tracer and, for effect/ai's
 * spans only, returns a view of the span that drops those attributes. Other
 * spans (the provider's HTTP client, …) are the installed tracer's own.
 *
 * @internal
 */
import { Effect, type Exit, type Option, type Tracer } from "effect"
import type * as Context from "effect/Context"

const usagePrefix = "gen_ai.usage."

/** A span whose `gen_ai.usage.*` attributes are dropped; everything else goes to `span`. */
class WithoutUsage implements Tracer.Span {
  readonly _tag = "Span"
  readonly span: Tracer.Span
  constructor(span: Tracer.Span) {
    this.span = span
  }
  get name(): string {
    return this.span.name
  }
  get spanId(): string {
    return this.span.spanId
  }
  get traceId(): string {
    return this.span.traceId
  }
  get parent(): Option.Option<Tracer.AnySpan> {
    return this.span.parent
  }
  get annotations(): Context.Context<never> {
    return this.span.annotations
  }
  get status(): Tracer.SpanStatus {
    return this.span.status
  }
  get attributes(): ReadonlyMap<string, unknown> {
    return this.span.attributes
  }
  get links(): ReadonlyArray<Tracer.SpanLink> {
    return this.span.links
  }
  get sampled(): boolean {
    return this.span.sampled
  }
  get kind(): Tracer.SpanKind {
    return this.span.kind
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.span.end(endTime, exit)
  }
  attribute(key: string, value: unknown): void {
    if (!key.startsWith(usagePrefix)) this.span.attribute(key, value)
  }
  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    this.span.event(name, startTime, attributes)
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.span.addLinks(links)
  }
}

/** The wrapping tracer of each installed tracer, made once. */
const wrapped = new WeakMap<Tracer.Tracer, Tracer.Tracer>()

const wrap = (tracer: Tracer.Tracer): Tracer.Tracer => {
  let wrapper = wrapped.get(tracer)
  if (wrapper === undefined) {
    wrapper = {
      span(options) {
        const span = tracer.span(options)
        return options.name.startsWith("LanguageModel.") ? new WithoutUsage(span) : span
      },
      context: tracer.context
    }
    wrapped.set(tracer, wrapper)
  }
  return wrapper
}

/**
 * `call` (a model call inside a `chat` span) with effect/ai's spans under it
 * stripped of `gen_ai.usage.*`.
 *
 * @internal
 */
export const usageOnce = <A, E, R>(call: Effect.Effect<A, E, R>, tracer: Tracer.Tracer): Effect.Effect<A, E, R> =>
  Effect.withTracer(call, wrap(tracer))

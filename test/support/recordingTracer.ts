/**
 * An in-memory tracer for tests: it keeps every span it makes (Effect's own
 * span type, so ending and attributes behave as usual).
 */
import { Layer, Tracer } from "effect"

/** A tracer recording its spans, and a layer installing it. */
export const recording = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer, layer: Layer.succeed(Tracer.Tracer, tracer) }
}

/**
 * A count of the steps of effect's runtime: each primitive a fiber evaluates
 * (a `flatMap`'s continuation, a `sync`, an `Exit` handed on…), seen through
 * the public `Tracer.context` hook. Unlike time, the count does not move with
 * the host's load, so it tells whether a change took steps out of the loop.
 *
 * The counting tracer is installed with tracing disabled, so the loop takes
 * its untraced path (it traces only when a tracer other than effect's native
 * one is enabled) while every fiber still hands each step to the hook.
 */
import { Layer, References, Tracer } from "effect"

/** The counter and the layer that installs it. */
export interface RuntimeSteps {
  /** Steps counted since the last `reset`. */
  readonly count: () => number
  readonly reset: () => void
  /** Provide it to the runs to count: the counting tracer, with tracing disabled. */
  readonly layer: Layer.Layer<never>
}

/** A new counter. */
export const runtimeSteps = (): RuntimeSteps => {
  let steps = 0
  const tracer = Tracer.make({
    span: (options) => Tracer.nativeTracer.span(options),
    context: (primitive, fiber) => {
      steps++
      return primitive["~effect/Effect/evaluate"](fiber)
    }
  })
  return {
    count: () => steps,
    reset: () => {
      steps = 0
    },
    layer: Layer.mergeAll(Layer.succeed(Tracer.Tracer, tracer), Layer.succeed(References.TracerEnabled, false))
  }
}

/**
 * A handler layer built with loopwork's and effect's settings of its own (an
 * observer, OmitContent, Metrics "on", a clock, a tracer, TracerEnabled)
 * and a user service (so the run adds the handlers' services to its
 * context): none of the settings reaches the run around the handlers (its
 * events, their content and durations, its spans, its metrics); a run
 * started inside a handler sees them where the caller lacks them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Metric, References, Schema, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, RunEvent, Telemetry } from "../../src/index.ts"
import { settled } from "../support/stream.ts"
import { recording } from "../support/recordingTracer.ts"
import { eventJson, observerInto, oddClock, spanRows } from "../support/runContextScenarios.ts"

class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}

const Ping = Tool.make("ping", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const Nest = Tool.make("nest", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Ping, Nest)

const scenario = (watched: boolean, traced: boolean) =>
  Effect.gen(function*() {
    const outerSeen: Array<RunEvent.RunEvent> = []
    const handlerSeen: Array<RunEvent.RunEvent> = []
    const handlerTracer = recording()
    const outerTracer = recording()
    const odd = oddClock()
    const innerModel = ChatModel.scripted([
      { toolCalls: [{ name: "ping", params: { q: "inner-secret" } }] },
      { text: "inner-secret done", latency: "20 millis" }
    ])
    const settings = Layer.mergeAll(
      Layer.succeed(RunEvent.Observer, observerInto(handlerSeen)),
      Privacy.layerOmitContent,
      Layer.succeed(Telemetry.Metrics, "on"),
      Layer.succeed(Clock.Clock, odd.clock),
      handlerTracer.layer,
      Layer.succeed(References.TracerEnabled, true),
      Layer.succeed(Greeting, "hello")
    )
    const handlers = toolkit.toLayer(Effect.gen(function*() {
      // Built with the settings: they are in the handlers' own context, with this user service.
      const greeting = yield* Greeting
      return {
        ping: ({ q }: { readonly q: string }) => Effect.as(Effect.sleep("30 millis"), `${greeting} ${q}`),
        nest: ({ q }: { readonly q: string }) =>
          Chain.run(Chain.make({ user: `inner ${q}`, toolkit }), { mode: Mode.whileNeedsResponse, maxRuns: 3 }).pipe(
            Effect.provide(innerModel.layer),
            Effect.match({ onFailure: (e) => `inner failed ${e.reason._tag}`, onSuccess: (o) => Chain.text(o.chain) })
            // The inner run's handlers are those of the caller's context, where the handler runs.
          ) as Effect.Effect<string>
      }
    })).pipe(Layer.provide(settings))
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "ping", params: { q: "outer-secret" } }, { name: "nest", params: { q: "n1" } }], latency: "10 millis" },
      { text: "outer-secret done", latency: "40 millis" }
    ])
    const registry = new Map()
    const run = Chain.run(Chain.make({ user: "go outer-secret", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, handlers]),
      watched ? Effect.provideService(RunEvent.Observer, observerInto(outerSeen)) : (e) => e,
      traced ? Effect.provideService(Tracer.Tracer, outerTracer.tracer) : (e) => e,
      Effect.provideService(Metric.MetricRegistry, registry)
    )
    const outcome = yield* settled(run)
    const metrics = [...registry.keys()].map(String).sort()
    return {
      text: Chain.text(outcome.chain),
      outer: outerSeen.map(eventJson),
      handler: handlerSeen.map(eventJson),
      outerSpans: spanRows(outerTracer.spans),
      handlerSpans: spanRows(handlerTracer.spans),
      metrics,
      oddReads: odd.reads.count > 0
    }
  })

describe("a handler layer's own settings", () => {
  for (const watched of [false, true]) {
    for (const traced of [false, true]) {
      it.effect(`watched=${watched} traced=${traced}`, () =>
        Effect.gen(function*() {
          const seen = yield* scenario(watched, traced)
          expect(seen.text).toBe("outer-secret done")
          if (watched) {
            // The outer run's events: its content, durations by TestClock (not the odd clock's 7 ms).
            expect(seen.outer.some((e) => e.includes("outer-secret done"))).toBe(true)
            const durations = seen.outer.flatMap((e) => {
              const m = /"durationMillis":(\d+)/.exec(e)
              return m === null ? [] : [Number(m[1])]
            })
            expect(durations).not.toContain(7)
            expect(durations).toContain(10)
            expect(durations).toContain(40)
            // The sub-agent inside the handler reports nowhere (the caller's observer is active).
            expect(seen.handler).toEqual([])
          } else {
            expect(seen.outer).toEqual([])
          }
          // The handler layer's tracer never sees the outer run's spans.
          expect(seen.handlerSpans.filter((s) => s.name.includes("invoke_agent") && s.parent === null).length).toBeLessThanOrEqual(1)
          if (traced) expect(seen.outerSpans.length).toBeGreaterThan(0)
        }))
    }
  }
})

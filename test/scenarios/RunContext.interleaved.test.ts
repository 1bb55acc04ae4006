/**
 * Many runs started in the same context at the same time (each run's own
 * context made from it), each with its own maxRuns, and streams each with
 * its own observer and privacy whose handlers start sub-agents with their
 * own clock: each run is held to its own budget and reports with its own
 * settings; a custom mode that changes a setting inside the run is heard.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, type Mode, Mode as Modes, Outcome, Privacy, RunEvent, Step } from "../../src/index.ts"
import { events, settled } from "../support/stream.ts"
import { eventJson, observerInto, oddClock } from "../support/runContextScenarios.ts"

const Ping = Tool.make("ping", { parameters: Schema.Struct({ ms: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(Ping)
const ping = (ms: number) => ({ toolCalls: [{ name: "ping", params: { ms } }] })

/** No checkMaxRuns: only the run's budget stops it. */
const bare: Mode.Mode<ChatModel.ChatModel> = (chain) => Modes.loop(chain, (self) => self.pipe(Step.executeTools, Step.callLlm))

describe("runs at the same time in one context", () => {
  it.effect("each of 10 runs started in the same context is held to its own maxRuns", () =>
    Effect.gen(function*() {
      let turn = 0
      // One model for all: every turn asks for a ping of a few ms (so the runs interleave).
      const model = ChatModel.scripted([() => ping(1 + (turn++ % 5))], { repeat: true } as never)
      const handlers = toolkit.toLayer({ ping: ({ ms }) => Effect.as(Effect.sleep(ms), "pong") })
      const runs = Array.from({ length: 10 }, (_, i) => ({ i, maxRuns: 1 + (i % 4) }))
      // The same context for every run.
      const program = Effect.forEach(runs, ({ maxRuns }) =>
        Chain.run(Chain.make({ user: "go", toolkit }), { mode: bare, maxRuns }).pipe(Effect.result), { concurrency: "unbounded" })
      const results = yield* settled(Effect.provide(program, [model.layer, handlers]))
      const seen = runs.map(({ i, maxRuns }) => {
        const result = results[i]
        return result._tag === "Failure"
          ? { i, maxRuns, tag: result.failure.reason._tag, runCount: result.failure.chain.runCount }
          : { i, maxRuns, tag: "ok", runCount: -1 }
      })
      for (const run of seen) {
        expect(run.tag, `run ${run.i}`).toBe("MaxRunsExceeded")
        expect(run.runCount, `run ${run.i}`).toBe(run.maxRuns)
      }
      expect(model.calls).toBe(seen.reduce((n, run) => n + run.maxRuns, 0))
    }))

  it.effect("the same run effect repeated in one context has a fresh budget each time", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(Array.from({ length: 6 }, () => ping(1)))
      const handlers = toolkit.toLayer({ ping: () => Effect.succeed("pong") })
      const once = Chain.run(Chain.make({ user: "go", toolkit }), { mode: bare, maxRuns: 2 }).pipe(
        Effect.match({ onFailure: (e) => e.reason._tag, onSuccess: () => "ok" })
      )
      const tags = yield* Effect.provide(Effect.all([once, once, once]), [model.layer, handlers])
      expect(tags).toEqual(["MaxRunsExceeded", "MaxRunsExceeded", "MaxRunsExceeded"])
      expect(model.calls).toBe(6)
    }))

  it.effect("interleaved streams: own observer, own privacy; sub-agents with their own clock and observer", () =>
    Effect.gen(function*() {
      const streams = Array.from({ length: 8 }, (_, i) => ({ i, omit: i % 2 === 0, inner: [] as Array<RunEvent.RunEvent>, odd: oddClock() }))
      const results = yield* Effect.forEach(streams, ({ i, inner, odd, omit }) => {
        const handlers = toolkit.toLayer({
          ping: ({ ms }) =>
            Effect.gen(function*() {
              yield* Effect.sleep(ms)
              const sub = ChatModel.scripted([{ text: `sub-secret-${i}` }])
              const text = yield* Chain.run(Chain.make({ user: `sub ${i}` }), { mode: Modes.whileNeedsResponse }).pipe(
                Effect.provide(sub.layer),
                Effect.provideService(RunEvent.Observer, observerInto(inner)),
                Effect.provideService(Privacy.OmitContent, !omit),
                Effect.provideService(Clock.Clock, odd.clock),
                Effect.map((o) => Chain.text(o.chain)),
                Effect.orDie
              )
              return `pong ${text}`
            })
        })
        const model = ChatModel.scripted([
          { ...ping(3 + (i % 3)), latency: `${1 + i} millis` },
          { ...ping(1 + (i % 4)), latency: `${2 + (i % 3)} millis` },
          { text: `outer-secret-${i}`, latency: "4 millis" }
        ])
        return events(Chain.stream(Chain.make({ user: `go secret ${i}`, toolkit }), { mode: Modes.whileNeedsResponse }).pipe(
          Stream.provide(Layer.mergeAll(model.layer, handlers)),
          omit ? Stream.provideService(Privacy.OmitContent, true) : (s) => s
        ))
      }, { concurrency: "unbounded" })
      const seen = streams.map(({ i, inner, omit }) => ({ i, omit, outer: results[i].map(eventJson), inner: inner.map(eventJson) }))
      for (const { i, inner, omit, outer } of seen) {
        expect(JSON.stringify(outer).includes("secret"), `stream ${i}`).toBe(!omit)
        expect(JSON.stringify(inner).includes("secret"), `stream ${i} subs`).toBe(omit)
        for (const e of outer) for (const m of e.match(/secret-\d+/g) ?? []) expect(m).toBe(`secret-${i}`)
        const innerDurations = inner.flatMap((e) => /"durationMillis":(\d+)/.exec(e)?.slice(1).map(Number) ?? [])
        expect(innerDurations).toEqual([7, 7])
        const outerDurations = outer.flatMap((e) => /"ModelCallFinished".*"durationMillis":(\d+)/.exec(e)?.slice(1).map(Number) ?? [])
        expect(outerDurations).toEqual([1 + i, 2 + (i % 3), 4])
      }
    }))

  it.effect("a custom mode that sets OmitContent and an observer inside the run is heard by its steps", () =>
    Effect.gen(function*() {
      const outer: Array<RunEvent.RunEvent> = []
      const insideMode: Array<RunEvent.RunEvent> = []
      const handlers = toolkit.toLayer({ ping: () => Effect.succeed("pong-secret") })
      const hushed: Mode.Mode<ChatModel.ChatModel> = (chain, options) =>
        Modes.whileNeedsResponse(chain, options).pipe(
          Effect.provideService(Privacy.OmitContent, true),
          Effect.provideService(RunEvent.Observer, observerInto(insideMode))
        )
      const model = ChatModel.scripted([ping(1), { text: "done-secret" }])
      yield* Chain.run(Chain.make({ user: "go secret", toolkit }), { mode: hushed }).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.provideService(RunEvent.Observer, observerInto(outer))
      )
      const seen = { outer: outer.map(eventJson), insideMode: insideMode.map(eventJson) }
      expect(seen.outer.map((e) => JSON.parse(e)._tag)).toEqual(["RunStarted", "RunFinished"])
      expect(seen.insideMode.length).toBeGreaterThan(3)
      expect(JSON.stringify(seen.insideMode)).not.toMatch(/secret/)
    }))
  it.effect("a run started by a custom mode inside another run (not in a handler) has its own budget; the outer keeps its own", () =>
    Effect.gen(function*() {
      const handlers = toolkit.toLayer({ ping: () => Effect.succeed("pong") })
      const model = ChatModel.scripted([() => ping(1)], { repeat: true } as never)
      const inner: Array<string> = []
      // Before each round of the outer loop, a sub-run with maxRuns 1 in the outer run's own context.
      const nesting: Mode.Mode<ChatModel.ChatModel | Tool.Handler<"ping">> = (chain) =>
        Modes.loop(chain, (self) =>
          self.pipe(
            Step.executeTools,
            Step.make((outer) =>
              Chain.run(Chain.make({ user: "sub", toolkit }), { mode: bare, maxRuns: 1 }).pipe(
                Effect.match({ onFailure: (e) => void inner.push(`${e.reason._tag} ${e.chain.runCount}`), onSuccess: () => void inner.push("ok") }),
                Effect.as(new Outcome.Continue(outer))
              )
            ),
            Step.callLlm
          ))
      const result = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: nesting, maxRuns: 3 }).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.result
      )
      const seen = { outer: result._tag === "Failure" ? `${result.failure.reason._tag} ${result.failure.chain.runCount}` : "ok", inner }
      expect(seen.outer).toBe("MaxRunsExceeded 3")
      expect(inner.every((s) => s === "MaxRunsExceeded 1")).toBe(true)
      expect(inner.length).toBeGreaterThanOrEqual(3)
    }))
})

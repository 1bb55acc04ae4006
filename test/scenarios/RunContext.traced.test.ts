/**
 * Traced runs whose context differs from the mode's (the `invoke_agent`
 * span, `Telemetry.AgentName` taken away from the run inside, OmitContent's
 * concealing, the `output` option's structured run): spans, events and the
 * failures they record are those of the context the run started in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Schedule, Schema, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, RunEvent, Telemetry } from "../../src/index.ts"
import { settled } from "../support/stream.ts"
import { recording } from "../support/recordingTracer.ts"
import { eventJson, observerInto, oddClock, spanRows } from "../support/runContextScenarios.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const Fails = Tool.make("fails", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failure: Schema.String })
const Nest = Tool.make("nest", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup, Fails, Nest)
const Verdict = Schema.Struct({ approved: Schema.Boolean, reason: Schema.String })

const scenario = (omit: boolean, agentName: string | undefined, structured: boolean, failing: boolean) =>
  Effect.gen(function*() {
    const tracer = recording()
    const seen: Array<RunEvent.RunEvent> = []
    const innerSeen: Array<RunEvent.RunEvent> = []
    const odd = oddClock()
    const inner = ChatModel.scripted([{ text: "inner-secret answer" }])
    const handlers = toolkit.toLayer({
      lookup: ({ q }) => Effect.as(Effect.sleep("25 millis"), `found secret-${q}`),
      fails: ({ q }) => Effect.fail(`no secret-${q}`),
      nest: ({ q }) =>
        Chain.run(Chain.make({ user: `inner secret-${q}` }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide(inner.layer),
          // Its own observer, the opposite privacy, and a clock of its own.
          Effect.provideService(RunEvent.Observer, observerInto(innerSeen)),
          Effect.provideService(Privacy.OmitContent, !omit),
          Effect.provideService(Telemetry.AgentName, "inner-agent"),
          Effect.provideService(Clock.Clock, odd.clock),
          Effect.map((o) => Chain.text(o.chain)),
          Effect.orElseSucceed(() => "inner failed")
        )
    })
    const final = (params: unknown) => ({ toolCalls: [{ name: "final_answer", params }] })
    const turns = [
      { toolCalls: [{ name: "lookup", params: { q: "a" } }, { name: "fails", params: { q: "b" } }, { name: "nest", params: { q: "c" } }], latency: "10 millis" },
      ...(failing ? [{ fail: "busy secret" }, { fail: "down secret" }] : []),
      ...(structured ? [final({ approved: "yes" }), final({ approved: true, reason: "secret ok" })] : [{ text: "outer secret done", latency: "5 millis" }])
    ] as ReadonlyArray<ChatModel.ScriptedTurn>
    const model = ChatModel.scripted(turns)
    const options = {
      mode: Mode.whileNeedsResponse,
      retry: Schedule.recurs(1),
      ...(structured ? { output: Verdict } : {})
    }
    const run = Chain.run(Chain.make({ user: "go secret", toolkit }), options as { mode: typeof Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, handlers]),
      Effect.provideService(RunEvent.Observer, observerInto(seen)),
      Effect.provideService(Privacy.OmitContent, omit),
      agentName === undefined ? (e) => e : Effect.provideService(Telemetry.AgentName, agentName),
      Effect.provideService(Tracer.Tracer, tracer.tracer),
      Effect.exit
    )
    const exit = yield* settled(run)
    return {
      exit: Exit.isSuccess(exit)
        ? { ok: exit.value._tag, text: Chain.text(exit.value.chain), output: (exit.value as { output?: unknown }).output ?? null }
        : { failed: String(exit.cause) .slice(0, 300) },
      events: seen.map(eventJson),
      inner: innerSeen.map(eventJson),
      spans: spanRows(tracer.spans),
      oddReads: odd.reads.count
    }
  })

describe("traced runs", () => {
  for (const omit of [false, true]) {
    for (const agentName of [undefined, "outer-agent"]) {
      for (const structured of [false, true]) {
        for (const failing of [false, true]) {
          it.effect(`omit=${omit} agent=${agentName} structured=${structured} failing=${failing}`, () =>
            Effect.gen(function*() {
              const seen = yield* scenario(omit, agentName, structured, failing)
              const all = JSON.stringify(seen.events) + JSON.stringify(seen.spans)
              if (omit) expect(all).not.toMatch(/secret/)
              else expect(JSON.stringify(seen.events)).toMatch(/secret/)
              // The inner run's privacy is its own (the opposite).
              if (omit) expect(JSON.stringify(seen.inner)).toMatch(/secret/)
              else expect(JSON.stringify(seen.inner)).not.toMatch(/secret/)
              // Only the inner run's spans carry its agent name; the outer's, the outer name.
              const agents = seen.spans.filter((s) => s.name.startsWith("invoke_agent")).map((s) => s.attributes["gen_ai.agent.name"] ?? null)
              expect(agents).toEqual([agentName ?? null, "inner-agent"])
              expect(seen.spans.every((s) => s.status !== "open")).toBe(true)
              // Durations: the inner run's by its own clock (7 ms a read), the outer's by TestClock.
              const durations = (rows: ReadonlyArray<string>) => rows.flatMap((e) => /"durationMillis":(\d+)/.exec(e)?.slice(1).map(Number) ?? [])
              expect(durations(seen.inner)).toEqual([7])
              expect(durations(seen.events)).toContain(10)
              expect(durations(seen.events)).toContain(25)
              expect(durations(seen.events)).not.toContain(7)
            }))
        }
      }
    }
  }
})

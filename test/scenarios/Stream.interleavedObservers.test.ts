/**
 * The loop remembers only the last run context it read
 * (src/internal/runContext.ts): runs at the same time, each with an
 * observer and a privacy setting of its own, take turns with it (their tools
 * sleep, so their steps interleave), and each runs a sub-agent inside a tool
 * handler with yet another observer. Every observer sees its own run's
 * events only, and an `OmitContent` run's observer no content.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, Privacy, RunEvent } from "../../src/index.ts"
import { whileNeeds } from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

const toolkit = Toolkit.make(AskExpert)

const observerInto = (seen: Array<string>): RunEvent.Observer => ({
  emit: (event) => Effect.sync(() => void seen.push(JSON.stringify(event))),
  streaming: false
})

describe("runs at the same time keep their own observers", () => {
  it.live("12 interleaved runs, each with a sub-agent of its own, see only their own events", () =>
    Effect.gen(function*() {
      const runs = Array.from({ length: 12 }, (_, i) => ({ i, omit: i % 3 === 0, seen: [] as Array<string>, inner: [] as Array<string> }))
      yield* Effect.forEach(runs, ({ i, inner, omit, seen }) => {
        const marker = `marker-${i}-x`
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "ask_expert", params: { q: `q-${marker}` } }] },
          { toolCalls: [{ name: "ask_expert", params: { q: `again-${marker}` } }] },
          { text: `done-${marker}` }
        ])
        const handlers = toolkit.toLayer({
          ask_expert: ({ q }) =>
            Effect.gen(function*() {
              yield* Effect.sleep(`${1 + ((i * 7) % 5)} millis`)
              // A sub-agent with its own observer (and the opposite privacy), on the handler's fiber.
              const expert = ChatModel.scripted([{ text: `inner-${marker}` }])
              const sub = Chain.run(Chain.make({ user: `sub-${marker}` }), whileNeeds).pipe(
                Effect.provideService(RunEvent.Observer, observerInto(inner)),
                Effect.provideService(Privacy.OmitContent, !omit),
                Effect.provide(expert.layer),
                Effect.orDie
              )
              yield* sub
              yield* Effect.yieldNow
              return `answer ${q}`
            })
        })
        const layers = Layer.mergeAll(model.layer, handlers, omit ? Privacy.layerOmitContent : Layer.empty)
        return Chain.run(Chain.make({ user: `go ${marker}`, toolkit }), whileNeeds).pipe(
          Effect.provideService(RunEvent.Observer, observerInto(seen)),
          Effect.provide(layers),
          Effect.orDie
        )
      }, { concurrency: "unbounded" })

      for (const { i, inner, omit, seen } of runs) {
        const marker = `marker-${i}-x`
        expect(seen.length, `run ${i}`).toBeGreaterThan(4)
        expect(inner.length, `run ${i} sub-agents`).toBeGreaterThan(4)
        // Only its own events: no other run's marker, and no sub-agent's events (their user text).
        for (const text of [...seen, ...inner]) {
          const others = text.match(/marker-\d+-x/g) ?? []
          for (const other of others) expect(other, `run ${i}: ${text}`).toBe(marker)
        }
        expect(seen.some((text) => text.includes("sub-")), `run ${i} saw a sub-agent's event`).toBe(false)
        // Privacy of each observer's own run.
        if (omit) expect(seen.some((text) => text.includes(marker)), `run ${i} (OmitContent) saw content`).toBe(false)
        else expect(seen.some((text) => text.includes(`done-${marker}`)), `run ${i} saw its answer`).toBe(true)
        if (!omit) expect(inner.some((text) => text.includes(marker)), `run ${i}'s sub-agents (OmitContent) saw content`).toBe(false)
        else expect(inner.some((text) => text.includes(`inner-${marker}`)), `run ${i}'s sub-agents saw their answer`).toBe(true)
        // Each run and each sub-agent started and finished once per run.
        expect(seen.filter((text) => text.includes("\"RunStarted\"")).length, `run ${i}`).toBe(1)
        expect(inner.filter((text) => text.includes("\"RunStarted\"")).length, `run ${i} sub-agents`).toBe(2)
      }
    }))
})

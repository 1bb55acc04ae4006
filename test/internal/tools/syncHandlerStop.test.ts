/**
 * A handler's `Effect.sync` that interrupts the run's stop signal (with
 * `Effect.runSync` inside it) is cut short at its end, as a fiber running
 * it is: the round's calls all stay pending, as with the same function in
 * `Effect.suspend`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, StopSignal } from "../../../src/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)

const run = (concurrency: number | "unbounded", wrap: (f: () => string) => Effect.Effect<string>) =>
  Effect.gen(function*() {
    const stop = yield* StopSignal.make
    const ran: Array<string> = []
    const model = ChatModel.scripted([
      { toolCalls: ["q0", "q1", "q2"].map((q, i) => ({ id: `c${i}`, name: "echo", params: { q } })) },
      { text: "done" }
    ])
    const handlers = toolkit.toLayer({
      echo: ({ q }) =>
        wrap(() => {
          ran.push(q)
          if (q === "q0") Effect.runSync(StopSignal.interrupt(stop))
          return q
        })
    })
    const outcome = yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse, stop, concurrency }).pipe(
      Effect.provide([model.layer, handlers])
    )
    return { tag: outcome._tag, ran, pending: outcome.chain.pendingToolCalls.map((c) => c.id), results: outcome.chain.roundResults.map((r) => r.id) }
  })

describe("StopSignal.interrupt from inside an Effect.sync handler", () => {
  for (const concurrency of ["unbounded", 2, 1] as const) {
    it.effect(`concurrency ${concurrency}: Effect.sync settles as Effect.suspend(Effect.sync) does`, () =>
      Effect.gen(function*() {
        const now = yield* run(concurrency, (f) => Effect.sync(f))
        const general = yield* run(concurrency, (f) => Effect.suspend(() => Effect.sync(f)))
        expect(now).toEqual(general)
      }))
  }
})

/**
 * Interruption: a run interrupted while several tools run, or while the model
 * is answering, leaves nothing running, runs every tool's finalizer, and
 * starts no further work.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, Mode } from "../../src/index.ts"

const Slow = Tool.make("slow", { parameters: Schema.Struct({ ms: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(Slow)

const tracked = () => {
  const state = { started: 0, running: 0, finalized: 0, completed: 0 }
  const layer = toolkit.toLayer({
    slow: ({ ms }) =>
      Effect.sync(() => {
        state.started++
        state.running++
      }).pipe(
        Effect.andThen(Effect.sleep(ms)),
        Effect.andThen(Effect.sync(() => {
          state.completed++
          return "done"
        })),
        Effect.ensuring(Effect.sync(() => {
          state.running--
          state.finalized++
        }))
      )
  })
  return { state, layer }
}

describe("interruption", () => {
  it.effect("mid-round with three tools running: every finalizer runs, nothing is left running, no model call follows", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const model = ChatModel.scripted([
        { toolCalls: [1000, 2000, 3000].map((ms) => ({ name: "slow", params: { ms } })) },
        { text: "never reached" }
      ])
      const fiber = yield* Effect.forkChild(
        Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, tools.layer])
        )
      )
      yield* TestClock.adjust("1500 millis")
      expect(tools.state).toEqual({ started: 3, running: 2, finalized: 1, completed: 1 })
      yield* Fiber.interrupt(fiber)
      expect(tools.state).toEqual({ started: 3, running: 0, finalized: 3, completed: 1 })
      yield* TestClock.adjust("10 seconds")
      expect(tools.state.completed).toBe(1)
      expect(model.calls).toBe(1)
    }))

  it.effect("mid-model-call: no tool starts and the model is not called again", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const model = ChatModel.scripted([{ toolCalls: [{ name: "slow", params: { ms: 10 } }], latency: "5 seconds" }])
      const fiber = yield* Effect.forkChild(
        Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, tools.layer])
        )
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("1 minute")
      expect(tools.state).toEqual({ started: 0, running: 0, finalized: 0, completed: 0 })
      expect(model.calls).toBe(1)
    }))
})

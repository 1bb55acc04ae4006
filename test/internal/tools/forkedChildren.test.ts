/**
 * A fiber a handler leaves behind (Effect.forkChild) in a concurrent round ends with its own
 * call's fiber: it cannot run on into a later call of the round and mark that call as a direct
 * return (a round that reused a finished call's fiber for the next call let it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, DirectReturn, Mode } from "../../../src/index.ts"

const T = Tool.make("t", { parameters: Schema.Struct({ kind: Schema.String, ms: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(T)

/**
 * One round of two calls at `concurrency`: the first's handler forks `child` and returns at once,
 * the second sleeps 20 ms; then a text answer. The outcome and the model's call count.
 */
const roundWith = (concurrency: 2 | "unbounded", child: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const handlers = toolkit.toLayer({
      t: ({ kind, ms }) =>
        kind === "bg" ? Effect.as(Effect.forkChild(child), "bg") : Effect.as(Effect.sleep(`${ms} millis`), "slept")
    })
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "t", params: { kind: "bg", ms: 5 } }, { name: "t", params: { kind: "sleep", ms: 20 } }] },
      { text: "done" }
    ])
    const fiber = yield* Effect.forkChild(
      Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, concurrency }).pipe(
        Effect.provide([model.layer, handlers])
      )
    )
    yield* TestClock.adjust("1 second")
    return { outcome: yield* Fiber.join(fiber), modelCalls: model.calls }
  })

describe("a handler's child fiber, in a multi-call round", () => {
  for (const concurrency of [2, "unbounded"] as const) {
    it.effect(`concurrency ${concurrency}: is interrupted when its own call ends, as with Effect.forEach`, () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        yield* roundWith(concurrency, Effect.andThen(Effect.sleep("5 millis"), Effect.sync(() => log.push("child done"))))
        expect(log).toEqual([])
      }))

    it.effect(`concurrency ${concurrency}: marking a direct return 5 ms later marks no call of the round`, () =>
      Effect.gen(function*() {
        const { modelCalls, outcome } = yield* roundWith(concurrency, Effect.andThen(Effect.sleep("5 millis"), DirectReturn.mark))
        expect(outcome._tag).toBe("Ok")
        expect(outcome._tag === "Ok" ? outcome.reason : undefined).toBe("done")
        expect(outcome.chain.lastToolResults.map((result) => result.directReturn === true)).toEqual([false, false])
        expect(modelCalls).toBe(2)
      }))
  }
})

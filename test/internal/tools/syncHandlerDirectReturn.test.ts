/**
 * A handler's `Effect.sync` that marks its call for direct return, by running
 * `DirectReturn.mark` in the context of the fiber it runs on, marks that call:
 * run at once, it holds the run's direct-return slot as a fiber running it
 * would; next to a call that waits holding the slot, it runs like every effect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, DirectReturn, Mode } from "../../../src/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)

/** `DirectReturn.mark`, run in the context of the fiber running this. */
const markHere = () => {
  const fiber = Fiber.getCurrent()
  if (fiber === undefined) throw new Error("no fiber runs this")
  Effect.runSyncWith(fiber.context)(DirectReturn.mark)
}

const run = (calls: number) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([
      { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: "echo", params: { q: `q${i}` } })) },
      { text: "model answered" }
    ])
    const handlers = toolkit.toLayer({
      echo: ({ q }) =>
        Effect.sync(() => {
          markHere()
          return q
        })
    })
    const outcome = yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, handlers])
    )
    return { tag: outcome._tag, flags: outcome.chain.lastToolResults.map((r) => r.directReturn === true) }
  })

describe("DirectReturn.mark from inside Effect.sync", () => {
  for (const calls of [1, 2]) {
    it.effect(`${calls} call(s): every call is marked`, () =>
      Effect.gen(function*() {
        const { flags } = yield* run(calls)
        expect(flags).toEqual(Array.from({ length: calls }, () => true))
      }))
  }
})

describe("DirectReturn.mark from inside Effect.sync, next to a call that waits", () => {
  it.effect("the mark lands on the call that made it, not on the waiting call holding the run's slot", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ id: "c0", name: "echo", params: { q: "wait" } }, { id: "c1", name: "echo", params: { q: "mark" } }] },
        { text: "model answered" }
      ])
      const handlers = toolkit.toLayer({
        echo: ({ q }) =>
          q === "wait"
            ? Effect.as(Effect.yieldNow, q)
            : Effect.sync(() => {
              markHere()
              return q
            })
      })
      const outcome = yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(outcome.chain.lastToolResults.map((r) => [r.id, r.directReturn === true])).toEqual([["c0", false], ["c1", true]])
    }))
})

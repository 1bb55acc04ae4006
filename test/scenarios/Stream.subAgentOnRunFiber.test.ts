/**
 * In a watched run (`Chain.stream`), a handler's function and its `Effect.sync` run on the fiber
 * settling the call, whose context is the run's own, observer included. A sub-agent started there
 * through that fiber's context (`Fiber.getCurrent()`) must report nothing into the outer stream, as a
 * sub-agent started from the handler's effect never does (it runs with `RunEvent.silent`). An
 * observer the handler gives its sub-agent still sees the sub-agent's events.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, RunEvent } from "../../src/index.ts"
import { askExpertRows, events, row, whileNeeds } from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

const expertToolkit = Toolkit.make(AskExpert)

/** A sub-agent's run to the end, on the context of the fiber running now: its text. */
const subAgentNow = (q: string): string => {
  const fiber = Fiber.getCurrent()
  if (fiber === undefined) throw new Error("expected to run on a fiber")
  const expert = ChatModel.scripted([{ text: `expert says 42 to ${q}` }])
  const outcome = Effect.runSyncWith(fiber.context)(Chain.run(Chain.make({ user: q }), whileNeeds).pipe(Effect.orDie, Effect.provide(expert.layer)))
  return Chain.text(outcome.chain)
}

const ways = [
  ["in its Effect.sync", () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => subAgentNow(q)) })],
  ["in the handler's function", () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.succeed(subAgentNow(q)) })],
  ["in the handler's function, returning an Effect.sync", () =>
    expertToolkit.toLayer({
      ask_expert: ({ q }) => {
        const text = subAgentNow(q)
        return Effect.sync(() => text)
      }
    })]
] as const

describe("Chain.stream: a sub-agent started on the run's own fiber", () => {
  for (const [where, handlers] of ways) {
    it.effect(`${where}: the outer stream is still one run's events`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "?" } }] }, { text: "It is 42." }])
        const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
          Effect.provide([model.layer, handlers()])
        )
        expect(seen.map(row)).toEqual(askExpertRows("expert says 42 to ?"))
      }))
  }

  it.effect("an observer the handler's Effect.sync gives its sub-agent sees the sub-agent's run, and the outer stream does not", () =>
    Effect.gen(function*() {
      const own: Array<string> = []
      const mine: RunEvent.Observer = { emit: (event) => Effect.sync(() => own.push(event._tag)), streaming: false }
      const handlers = expertToolkit.toLayer({
        ask_expert: ({ q }) =>
          Effect.sync(() => {
            const fiber = Fiber.getCurrent()
            if (fiber === undefined) throw new Error("expected to run on a fiber")
            const expert = ChatModel.scripted([{ text: `expert says 42 to ${q}` }])
            const run = Chain.run(Chain.make({ user: q }), whileNeeds).pipe(
              Effect.orDie,
              Effect.provide(expert.layer),
              Effect.provideService(RunEvent.Observer, mine)
            )
            return Chain.text(Effect.runSyncWith(fiber.context)(run).chain)
          })
      })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "?" } }] }, { text: "It is 42." }])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(own).toEqual(["RunStarted", "ModelCallStarted", "ModelCallFinished", "RunFinished"])
      expect(seen.filter((event) => event._tag === "RunStarted" || event._tag === "RunFinished").map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        `RunFinished done "It is 42."`
      ])
      expect(seen.map(row)).toContain(`ToolCallFinished ask_expert#call_1_1 succeeded "expert says 42 to ?" 0ms`)
    }))
})

/**
 * In a watched run, a tool handler's own code (its function, its `Effect.sync` run at once on the fiber
 * settling the call) runs with that fiber in the handler's context: a run started through
 * `Fiber.getCurrent()`'s context, at once or later in the background, as `Chain.run`, a Step pipeline or
 * a mode called directly, reports nothing into the outer stream. Before 2026-11-27 (eighth session) the
 * handler's function ran in the run's own context, and a sub-agent started from it reported into the
 * outer stream.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Step } from "../../src/index.ts"
import { events, type Event, whileNeeds } from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

const expertToolkit = Toolkit.make(AskExpert)

/** A sub-agent's run, with its own scripted model. */
const subAgent = (q: string) =>
  Chain.run(Chain.make({ user: q }), whileNeeds).pipe(
    Effect.map((outcome) => Chain.text(outcome.chain)),
    Effect.orDie,
    Effect.provide(ChatModel.scripted([{ text: `expert on ${q}` }]).layer)
  )

/** Starts the sub-agent in the background on the context of the fiber running now, after a yield. */
const inBackgroundOnCurrentContext = (q: string): string => {
  const fiber = Fiber.getCurrent()
  if (fiber === undefined) throw new Error("expected to run on a fiber")
  Effect.runForkWith(fiber.context)(Effect.andThen(Effect.yieldNow, subAgent(q)))
  return "started"
}

/** A sub-agent's loop run now without Chain.run (a Step pipeline, or a mode called directly) on the context of the fiber running now. */
const loopNow = (q: string, how: "steps" | "mode"): string => {
  const fiber = Fiber.getCurrent()
  if (fiber === undefined) throw new Error("expected to run on a fiber")
  const chain = Chain.make({ user: q })
  const loop = how === "steps" ? Step.start(chain).pipe(Step.callLlm) : Mode.whileNeedsResponse(chain, {})
  const outcome = Effect.runSyncWith(fiber.context)(loop.pipe(Effect.provide(ChatModel.scripted([{ text: `expert on ${q}` }]).layer)))
  return Chain.text(outcome.chain)
}

const ways = [
  ["a Step pipeline run on Fiber.getCurrent()'s context in the handler's Effect.sync", () =>
    expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => loopNow(q, "steps")) })],
  ["Mode.whileNeedsResponse called directly on Fiber.getCurrent()'s context in the handler's Effect.sync", () =>
    expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => loopNow(q, "mode")) })],
  ["a background fiber forked on Fiber.getCurrent()'s context in the handler's Effect.sync", () =>
    expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => inBackgroundOnCurrentContext(q)) })],
  ["a background fiber forked on Fiber.getCurrent()'s context in the handler's function", () =>
    expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.succeed(inBackgroundOnCurrentContext(q)) })],
  ["a background fiber forked on Fiber.getCurrent()'s context after an async boundary in the handler's effect", () =>
    expertToolkit.toLayer({
      ask_expert: ({ q }) => Effect.andThen(Effect.yieldNow, Effect.sync(() => inBackgroundOnCurrentContext(q)))
    })],
  ["Effect.forkDetach of the sub-agent in the handler's effect", () =>
    expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.as(Effect.forkDetach(Effect.andThen(Effect.yieldNow, subAgent(q))), "started") })]
] as const

/** The run and model-call events: one run of two model calls is 6. */
const runsIn = (seen: ReadonlyArray<Event>) =>
  seen.filter((event) => event._tag === "RunStarted" || event._tag === "RunFinished" || event._tag === "ModelCallStarted" || event._tag === "ModelCallFinished").length

describe("a sub-agent started from a handler in a watched run", () => {
  for (const [where, handlers] of ways) {
    it.effect(`${where}: the outer stream is still one run's events`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "ask_expert", params: { q: "x" } }] },
          { text: "ok", latency: "100 millis" }
        ])
        const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
          Effect.provide([model.layer, handlers()])
        )
        expect(runsIn(seen)).toBe(6)
      }))
  }
})

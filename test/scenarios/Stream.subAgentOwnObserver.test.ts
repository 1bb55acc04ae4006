/**
 * A sub-agent that a tool handler's own code runs with an observer of its own (`RunEvent.Observer`
 * provided explicitly, or a `Chain.stream` it drains) sees its own events, whether or not the outer run is
 * watched; the outer stream does not.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, RunEvent } from "../../src/index.ts"
import { events, toolResult, whileNeeds } from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

const expertToolkit = Toolkit.make(AskExpert)

/** A sub-agent run to its end now, watched by an observer of its own: the tags it saw. */
const watchedSubAgent = (q: string): string => {
  const seen: Array<string> = []
  const observer: RunEvent.Observer = { emit: (event) => Effect.sync(() => void seen.push(event._tag)), streaming: false }
  const expert = ChatModel.scripted([{ text: `expert on ${q}` }])
  Effect.runSync(
    Chain.run(Chain.make({ user: q }), whileNeeds).pipe(
      Effect.provideService(RunEvent.Observer, observer),
      Effect.orDie,
      Effect.provide(expert.layer)
    )
  )
  return seen.join(",")
}

/** A sub-agent's own Chain.stream, collected now: the tags of its events. */
const streamedSubAgent = (q: string): string => {
  const expert = ChatModel.scripted([{ text: `expert on ${q}` }])
  const collected = Effect.runSync(
    Stream.runCollect(Chain.stream(Chain.make({ user: q }), whileNeeds)).pipe(Effect.orDie, Effect.provide(expert.layer))
  )
  return collected.map((event) => event._tag).join(",")
}

const subAgentTags = "RunStarted,ModelCallStarted,ModelCallFinished,RunFinished"
const streamedTags = "RunStarted,ModelCallStarted,TextDelta,TextDelta,TextDelta,ModelCallFinished,RunFinished"

const ways = [
  ["its own observer, in the handler's Effect.sync", subAgentTags, () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => watchedSubAgent(q)) })],
  ["its own observer, in the handler's function", subAgentTags, () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.succeed(watchedSubAgent(q)) })],
  ["its own Chain.stream, in the handler's Effect.sync", streamedTags, () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => streamedSubAgent(q)) })]
] as const

const outerModel = () => ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "x" } }] }, { text: "ok" }])

describe("a sub-agent the handler watches itself", () => {
  for (const [where, expected, handlers] of ways) {
    it.effect(`${where}: sees its events when the outer run is unwatched (Chain.run)`, () =>
      Effect.gen(function*() {
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds).pipe(
          Effect.provide([outerModel().layer, handlers()])
        )
        expect(toolResult(outcome.chain)).toBe(expected)
      }))

    it.effect(`${where}: sees its events when the outer run is watched (Chain.stream)`, () =>
      Effect.gen(function*() {
        const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
          Effect.provide([outerModel().layer, handlers()])
        )
        const finished = seen.find((event) => event._tag === "ToolCallFinished")
        expect(finished !== undefined && "result" in finished ? finished.result : undefined).toBe(expected)
      }))
  }
})

/**
 * An ensemble that a tool handler runs, with a sink of its own, sees its agents' runs whether or not the
 * run that called the tool is watched.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { events, toolResult, whileNeeds } from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

const expertToolkit = Toolkit.make(AskExpert)

/** An ensemble of one agent run to its end now, with a sink of its own: the tags of its events. */
const ensembleNow = (q: string): string => {
  const seen: Array<string> = []
  const sink = Layer.succeed(EnsembleEvent.Sink, {
    publish: (event) => Effect.sync(() => void seen.push(event._tag === "AgentRun" ? `AgentRun:${event.event._tag}` : event._tag))
  })
  const program = Effect.gen(function*() {
    const expert = yield* Agent.make({ role: "Expert", goal: "Answer" })
    const task = yield* Task.make({ description: `Answer ${q}`, expectedOutput: "An answer", agent: expert })
    const ensemble = yield* Ensemble.make({ agents: [expert], tasks: [task] })
    return yield* Ensemble.run(ensemble)
  })
  Effect.runSync(program.pipe(Effect.orDie, Effect.provide(Layer.merge(ChatModel.scripted([{ text: "42" }]).layer, sink))))
  return seen.filter((tag) => tag.startsWith("AgentRun:")).join(",")
}

const agentRun = "AgentRun:RunStarted,AgentRun:ModelCallStarted,AgentRun:TextDelta,AgentRun:ModelCallFinished,AgentRun:RunFinished"

const handlers = () => expertToolkit.toLayer({ ask_expert: ({ q }) => Effect.sync(() => ensembleNow(q)) })
const outerModel = () => ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "x" } }] }, { text: "ok" }])

describe("an ensemble run by a handler's Effect.sync", () => {
  it.effect("its agents' runs reach its own sink when the outer run is unwatched (Chain.run)", () =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds).pipe(
        Effect.provide([outerModel().layer, handlers()])
      )
      expect(toolResult(outcome.chain)).toBe(agentRun)
    }))

  it.effect("its agents' runs reach its own sink when the outer run is watched (Chain.stream)", () =>
    Effect.gen(function*() {
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
        Effect.provide([outerModel().layer, handlers()])
      )
      const finished = seen.find((event) => event._tag === "ToolCallFinished")
      expect(finished !== undefined && "result" in finished ? finished.result : undefined).toBe(agentRun)
    }))
})

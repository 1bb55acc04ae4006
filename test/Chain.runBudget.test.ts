/**
 * Every model call of a run honours the run's `maxRuns`, whatever the
 * mode's pipeline: a custom mode with no `checkMaxRuns` step still stops at
 * the limit, and a run started inside a tool handler has a budget of its
 * own, not the run around it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Step } from "../src/index.ts"

const Ping = Tool.make("ping", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Ping)
const pingCall: ChatModel.ScriptedReply = { toolCalls: [{ name: "ping", params: {} }] }

/** Runs tools, then asks the model, while the chain needs a response: no `checkMaxRuns` anywhere. */
const bare: Mode.Mode<ChatModel.ChatModel> = (chain) => Mode.loop(chain, (self) => self.pipe(Step.executeTools, Step.callLlm))

describe("a run's maxRuns, whatever the mode's pipeline", () => {
  it.effect("a custom mode with no checkMaxRuns stops at the run's limit", () =>
    Effect.gen(function*() {
      const handlers = toolkit.toLayer({ ping: () => Effect.succeed("pong") })
      const model = ChatModel.scripted([pingCall, pingCall, pingCall, pingCall, { text: "done" }])
      const ran = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: bare, maxRuns: 2 }).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.result
      )
      expect(ran._tag === "Failure" && ran.failure.reason._tag).toBe("MaxRunsExceeded")
      expect(model.calls).toBe(2)
    }))

  it.effect("a run inside a tool handler is held to its own maxRuns, not the outer run's", () =>
    Effect.gen(function*() {
      const inner = ChatModel.scripted([pingCall, pingCall, pingCall, { text: "inner done" }])
      const innerHandlers = toolkit.toLayer({ ping: () => Effect.succeed("pong") })
      const Nest = Tool.make("nest", { parameters: Schema.Struct({}), success: Schema.String })
      const outerKit = Toolkit.make(Nest)
      const outerHandlers = outerKit.toLayer({
        nest: () =>
          Chain.run(Chain.make({ user: "inner", toolkit }), { mode: bare, maxRuns: 1 }).pipe(
            Effect.provide([inner.layer, innerHandlers]),
            Effect.match({ onFailure: (error) => `inner ${error.reason._tag}`, onSuccess: (outcome) => `inner ${outcome._tag}` })
          )
      })
      const outer = ChatModel.scripted([{ toolCalls: [{ name: "nest", params: {} }] }, { text: "outer done" }])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: outerKit }), { mode: bare, maxRuns: 10 }).pipe(
        Effect.provide([outer.layer, outerHandlers])
      )
      expect(Chain.text(outcome.chain)).toBe("outer done")
      const results = outcome.chain.messages.flatMap((message) =>
        message.role === "tool" ? message.content.flatMap((part) => part.type === "tool-result" ? [part.result] : []) : []
      )
      expect(results).toEqual(["inner MaxRunsExceeded"])
      expect(inner.calls).toBe(1)
    }))
})

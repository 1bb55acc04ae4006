/**
 * `Step.forRun` hands each caller an object of its own: a custom mode that
 * changes a step in the object it was given (from JavaScript, or through a
 * cast) changes no other run, built-in modes included, though runs with the
 * same options share the steps themselves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, NoToolPolicy, Step } from "../src/index.ts"
import { Submit } from "./support/tools.ts"

const toolkit = Toolkit.make(Submit)
const handlers = toolkit.toLayer({ submit: ({ answer }) => Effect.succeed(`submitted ${answer}`) })

const run = (mode: Mode.Mode<ChatModel.ChatModel>, maxRuns = 7) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([{ text: "plain answer" }])
    const o = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode, maxRuns }).pipe(Effect.provide([model.layer, handlers]))
    return `${o._tag} ${o.reason} ${JSON.stringify((o as { extra?: unknown }).extra)}`
  })

describe("the shared RunSteps object", () => {
  it.effect("a custom mode that adjusts its steps object in place changes a later Mode.untilSuccess run with the same option values", () =>
    Effect.gen(function*() {
      // A custom mode: whileNeedsResponse, but a plain answer ends with a fixed result.
      const custom: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
        const s = Step.forRun(chain, options) as { -readonly [K in keyof Step.RunSteps]: Step.RunSteps[K] }
        s.checkNoTool = Step.checkNoTool(NoToolPolicy.result("custom"))
        return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm, s.checkNoTool))
      }
      expect(yield* run(custom)).toBe("Ok no-tool-result \"custom\"")
      // untilSuccess with the same option values: a plain answer ends it with "done" and no extra.
      expect(yield* run(Mode.untilSuccess)).toBe("Ok done undefined")
      // A later built-in run with the same option values: its own policy ("done"), not the custom mode's.
      expect(yield* run(Mode.whileNeedsResponse)).toBe("Ok done undefined")
    }))

  it("the steps object is frozen (or a fresh one each call)", () => {
    const chain = Chain.make({ user: "go", toolkit })
    const s = Step.forRun(chain, { maxRuns: 3 })
    expect(Object.isFrozen(s) || Step.forRun(chain, { maxRuns: 3 }) !== s).toBe(true)
  })
})

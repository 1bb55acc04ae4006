/**
 * The built-in modes keep their promises when a caller runs them without
 * `Chain.run` (which provides the run-wide `maxRuns` budget that every
 * `Step.callLlm` honours), and the edges of their pipelines that a run
 * through `Chain.run` alone cannot tell apart:
 *
 * - `Mode.step` called directly is bounded by its own `checkMaxRuns`;
 * - `Mode.untilToolUsed` on a chain that already ends with a plain answer
 *   applies its no-tool reminder before anything else, so the model is asked
 *   again (the chain needs no response, so a plain loop would end at once).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Prompt, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode, Outcome, Step } from "../src/index.ts"
import { Submit } from "./support/tools.ts"

const toolkit = Toolkit.make(Submit)
const handlers = toolkit.toLayer({ submit: ({ answer }) => Effect.succeed(`submitted ${answer}`) })
const callSubmit: ChatModel.ScriptedReply = { toolCalls: [{ name: "submit", params: { answer: "42" } }] }

describe("Mode.step called directly", () => {
  it.effect("shouldContinue always true: maxRuns model calls, then MaxRunsExceeded", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([callSubmit, callSubmit, callSubmit, { text: "never reached" }])
      const outcome = yield* Mode.step(Chain.make({ user: "go", toolkit }), { shouldContinue: () => true, maxRuns: 2 })
        .pipe(Effect.provide([model.layer, handlers]))
      expect(outcome._tag).toBe("Error")
      if (outcome._tag !== "Error") return
      expect(outcome.error).toBeInstanceOf(LoopError.MaxRunsExceeded)
      expect(model.requests.length).toBe(2)
      expect(outcome.chain.runCount).toBe(2)
      // the second call's tools ran before the limit: no call is left without its result
      expect(outcome.chain.pendingToolCalls).toEqual([])
    }))

  it.effect("without shouldContinue: one step, Ok 'step'", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([callSubmit])
      const outcome = yield* Mode.step(Chain.make({ user: "go", toolkit }), {}).pipe(Effect.provide([model.layer, handlers]))
      expect(outcome).toBeInstanceOf(Outcome.Ok)
      expect(outcome._tag === "Ok" && outcome.reason).toBe("step")
      expect(model.requests.length).toBe(1)
      expect(outcome.chain.pendingToolCalls.map((call) => call.name)).toEqual(["submit"])
    }))
})

describe("Mode.untilToolUsed on a chain that ends with a plain answer", () => {
  it.effect("the reminder comes first, then the model is asked again and the watched tool ends the run", () =>
    Effect.gen(function*() {
      const first = ChatModel.scripted([{ text: "Here is my answer, no tool." }])
      const answered = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([first.layer, handlers]))
      expect(answered.chain.needsResponse).toBe(false)

      const model = ChatModel.scripted([callSubmit])
      const outcome = yield* Chain.run(answered.chain, { mode: Mode.untilToolUsed("submit") })
        .pipe(Effect.provide([model.layer, handlers]))
      expect(outcome._tag === "Ok" && outcome.reason).toBe("tool-used")
      expect(model.requests.length).toBe(1)
      const last = model.requests[0].prompt.content.at(-1)
      expect(last?.role).toBe("user")
      const text = (last as Prompt.UserMessage).content.map((part) => (part.type === "text" ? part.text : "")).join("")
      expect(text).toBe("You answered without calling a tool. To finish, call submit.")
    }))
})

describe("rounds that complete at once", () => {
  it.effect("a loop whose every step completes at once runs 20,000 rounds without deepening the stack", () =>
    Effect.gen(function*() {
      let rounds = 0
      const outcome = yield* Mode.loop(
        Chain.make({ user: "go" }),
        (self) => self.pipe(Step.make((chain) => Effect.succeed(++rounds === 20000 ? new Outcome.Ok(chain, "done") : new Outcome.Continue(chain))))
      )
      expect(outcome._tag).toBe("Ok")
      expect(rounds).toBe(20000)
    }))
})

/**
 * Long runs whose rounds all complete at once (a scripted model, an `Effect.sync` tool) do not grow the
 * JavaScript stack: 2,000 rounds (tens of thousands of frames, were each round nested in the one before)
 * through every kind of loop, run and drained as a stream.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, type Outcome, Step } from "../../src/index.ts"

const Tick = Tool.make("tick", { parameters: Schema.Struct({}), success: Schema.Number })
const toolkit = Toolkit.make(Tick)

const rounds = 2_000

const setup = () => {
  let n = 0
  const handlers = toolkit.toLayer({ tick: () => Effect.sync(() => ++n) })
  const turns = [...Array.from({ length: rounds }, () => ({ toolCalls: [{ name: "tick", params: {} }] })), { text: "done" }]
  return { handlers, model: ChatModel.scripted(turns), ticks: () => n }
}

const loopOfSteps: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
  const s = Step.forRun(chain, options)
  return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm))
}

const loopNotOfSteps: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
  const s = Step.forRun(chain, options)
  return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm, Effect.tap(() => Effect.void)))
}

const recursive = (chain: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
  Step.start(chain).pipe(Step.executeTools, Step.callLlm, Step.continueOrDone(recursive))
const viaRecursion: Mode.Mode<ChatModel.ChatModel> = (chain) => recursive(chain)

const modes = [
  ["Mode.whileNeedsResponse", Mode.whileNeedsResponse, {}],
  ["Mode.loop of steps", loopOfSteps, {}],
  ["Mode.loop of a body not made of steps alone", loopNotOfSteps, {}],
  ["Mode.step with shouldContinue", Mode.step, { shouldContinue: (chain: Chain.Chain) => chain.needsResponse }],
  ["a recursive Step.continueOrDone pipeline", viaRecursion, {}]
] as const

describe("2,000 rounds that complete at once", () => {
  for (const [name, mode, extra] of modes) {
    it.effect(`${name} through Chain.run`, () =>
      Effect.gen(function*() {
        const { handlers, model, ticks } = setup()
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode, maxRuns: rounds + 5, ...extra }).pipe(
          Effect.provide([model.layer, handlers])
        )
        expect(ticks()).toBe(rounds)
        expect(Chain.text(outcome.chain)).toBe("done")
      }), 120_000)
  }
  for (const [name, mode, extra] of modes.filter(([name]) => name !== "Mode.step with shouldContinue" && name !== "Mode.loop of a body not made of steps alone")) {
    it.effect(`${name} through a drained Chain.stream`, () =>
      Effect.gen(function*() {
        const { handlers, model, ticks } = setup()
        const count = yield* Stream.runCount(Chain.stream(Chain.make({ user: "go", toolkit }), { mode, maxRuns: rounds + 5, ...extra })).pipe(
          Effect.provide([model.layer, handlers])
        )
        expect(ticks()).toBe(rounds)
        expect(count).toBeGreaterThan(rounds * 4)
      }), 120_000)
  }
})

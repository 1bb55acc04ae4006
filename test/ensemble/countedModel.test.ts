/**
 * The ensemble's budget-counted model: a call is taken from the budget when
 * it runs (so an effect run twice counts twice, and one never run counts
 * nothing), or, through the loop's `generateNow` or its whole streamed turn
 * (`streamedTurn`), when it is made; so is a model made from it (a
 * transparent Proxy, `Object.create`, a frozen one).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Prompt } from "effect/ai"
import { Chain, ChatModel, Mode, Step, StopSignal } from "loopwork"
import * as Budget from "../../src/ensemble/internal/budget.ts"
import { generateNow } from "../../src/internal/generateNow.ts"
import { streamedTurn } from "../../src/internal/streamedTurn.ts"

const request: ChatModel.GenerateRequest = { prompt: Prompt.make("Hi"), tools: [], toolChoice: "auto" }

const countedModel = (maxModelCalls: number) =>
  Effect.gen(function*() {
    const budget = Budget.make({ maxModelCalls, maxDelegations: 0 })
    const model = yield* ChatModel.ChatModel
    return { budget, counted: Budget.counted(budget, model) }
  }).pipe(Effect.provide(ChatModel.scripted([{ text: "hello" }], { repeat: true }).layer))

describe("Budget.counted", () => {
  it.effect("generate takes the call when the effect runs: made and not run counts nothing, run twice counts twice", () =>
    Effect.gen(function*() {
      const { budget, counted } = yield* countedModel(5)
      const call = counted.generate(request)
      expect(budget.modelCalls).toBe(0)
      yield* call
      yield* call
      expect(budget.modelCalls).toBe(2)
    }))

  it.effect("generateNow takes the call when it is made", () =>
    Effect.gen(function*() {
      const { budget, counted } = yield* countedModel(5)
      const call = generateNow(counted, request)
      expect(budget.modelCalls).toBe(1)
      const parts = yield* call
      expect(parts.some((part) => part.type === "text" && part.text === "hello")).toBe(true)
      expect(budget.modelCalls).toBe(1)
    }))

  it.effect("the whole streamed turn of a scripted model is kept: taken when made, refused past the budget", () =>
    Effect.gen(function*() {
      const { budget, counted } = yield* countedModel(1)
      const turn = streamedTurn(counted)
      if (turn === undefined) throw new Error("the counted model lost the scripted model's streamed turn")
      const call = turn(request)
      expect(budget.modelCalls).toBe(1)
      const parts = yield* call
      expect(parts.map((part) => part.type)).toEqual(["text-start", "text-delta", "text-end", "finish"])
      const refused = yield* Effect.flip(turn(request))
      expect(refused.message).toContain("maxModelCalls (1) is used up")
    }))

  it.effect("past the budget both are refused without reaching the model", () =>
    Effect.gen(function*() {
      const { budget, counted } = yield* countedModel(1)
      yield* generateNow(counted, request)
      const lazily = yield* Effect.flip(counted.generate(request))
      const now = yield* Effect.flip(generateNow(counted, request))
      for (const error of [lazily, now]) {
        expect(error._tag).toBe("ModelCallFailed")
        expect(error.message).toContain("maxModelCalls (1) is used up")
      }
      expect(budget.exceeded).toBe("maxModelCalls")
    }))

  it.effect("a model call whose stop signal is interrupted before it starts takes nothing from the budget", () =>
    Effect.gen(function*() {
      const { budget, counted } = yield* countedModel(5)
      const stop = yield* StopSignal.make
      yield* StopSignal.interrupt(stop)
      // A mode whose model call is not preceded by checkStop: the call step itself sees the signal.
      const callOnly: Mode.Mode<ChatModel.ChatModel> = (chain, options) => Step.forRun(chain, options).callLlm(Step.start(chain))
      const outcome = yield* Chain.run(Chain.make({ user: "Hi" }), { mode: callOnly, stop }).pipe(
        Effect.provide(Layer.succeed(ChatModel.ChatModel, counted))
      )
      expect(outcome._tag).toBe("Pause")
      expect(budget.modelCalls).toBe(0)
    }))
})

describe("Budget.counted, and models made from it", () => {
  it.effect("is a plain object with the model's three keys", () =>
    Effect.gen(function*() {
      const { counted } = yield* countedModel(5)
      const shape = {
        keys: Object.keys(counted),
        plainProto: Object.getPrototypeOf(counted) === Object.prototype
      }
      expect(shape.keys).toEqual(["info", "generate", "stream"])
      expect(shape.plainProto).toBe(true)
    }))

  for (const [name, derive] of [
    ["a transparent proxy", (m: object) => new Proxy(m, {})],
    ["an object inheriting from it", (m: object) => Object.create(m)],
    ["a frozen one", (m: object) => Object.freeze(m)]
  ] as const) {
    it.effect(`${name}: generateNow takes the call when made, whole turn kept`, () =>
      Effect.gen(function*() {
        const { budget, counted } = yield* countedModel(5)
        const derived = derive(counted) as ChatModel.ChatModel["Service"]
        const call = generateNow(derived, request)
        const taken = budget.modelCalls
        yield* call
        const turn = streamedTurn(derived) !== undefined
        expect(budget.modelCalls).toBe(1)
        expect(taken).toBe(1)
        expect(turn).toBe(true)
      }))
  }
})

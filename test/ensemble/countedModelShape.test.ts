/** The ensemble's counted model: its shape, and a model derived from it (a Proxy, Object.create) counts its call when made, as the model itself does. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Prompt } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
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

describe("counted model", () => {
  it.effect("shape", () =>
    Effect.gen(function*() {
      const { counted } = yield* countedModel(5)
      const shape = {
        keys: Object.keys(counted),
        spreadKeys: Object.keys({ ...counted }),
        plainProto: Object.getPrototypeOf(counted) === Object.prototype,
        ownSymbols: Object.getOwnPropertySymbols(counted).length
      }
      console.log("shape", JSON.stringify(shape))
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
        console.log(name, JSON.stringify({ takenWhenMade: taken, after: budget.modelCalls, turn }))
        expect(taken).toBe(1)
        expect(turn).toBe(true)
      }))
  }
})

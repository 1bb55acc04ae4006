/**
 * Values with a `toJSON` method at the user level: tool-call arguments from a
 * JavaScript model holding one are refused by `maxArgumentSize` (they are not
 * JSON data), so the handler never sees arguments over the limit; a result
 * whose `toJSON` returns a bigint becomes a failed result, and the chain's
 * document serialises.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../src/index.ts"

const replyThenDone = (reply: ChatModel.ScriptedReply) =>
  ChatModel.scripted([(request) =>
    request.prompt.content.some((message) => message.role === "tool") ? { text: "done" } : reply
  ], { repeat: true })

const makeKit = () => {
  const sizes: Array<number> = []
  const Store = Tool.make("store", { parameters: Schema.Struct({ a: Schema.Unknown }), success: Schema.String })
  const Odd = Tool.make("odd", { parameters: Schema.Struct({}), success: Schema.Unknown })
  const toolkit = Toolkit.make(Store, Odd)
  const layer = toolkit.toLayer({
    store: (params) => Effect.sync(() => (sizes.push((JSON.stringify(params) ?? "").length), "stored")),
    odd: () => Effect.sync(() => Object.defineProperty({ a: 1 }, "toJSON", { value: () => 1n }))
  })
  return { sizes, layer, chain: Chain.make({ user: "go", toolkit }) }
}

const withToJson = (): unknown => {
  const value: Array<number> & { toJSON?: () => string } = [1]
  value.toJSON = () => "x".repeat(1_000)
  return value
}

const hidden = (): unknown => Object.defineProperty({}, "toJSON", { value: () => "x".repeat(1_000) })

describe("maxArgumentSize against toJSON", () => {
  for (const [name, make] of [["an array with toJSON", withToJson], ["an object with a hidden toJSON", hidden]] as const) {
    it.effect(`${name} under maxArgumentSize 100: the handler never sees arguments over 100 characters of JSON`, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = replyThenDone({ toolCalls: [{ id: "c1", name: "store", params: { a: make() } }] })
        const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse, maxArgumentSize: 100 }).pipe(
          Effect.provide([model.layer, kit.layer])
        )
        expect(outcome._tag).toBe("Ok")
        for (const size of kit.sizes) expect(size).toBeLessThanOrEqual(100)
      }))
  }

  it.effect("a result whose toJSON returns a bigint: Chain.encode's document serialises", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = replyThenDone({ toolCalls: [{ id: "c1", name: "odd", params: {} }] })
      const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      const [result] = outcome.chain.lastToolResults
      expect(result).toMatchObject({ isFailure: true, failureOrigin: "result" })
      expect(String(result.encoded)).toMatch(/cannot be stored: it is not JSON data \(it holds a value with a toJSON method\)/)
      const document = yield* Chain.encode(outcome.chain)
      expect(() => JSON.stringify(document)).not.toThrow()
    }))
})

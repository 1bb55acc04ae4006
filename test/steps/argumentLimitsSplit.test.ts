/**
 * A hand-written pipeline that raises the argument limit where the model's
 * answer arrives (`Step.callLlmWith({ maxArgumentSize })`) and runs the round
 * with plain `Step.executeTools`: the model's arguments, checked on arrival
 * under the raised limit, are not checked again by the round under its own
 * default, so the handler runs with them (the round checks only arguments
 * from an edit or a stored chain).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Step } from "../../src/index.ts"

const Upload = Tool.make("upload", { parameters: Schema.Struct({ body: Schema.String }), success: Schema.Number })
const kit = Toolkit.make(Upload)
const body = "x".repeat(1_500_000)

describe("limits raised on callLlmWith, round run by Step.executeTools", () => {
  it.effect("the model's 1.5M-character arguments, accepted on arrival, reach the handler", () =>
    Effect.gen(function*() {
      const sizes: Array<number> = []
      const handlers = kit.toLayer({ upload: ({ body }) => Effect.sync(() => (sizes.push(body.length), body.length)) })
      const model = ChatModel.scripted([{ toolCalls: [{ id: "u1", name: "upload", params: { body } }] }])
      const outcome = yield* Step.start(Chain.make({ user: "upload it", toolkit: kit })).pipe(
        Step.callLlmWith({ maxArgumentSize: 2_000_000 }),
        Step.executeTools
      ).pipe(Effect.provide([model.layer, handlers]))
      const results = outcome.chain.lastToolResults.map((r) => [r.isFailure, String(r.encoded).slice(0, 90)])
      expect(results).toEqual([[false, "1500000"]])
      expect(sizes).toEqual([1_500_000])
    }))
})

/**
 * A provider's text is hostile input (helper-55's probe): the `text` of a text or reasoning part,
 * or the `delta` of a streamed one, that is not a string (a number, an object, a BigInt). The bridge
 * passes parts on as they come; the loop refuses such an answer (src/internal/arrival.ts), so over
 * the bridge the run fails with a typed `ModelCallFailed` — nothing that is not text is kept in the
 * chain or sent in a `TextDelta` — and every event emitted before serialises.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { modelCallFailure, raw, runWith, serialises, stop, streamWith, usage, whole } from "./support/rawProvider.ts"

const finish = { type: "finish", finishReason: stop, usage }

const notText: ReadonlyArray<readonly [name: string, value: () => unknown]> = [
  ["a number", () => 5],
  ["an object", () => ({ a: 1 })],
  ["a BigInt", () => 1n]
]

describe("text that is not a string, over the bridge", () => {
  it.effect.each(notText)("a whole response's text part holding %s: the run fails with ModelCallFailed", ([, text]) =>
    Effect.gen(function*() {
      const failure = modelCallFailure(yield* runWith(raw([whole([{ type: "text", text: text() }])])))
      expect(failure.description).toMatch(/text is not a string/)
    }))

  it.effect.each(notText)("a whole response's reasoning part holding %s: the run fails with ModelCallFailed", ([, text]) =>
    Effect.gen(function*() {
      const failure = modelCallFailure(yield* runWith(raw([whole([{ type: "reasoning", text: text() }, { type: "text", text: "hi" }])])))
      expect(failure.description).toMatch(/text is not a string/)
    }))

  it.effect.each(notText)("a streamed text delta holding %s: the stream fails with ModelCallFailed, every event serialises", ([, delta]) =>
    Effect.gen(function*() {
      const model = raw([{
        stream: [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "fine " },
          { type: "text-delta", id: "t", delta: delta() },
          { type: "text-end", id: "t" },
          finish
        ]
      }])
      const { events, exit } = yield* streamWith(model)
      expect(modelCallFailure(exit).description).toMatch(/delta is not a string/)
      expect(events.filter((event) => !serialises(event)).map((event) => event._tag)).toEqual([])
      const deltas = events.flatMap((event) => event._tag === "TextDelta" ? [event.delta] : [])
      expect(deltas.every((text) => typeof text === "string")).toBe(true)
    }))
})

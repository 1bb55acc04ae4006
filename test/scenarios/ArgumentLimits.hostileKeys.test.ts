/**
 * `maxArgumentSize` counts model-shaped arguments (made by JSON.parse, so
 * "__proto__" is an own key) as `JSON.stringify` writes them, with hostile
 * keys (every `Object.prototype` name, empty, duplicated), every control
 * character, lone and paired surrogates at string ends, -0, 1e21 and 1e-7:
 * one character under their JSON length the handler never runs; with a few
 * to spare (the count may take one more per entry), it runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../src/index.ts"

const keys = [...Object.getOwnPropertyNames(Object.prototype), "", "\ud800", "\udc00", "\u0000", "\"", "\\", "k".repeat(50)]
const controls = Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join("")
const strings = [controls, "\ud83d", "\ude00", "a\ud83d", "\ude00a", "\ud83d\ude00", "\ude00\ud83d", "\"\\", "\u2028\u2029\u007f"]

const shapes: ReadonlyArray<string> = [
  ...keys.map((key, i) => `{"a":{${JSON.stringify(key)}:${JSON.stringify(strings[i % strings.length])},"__proto__":[-0,1e21,1e-7]}}`),
  ...strings.map((s) => `{"a":[${JSON.stringify(s)},{"__proto__":${JSON.stringify(s)}},[],{}]}`),
  `{"a":{"x":1,"x":${JSON.stringify(controls)}}}`
]

const runWith = (params: unknown, maxArgumentSize: number) =>
  Effect.gen(function*() {
    const sizes: Array<number> = []
    const Store = Tool.make("store", { parameters: Schema.Struct({ a: Schema.Unknown }), success: Schema.String })
    const toolkit = Toolkit.make(Store)
    const layer = toolkit.toLayer({ store: (p) => Effect.sync(() => (sizes.push(JSON.stringify(p).length), "ok")) })
    const model = ChatModel.scripted([(request) =>
      request.prompt.content.some((message) => message.role === "tool")
        ? { text: "done" }
        : { toolCalls: [{ id: "c1", name: "store", params }] }
    ], { repeat: true })
    const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, maxArgumentSize }).pipe(
      Effect.provide([model.layer, layer])
    )
    expect(outcome._tag).toBe("Ok")
    return sizes
  })

describe("hostile model-shaped arguments against maxArgumentSize", () => {
  it.effect(`${shapes.length} shapes: refused one under their length, run with 8 to spare`, () =>
    Effect.gen(function*() {
      for (const text of shapes) {
        const length = JSON.stringify(JSON.parse(text)).length
        expect(yield* runWith(JSON.parse(text), length - 1), text).toEqual([])
        const ran = yield* runWith(JSON.parse(text), length + 8)
        expect(ran.length, text).toBe(1)
        for (const size of ran) expect(size).toBeLessThanOrEqual(length + 8)
      }
    }))
})

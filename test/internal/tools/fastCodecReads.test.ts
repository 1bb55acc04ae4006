/**
 * Chain-level: what a call decodes to, for hostile params from a JavaScript model, compared
 * against what the Schema decoder gives: the fast decoder reads no getter, so Schema reads each once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Cause, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../../src/index.ts"

const Echo = Tool.make("echo", {
  parameters: Schema.Struct({ text: Schema.String, n: Schema.Number }),
  success: Schema.String,
  failureMode: "return"
})
const toolkit = Toolkit.make(Echo)

const runWith = (params: unknown) =>
  Effect.gen(function*() {
    const seen: Array<unknown> = []
    const model = ChatModel.scripted([{ toolCalls: [{ name: "echo", params }] }, { text: "done" }])
    const handlers = toolkit.toLayer({
      echo: (p) => Effect.sync(() => (seen.push({ ...p }), `${p.text}:${p.n}`))
    })
    const exit = yield* Effect.exit(
      Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
    )
    if (Exit.isFailure(exit)) return { died: Cause.pretty(exit.cause).slice(0, 200) }
    const [r] = exit.value.chain.lastToolResults
    return { seen, isFailure: r.isFailure, encoded: r.encoded, origin: r.failureOrigin }
  })

describe("fastDecoder at the chain level", () => {
  it.effect("a getter that throws on its first read only", () =>
    Effect.gen(function*() {
      let reads = 0
      const params = {
        get text(): string {
          if (reads++ === 0) throw new Error("first read")
          return "a"
        },
        n: 1
      }
      // JsonBounds reads every own enumerable value first; make the getter non-enumerable so the
      // decoder is the first reader
      Object.defineProperty(params, "text", { enumerable: false })
      const out = yield* runWith(params)
      // Schema alone: the read throws -> the call fails with a parameters failure
      expect(out).toMatchObject({ isFailure: true, origin: "parameters" })
    }))

  it.effect("a getter that gives a number first, a string after", () =>
    Effect.gen(function*() {
      let reads = 0
      const params = { n: 1 }
      Object.defineProperty(params, "text", {
        enumerable: false,
        get: () => (reads++ === 0 ? 42 : "late")
      })
      const out = yield* runWith(params)
      // Schema alone reads text once: 42 is not a string -> parameters failure
      expect(out).toMatchObject({ isFailure: true, origin: "parameters" })
    }))

  it.effect("a getter that gives a string first, a number after, with a wrong second key", () =>
    Effect.gen(function*() {
      let reads = 0
      const params = { n: "not a number" }
      Object.defineProperty(params, "text", {
        enumerable: false,
        get: () => (reads++ === 0 ? "a" : 7)
      })
      const out = yield* runWith(params)
      // Schema alone: text is "a" (fine), n is wrong: the message names n
      expect(out).toMatchObject({ isFailure: true, origin: "parameters" })
      expect(String((out as { encoded: unknown }).encoded)).toContain("[\"n\"]")
    }))
})

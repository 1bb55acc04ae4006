/**
 * Handlers from JavaScript returning proxies that look like an `Effect.sync`
 * (its prototype and function field) but that effect's runtime cannot run
 * as one: the fast path never calls the field's function; each call fails
 * as it does when the runtime runs the proxy.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../../src/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)
const sample = Effect.sync(() => "sample")
const syncProto: object = Object.getPrototypeOf(sample)
const key = Object.keys(sample).find((k) => typeof (sample as unknown as Record<string, unknown>)[k] === "function")

const hostile: Array<[string, () => unknown]> = [
  // Claims to be an Effect (has), has Effect.sync's prototype (getPrototypeOf) and a function in its field,
  // but has nothing else: the runtime cannot run it.
  ["a proxy of {} claiming Effect.sync's prototype and field", () =>
    new Proxy({}, {
      has: () => true,
      getPrototypeOf: () => syncProto,
      get: (_t, k) => (k === key ? () => "from the field" : undefined)
    })],
  // An Effect.sync whose prototype reads as Effect.sync's while every other read is that of Effect.succeed.
  ["a proxy of Effect.succeed claiming Effect.sync's prototype and field", () =>
    new Proxy(Effect.succeed("from succeed"), {
      getPrototypeOf: () => syncProto,
      get: (t, k, r) => (k === key ? () => "from the field" : Reflect.get(t, k, r))
    })]
]

const run = (made: () => unknown) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([{ toolCalls: [{ id: "c0", name: "echo", params: { q: "x" } }, { id: "c1", name: "echo", params: { q: "y" } }] }, { text: "done" }])
    const outcome = yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, toolkit.toLayer({ echo: made as never })])
    )
    return outcome.chain.lastToolResults.map((r) => ({ isFailure: r.isFailure, encoded: String(r.encoded).slice(0, 90) }))
  })

describe("proxies that look like an Effect.sync", () => {
  for (const [name, made] of hostile) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const out = yield* run(made)
        // effect's runtime never calls the field's function for these: each call fails.
        expect(out.map((r) => r.encoded)).not.toContain("from the field")
        expect(out.every((r) => r.isFailure)).toBe(true)
      }))
  }
})

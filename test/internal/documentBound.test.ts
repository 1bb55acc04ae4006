/**
 * `Chain.encode` adds up the messages' bounds (worked out while they are
 * copied) and the rest's instead of walking the whole document again, and
 * walks it only when that sum is past the limit or not known. A value that
 * is not JSON is refused wherever it sits, on the plain copy's path and on
 * the Schema's, and makes the bound unknown; the bound of every message
 * shape, alone or with others, is never under its JSON text's length (the
 * depth limit at every position: documentBound.depth.test.ts; random
 * transcripts: documentBound.fuzz.test.ts; hostile values:
 * documentBound.hostile.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"
import { documentLimits } from "../../src/internal/documentEnvelope.ts"
import { encodeMessages } from "../../src/internal/messageCodec.ts"

const providerOptions: Prompt.ProviderOptions = { openai: { key: "value" } }

/** Where a value of the caller's sits in a transcript: each five levels down the document. */
const positions: ReadonlyArray<readonly [string, (value: unknown) => Prompt.Message]> = [
  ["a call's arguments in an assistant message", (params) =>
    Prompt.makeMessage("assistant", {
      content: [Prompt.makePart("tool-call", { id: "c1", name: "t", params, providerExecuted: false })]
    })],
  ["a result in a tool message", (result) =>
    Prompt.makeMessage("tool", {
      content: [Prompt.makePart("tool-result", { id: "c1", name: "t", isFailure: false, result, providerExecuted: false })]
    })],
  ["a provider's result in an assistant message", (result) =>
    Prompt.makeMessage("assistant", {
      content: [Prompt.makePart("tool-result", { id: "c1", name: "t", isFailure: false, result, providerExecuted: true })]
    })],
  ["a result with provider options (the Schema's path)", (result) =>
    Prompt.makeMessage("tool", {
      content: [
        Prompt.makePart("tool-result", { id: "c1", name: "t", isFailure: false, result, providerExecuted: false, options: providerOptions })
      ]
    })]
]

const encodeWith = (message: Prompt.Message) =>
  Chain.encode(Chain.make({ user: "start" }).copy({ messages: [Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "start" })] }), message] }))

describe("Chain.encode's bound agrees with the walk of the whole document", () => {
  for (const [position, messageWith] of positions) {
    it.effect(`${position}: a Date is refused`, () =>
      Effect.gen(function*() {
        const error = yield* encodeWith(messageWith({ at: new Date(0) })).pipe(Effect.flip)
        expect(error).toBeInstanceOf(Chain.ChainCodecError)
        expect(error.message).toMatch(/not JSON data \(it holds a Date object\)/)
      }))
  }

  it.effect("the messages' bound is never under their JSON text's length, on every position's value", () =>
    Effect.gen(function*() {
      const values: ReadonlyArray<unknown> = [
        "",
        "quote \" and \\ backslash \n\u0001\ud800",
        // Through JSON.parse, so that "__proto__" is an own key like any other.
        JSON.parse(`{"__proto__":[1,2,{"constructor":null}],"":"${"x".repeat(100)}","toString":{}}`),
        [null, true, false, -0, 1e21]
      ]
      for (const value of values) {
        // Long strings in every field the copy writes, so that the bound cannot pass on the values' slack.
        const long = (text: string) => text.repeat(400)
        const messages = [
          Prompt.makeMessage("system", { content: long("be \"brief\"") }),
          Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: long("\u2028 hi") })] }),
          ...positions.map(([, messageWith]) => messageWith(value)),
          Prompt.makeMessage("assistant", {
            content: [
              Prompt.makePart("text", { text: long("a") }),
              Prompt.makePart("reasoning", { text: long("b") }),
              Prompt.makePart("tool-call", { id: long("c"), name: long("n"), params: value, providerExecuted: false })
            ]
          }),
          Prompt.makeMessage("assistant", { content: [Prompt.makePart("text", { text: long("only text") })] })
        ]
        // Each message alone (a term left out would not hide behind another's slack), then all of them.
        for (const list of [...messages.map((message) => [message]), messages]) {
          const { bound: measured, messages: encoded } = yield* encodeMessages(list, documentLimits)
          const bound = measured()
          // The brackets are the rest's (`"messages":[]`); the bound counts the commas.
          expect(bound, JSON.stringify(encoded).slice(0, 200)).toBeGreaterThanOrEqual(JSON.stringify(encoded).length - 2)
        }
      }
    }))

  it.effect("a value that is not JSON makes the messages' bound unknown", () =>
    Effect.gen(function*() {
      for (const [position, messageWith] of positions) {
        const bound = (yield* encodeMessages([messageWith({ at: new Date(0) })], documentLimits)).bound()
        expect(bound, position).toBeNaN()
      }
    }))
})

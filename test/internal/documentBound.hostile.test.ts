/**
 * Hostile values against `Chain.encode`'s bound, which adds up the
 * messages' and the rest's instead of walking the whole document (helper-61's
 * attack on the first version):
 * - a content array behind a Proxy whose `length` lies (`-Infinity`,
 *   `-1e12`, a string) while its iterator yields the real parts: the bound is
 *   counted from the copies, so it is never under their JSON text, and a
 *   document past the size limit is refused instead of making
 *   `JSON.stringify` throw;
 * - a getter, read while a later message is copied or while the rest is
 *   encoded, that puts a bigint, a Date or 600 levels of nesting into the
 *   arguments of a call already copied: the values are measured after every
 *   such read, so an accepted document passes the full check and decodes;
 * - an array whose `length` is a string: refused as not JSON, with a message
 *   that says so;
 * - a getter read while the values are measured (one message's, changing a
 *   later message's arguments): they are measured in the order of the
 *   messages, as the whole document's walk reads them (helper-62);
 * - a rest and messages each within the size limit, together past it: the
 *   sum is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"
import { documentLimits } from "../../src/internal/documentEnvelope.ts"
import * as JsonBounds from "../../src/internal/jsonBounds.ts"
import { encodeMessages } from "../../src/internal/messageCodec.ts"
/**
 * `parts` behind a Proxy whose `length` always answers `lie`, and whose iterator walks the real
 * parts. The answers do not change from read to read: the copy (made from the iterator) and
 * JSON.stringify (of the copy) see the same parts every time.
 */
const lyingContent = (parts: Array<Prompt.Part>, lie: unknown) => {
  const content = new Proxy(parts, {
    get: (target, key, receiver) => {
      if (key === "length") return lie
      if (key === Symbol.iterator) return () => target.values()
      return Reflect.get(target, key, receiver)
    }
  })
  return content
}

describe("a content array whose length lies: the bound counts the copies", () => {
  for (const lie of [Number.NEGATIVE_INFINITY, -1e12, -5000, "0"]) {
    it.effect(`encodeMessages' bound with content.length answering ${String(lie)}: never under the JSON length`, () =>
      Effect.gen(function*() {
        const text = "x".repeat(1000)
        const content = lyingContent([Prompt.makePart("text", { text }), Prompt.makePart("text", { text })], lie)
        const message = Prompt.makeMessage("user", { content: content as never })
        const { bound: measured, messages } = yield* encodeMessages([message], { maxDepth: 520, maxSize: 100 })
        const bound = measured()
        const length = JSON.stringify(messages).length
        expect(typeof bound).toBe("number")
        expect(Number.isNaN(bound) || bound >= length - 2, `bound ${String(bound)}, JSON length ${length}`).toBe(true)
      }))
  }

  it.effect("the same at the messages' level: a messages list that lies on a later read of its length", () =>
    Effect.gen(function*() {
      // encodeMessages reads messages.length once; a version that read it again (for its count, its
      // loop) would take the lie.
      const list = [Prompt.makeMessage("system", { content: "x".repeat(1000) }), Prompt.makeMessage("system", { content: "y".repeat(1000) })]
      let reads = 0
      const messages = new Proxy(list, {
        get: (target, key, receiver) => key === "length" && ++reads === 2 ? Number.NEGATIVE_INFINITY : Reflect.get(target, key, receiver)
      })
      const { bound: measured, messages: encoded } = yield* encodeMessages(messages, { maxDepth: 520, maxSize: 100 })
      const bound = measured()
      const length = JSON.stringify(encoded).length
      expect(Number.isNaN(bound) || bound >= length - 2, `bound ${String(bound)}, JSON length ${length}`).toBe(true)
    }))

  it.effect("a document past 2^29-24 characters is refused (JSON.stringify would throw)", () =>
    Effect.gen(function*() {
      // One 2^27-character string shared by five parts: 5 × 134M > 537M characters of JSON.
      const text = "x".repeat(2 ** 27)
      const parts = Array.from({ length: 5 }, () => Prompt.makePart("text", { text }))
      const content = lyingContent(parts, Number.NEGATIVE_INFINITY)
      const chain = Chain.make({ user: "hi" }).copy({ messages: [Prompt.makeMessage("user", { content: content as never })] })
      const exit = yield* Effect.exit(Chain.encode(chain))
      if (Exit.isFailure(exit)) return // refused: what the full check says
      expect(() => JSON.stringify(exit.value), "JSON.stringify of the accepted document").not.toThrow()
      expect(JsonBounds.check(exit.value, documentLimits), "the full check of the accepted document").toBeUndefined()
    }), 120_000)
})

const nested = (depth: number): unknown => {
  let value: unknown = 0
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

type Poison = (victim: Record<string, unknown>) => void
const poisons: ReadonlyArray<readonly [string, Poison]> = [
  ["a bigint (JSON.stringify throws)", (victim) => { victim.bad = 1n }],
  ["a Date (not JSON data)", (victim) => { victim.bad = new Date(0) }],
  ["600 levels of nesting (Chain.decode refuses the text)", (victim) => { victim.bad = nested(600) }]
]

/** Encodes, then holds the result to the safety property; returns whether encode accepted. */
const encodeAndHold = (chain: Chain.Chain) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Chain.encode(chain))
    if (Exit.isFailure(exit)) return "refused"
    const document = exit.value
    expect(JsonBounds.check(document, documentLimits), "the full check of the accepted document").toBeUndefined()
    const text = JSON.stringify(document)
    const decoded = yield* Effect.exit(Chain.decode(text))
    expect(Exit.isSuccess(decoded), "Chain.decode of the accepted document's text").toBe(true)
    return "accepted"
  })

describe("a getter that changes a value already copied: the values are measured last", () => {
  for (const [name, poison] of poisons) {
    it.effect(`a later part's getter (read by the copy) puts ${name} into an earlier message's params`, () =>
      Effect.gen(function*() {
        const victim: Record<string, unknown> = { a: 1 }
        let armed = false
        const first = Prompt.makeMessage("assistant", {
          content: [Prompt.makePart("tool-call", { id: "c1", name: "t", params: victim, providerExecuted: false })]
        })
        const part = Prompt.makePart("tool-call", { id: "c2", name: "t", params: {}, providerExecuted: false })
        Object.defineProperty(part, "name", {
          enumerable: true,
          get() {
            if (armed) poison(victim)
            return "t"
          }
        })
        const second = Prompt.makeMessage("assistant", { content: [part] })
        const chain = Chain.make({ user: "hi" }).copy({ messages: [first, second] })
        armed = true
        yield* encodeAndHold(chain)
      }))

    it.effect(`a context getter (read when the rest is encoded) puts ${name} into a message's params`, () =>
      Effect.gen(function*() {
        const victim: Record<string, unknown> = { a: 1 }
        let armed = false
        const context: Record<string, unknown> = {}
        Object.defineProperty(context, "k", {
          enumerable: true,
          get() {
            if (armed) poison(victim)
            return 1
          }
        })
        const message = Prompt.makeMessage("assistant", {
          content: [Prompt.makePart("tool-call", { id: "c1", name: "t", params: victim, providerExecuted: false })]
        })
        const chain = Chain.make({ user: "hi", context: context as never }).copy({ messages: [message] })
        armed = true
        yield* encodeAndHold(chain)
      }))
  }
})

const stringLength = () =>
  new Proxy(["a", "b"], { get: (target, key, receiver) => key === "length" ? "2" : Reflect.get(target, key, receiver) })

describe("an array whose length is not a count is not JSON", () => {
  it("JsonBounds.check refuses it as not JSON", () => {
    expect(JsonBounds.check({ list: stringLength() }, JsonBounds.storedLimits)).toEqual({ _tag: "NotJson", kind: "list whose length is not a count" })
  })

  it.effect("Chain.encode's message names the problem", () =>
    Effect.gen(function*() {
      const message = Prompt.makeMessage("assistant", {
        content: [Prompt.makePart("tool-call", { id: "c1", name: "t", params: { list: stringLength() }, providerExecuted: false })]
      })
      const error = yield* Chain.encode(Chain.make({ user: "hi" }).copy({ messages: [message] })).pipe(Effect.flip)
      expect(error.message).toMatch(/not JSON data \(it holds a list whose length is not a count\)/)
    }))
})

describe("a getter read while the values are measured", () => {
  it.effect("a Schema-path message's getter that puts a bigint into a later message's arguments: refused", () =>
    Effect.gen(function*() {
      // The values are measured in the order of the messages, as the walk of the whole document reads
      // them: the getter runs before the later arguments are measured.
      const victim: Record<string, unknown> = { a: 1 }
      let armed = false
      const hostile: Record<string, unknown> = {}
      Object.defineProperty(hostile, "g", {
        enumerable: true,
        get() {
          if (armed) victim.bad = 1n
          return 1
        }
      })
      const first = Prompt.makeMessage("assistant", {
        content: [
          Prompt.makePart("tool-call", { id: "c1", name: "t", params: hostile, providerExecuted: false, options: { openai: { key: "value" } } })
        ]
      })
      const second = Prompt.makeMessage("assistant", {
        content: [Prompt.makePart("tool-call", { id: "c2", name: "t", params: victim, providerExecuted: false })]
      })
      const chain = Chain.make({ user: "hi" }).copy({ messages: [first, second] })
      armed = true
      const error = yield* Chain.encode(chain).pipe(Effect.flip)
      expect(error.message).toMatch(/not JSON data \(it holds a bigint\)/)
    }))
})

describe("the rest and the messages each within the size limit, together past it", () => {
  it.effect("Chain.encode refuses: the bounds are added up", () =>
    Effect.gen(function*() {
      // Numbers only, so no escapes to leave slack: "[0,0,…]" is 2,000,001 characters, shared 135 times
      // (about 270M characters, a few MB of memory), in the context and again in a call's arguments.
      const block: Array<number> = new Array(1_000_000).fill(0)
      const half = Array.from({ length: 135 }, () => block)
      expect(JsonBounds.check(half, documentLimits)).toBeUndefined()
      const message = Prompt.makeMessage("assistant", {
        content: [Prompt.makePart("tool-call", { id: "c1", name: "t", params: half, providerExecuted: false })]
      })
      const chain = Chain.make({ user: "hi", context: { k: half } as never }).copy({ messages: [message] })
      const error = yield* Chain.encode(chain).pipe(Effect.flip)
      expect(error.message).toMatch(/larger than 536,870,888 characters of JSON/)
    }), 120_000)
})

/**
 * `Chain.encode`'s messages bound (src/internal/messageCodec.ts) on 6,000
 * random transcripts of every role and part shape, plain copies and the
 * Schema's encodings alike (message and part options, file parts, a tool
 * result's model output), with hostile keys, `__proto__` through
 * `JSON.parse`, `-0`, holes, `undefined`, null-prototype objects and values
 * that are not JSON, under depth limits of 6 to 15: whenever the bound is
 * known, the messages are JSON within the depth limit and their text is
 * never longer than the bound; whenever the bound and the rest's fit the
 * size limit, so does the document.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Prompt } from "effect/ai"
import * as JsonBounds from "../../src/internal/jsonBounds.ts"
import { random } from "../support/random.ts"
import { encodeMessages } from "../../src/internal/messageCodec.ts"

const hostileKeys = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "toJSON", "", "a", "\u2028", "\"", "\\", "\n", "\u0000", "\ud800", "0"]
const strings = ["", "x", "quote \" and \\", "\t\n\r\b\f", "\u0001\u001f", "\ud83d\ude00", "\ud800", "\udc00", "\u2028", "é".repeat(10), "\u0000".repeat(30)]
const numbers = [0, -0, 1, -1, 1e21, 5e-324, 0.1, -3.75, 2 ** 53, Number.MAX_VALUE, -1e-7]

class Thing {
  a = 1
}

const makeValue = (next: () => number, depth: number, maxDepth: number, hostile: boolean): unknown => {
  const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(next() * list.length)]
  if (hostile && next() < 0.02) {
    return pick<() => unknown>([
      () => new Date(0),
      () => Number.NaN,
      () => 1n,
      () => new Thing(),
      () => ({ toJSON: () => 1 }),
      () => Object.create({ inherited: 1 }),
      () => [() => 1],
      () => ({ get x() { throw new Error("no") } }),
      () => new Map()
    ])()
  }
  const roll = next()
  if (depth >= maxDepth || roll < 0.4) {
    return pick<unknown>([pick(strings), pick(numbers), true, false, null, pick(strings).repeat(1 + Math.floor(next() * 20))])
  }
  // Now and then a straight chain of nesting to (about) the depth limit.
  if (roll < 0.47) {
    let value: unknown = pick<unknown>([0, "s", {}, []])
    const extra = (value !== null && typeof value === "object") ? 1 : 0
    const levels = maxDepth - depth - extra + Math.floor(next() * 3) - 1
    for (let i = 0; i < levels; i++) value = next() < 0.5 ? [value] : { k: value }
    return value
  }
  const size = Math.floor(next() * 4)
  if (roll < 0.7) {
    const items: Array<unknown> = []
    for (let i = 0; i < size; i++) items.push(next() < 0.1 ? undefined : makeValue(next, depth + 1, maxDepth, hostile))
    if (next() < 0.1) items.length += 3
    return items
  }
  const fields: Array<[string, unknown]> = []
  for (let i = 0; i < size; i++) fields.push([pick(hostileKeys), makeValue(next, depth + 1, maxDepth, false)])
  if (fields.some(([, v]) => JSON.stringify(v) === undefined)) return {}
  const text = `{${fields.map(([key, v]) => `${JSON.stringify(key)}:${JSON.stringify(v)}`).join(",")}}`
  const object: Record<string, unknown> = next() < 0.2 ? Object.assign(Object.create(null), JSON.parse(text)) : JSON.parse(text)
  if (next() < 0.2) object.skipped = undefined
  return object
}

const makeMessages = (next: () => number, maxDepth: number): Array<Prompt.Message> => {
  const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(next() * list.length)]
  const str = () => pick(strings).repeat(Math.floor(next() * 5))
  const options = () => next() < 0.15 ? { openai: { k: makeValue(next, 5, maxDepth, true) } } : undefined
  const value = (at: number) => makeValue(next, at, maxDepth, true)
  const part = (kinds: ReadonlyArray<string>): Prompt.Part => {
    switch (pick(kinds)) {
      case "text":
        return Prompt.makePart("text", { text: str(), options: options() } as never)
      case "reasoning":
        return Prompt.makePart("reasoning", { text: str(), options: options() } as never)
      case "tool-call":
        return Prompt.makePart("tool-call", { id: str(), name: str(), params: value(5), providerExecuted: next() < 0.5, options: options() } as never)
      case "tool-result": {
        const base = { id: str(), name: str(), isFailure: next() < 0.5, result: value(5), providerExecuted: next() < 0.5, options: options() }
        return Prompt.makePart("tool-result", (next() < 0.1 ? { ...base, modelOutput: [Prompt.makePart("text", { text: str() })] } : base) as never)
      }
      default:
        return Prompt.makePart("file", { mediaType: str(), data: next() < 0.5 ? str() : new Uint8Array([1, 2, 3]), options: options() } as never)
    }
  }
  const messages: Array<Prompt.Message> = []
  const count = 1 + Math.floor(next() * 4)
  for (let i = 0; i < count; i++) {
    const role = pick(["system", "user", "assistant", "tool"])
    const n = Math.floor(next() * 3) + (next() < 0.3 ? 0 : 1)
    const msgOptions = next() < 0.1 ? { anthropic: { deep: makeValue(next, 3, maxDepth, true) } } : undefined
    const list = (kinds: ReadonlyArray<string>) => Array.from({ length: n }, () => part(kinds))
    switch (role) {
      case "system":
        messages.push(Prompt.makeMessage("system", { content: str(), options: msgOptions } as never))
        break
      case "user":
        messages.push(Prompt.makeMessage("user", { content: list(["text", "text", "file"]), options: msgOptions } as never))
        break
      case "assistant":
        messages.push(Prompt.makeMessage("assistant", { content: list(["text", "reasoning", "tool-call", "tool-result", "file"]), options: msgOptions } as never))
        break
      default:
        messages.push(Prompt.makeMessage("tool", { content: list(["tool-result"]), options: msgOptions } as never))
    }
  }
  return messages
}

/** The depth as JsonBounds counts it (a scalar 0, a container one more than its deepest item). */
const depthOf = (value: unknown): number => {
  if (value === null || typeof value !== "object") return 0
  let deepest = 0
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item))
  return deepest + 1
}

describe("the messages' bound on random transcripts", () => {
  it.effect("a finite bound means JSON within the depth limit and never under the text's length", () =>
    Effect.gen(function*() {
      const next = random(61061)
      let finite = 0
      let accepted = 0
      let atLimit = 0
      for (let i = 0; i < 6000; i++) {
        const maxDepth = 6 + Math.floor(next() * 10)
        const maxSize = next() < 0.5 ? 2 ** 40 : 30 + Math.floor(next() * 3000)
        const messages = makeMessages(next, maxDepth)
        const encodedExit = yield* Effect.exit(encodeMessages(messages, { maxDepth, maxSize }))
        if (encodedExit._tag === "Failure") continue
        const { bound: measured, messages: encoded } = encodedExit.value
        const bound = measured()
        if (!Number.isFinite(bound)) {
          expect(bound, `case ${i}`).toBeNaN()
          continue
        }
        finite++
        const document = { format: "x", messages: encoded }
        if (depthOf(document) === maxDepth) atLimit++
        const at = `case ${i} (maxDepth ${maxDepth}): ${JSON.stringify(encoded)?.slice(0, 300)}`
        expect(JsonBounds.check(document, { maxDepth, maxSize: 2 ** 50 }), at).toBeUndefined()
        const length = JSON.stringify(encoded).length
        expect(bound, at).toBeGreaterThanOrEqual(length - 2)
        // chainCodec's decision, with this document's rest.
        const restBound = JsonBounds.bound({ format: "x", messages: [] }, { maxDepth, maxSize })
        if (typeof restBound === "number" && restBound + bound <= maxSize) {
          accepted++
          expect(JsonBounds.check(document, { maxDepth, maxSize }), at).toBeUndefined()
        }
      }
      // The fuzz must reach both verdicts, and documents exactly at the depth limit.
      expect(atLimit).toBeGreaterThan(100)
      expect(finite).toBeGreaterThan(500)
      expect(accepted).toBeGreaterThan(200)
    }), 120_000)
})

/**
 * `JsonBounds.check` measures a value as `JSON.stringify` writes it: on
 * random JSON values (hostile keys, escapes, lone surrogates, odd numbers,
 * holes and `undefined`, deep nesting), it never counts fewer characters
 * than the text has, nor more than one per entry (a comma it counts for
 * the last entry of each container too), and it finds the exact depth;
 * values that JSON would change are refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as JsonBounds from "../../src/internal/jsonBounds.ts"
import { random } from "../support/random.ts"

const hostileKeys = [...Object.getOwnPropertyNames(Object.prototype), "", "a", "ü", "\u2028", "\"", "\\", "\n", "\u0000", "\ud800", "0", "10"]
const strings = ["", "x", "done", "quote \" and \\ backslash", "\t\n\r\b\f", "\u0001\u001f", "\ud83d\ude00", "\ud800 alone", "\udc00", "\u2028\u2029", "é".repeat(40)]
const numbers = [0, -0, 1, -1, 7, 42, 99, 100, 999, 123456, 1e21, 5e-324, 0.1, -3.75, 2 ** 53, Number.MAX_VALUE]

interface Made {
  readonly value: unknown
  readonly entries: number
  readonly depth: number
}

const make = (next: () => number, depth: number): Made => {
  const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(next() * list.length)]
  const roll = next()
  if (depth >= 6 || roll < 0.45) {
    const scalar = pick<unknown>([pick(strings), pick(numbers), true, false, null, pick(strings).repeat(1 + Math.floor(next() * 3))])
    return { value: scalar, entries: 0, depth: 0 }
  }
  const size = Math.floor(next() * 5)
  let entries = size
  let deepest = 0
  if (roll < 0.7) {
    const items: Array<unknown> = []
    for (let i = 0; i < size; i++) {
      if (next() < 0.1) {
        items.push(undefined) // written as null
        continue
      }
      const item = make(next, depth + 1)
      items.push(item.value)
      entries += item.entries
      deepest = Math.max(deepest, item.depth)
    }
    if (next() < 0.05) items.length += 2 // holes, written as null
    entries += items.length - size
    return { value: items, entries, depth: deepest + 1 }
  }
  // Through JSON.parse, so that "__proto__" is an own key like any other.
  const fields: Array<[string, unknown]> = []
  for (let i = 0; i < size; i++) {
    const item = make(next, depth + 1)
    fields.push([pick(hostileKeys), item.value])
    entries += item.entries
    deepest = Math.max(deepest, item.depth)
  }
  const object: Record<string, unknown> = JSON.parse(`{${fields.map(([key, v]) => `${JSON.stringify(key)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`)
  // Duplicated keys collapse: count what is there, measured again from the object.
  const kept = Object.keys(object)
  entries = kept.length
  deepest = 0
  for (const key of kept) {
    const again = remeasure(object[key])
    entries += again.entries
    deepest = Math.max(deepest, again.depth)
  }
  if (next() < 0.2) object.skipped = undefined // left out by JSON
  return { value: object, entries, depth: deepest + 1 }
}

/** Entries and depth of a value made by JSON.parse. */
const remeasure = (value: unknown): { readonly entries: number; readonly depth: number } => {
  if (typeof value !== "object" || value === null) return { entries: 0, depth: 0 }
  const items = Array.isArray(value) ? value : Object.values(value)
  let entries = items.length
  let depth = 0
  for (const item of items) {
    const inner = remeasure(item)
    entries += inner.entries
    depth = Math.max(depth, inner.depth)
  }
  return { entries, depth: depth + 1 }
}

const big = 1_000_000_000

const notJson: ReadonlyArray<readonly [string, unknown, string]> = [
  ["NaN", [1, Number.NaN], "non-finite number"],
  ["Infinity", { a: Number.POSITIVE_INFINITY }, "non-finite number"],
  ["a bigint", [[1n]], "bigint"],
  ["a function", { f: () => 1 }, "function"],
  ["a symbol", { s: Symbol("s") }, "symbol"],
  ["a Date", { at: new Date(0) }, "Date object"],
  ["a Map", [new Map()], "Map object"]
]

describe("JsonBounds.check measures as JSON.stringify writes", () => {
  it("2,000 random values: never under the text's length, over it by at most one per entry, exact depth", () => {
    const next = random(20261127)
    for (let i = 0; i < 2000; i++) {
      const { depth, entries, value } = make(next, 0)
      const length = (JSON.stringify(value) ?? "").length
      const at = `value ${i}: ${JSON.stringify(value)}`
      expect(JsonBounds.check(value, { maxDepth: big, maxSize: length - 1 }), at).toEqual({ _tag: "TooLarge", limit: length - 1 })
      expect(JsonBounds.check(value, { maxDepth: big, maxSize: length + entries }), at).toBeUndefined()
      expect(JsonBounds.check(value, { maxDepth: depth, maxSize: big }), at).toBeUndefined()
      if (depth > 0) expect(JsonBounds.check(value, { maxDepth: depth - 1, maxSize: big }), at).toEqual({ _tag: "TooDeep", limit: depth - 1 })
    }
  })

  for (const [name, value, kind] of notJson) {
    it(`refuses ${name}`, () => {
      expect(JsonBounds.check(value, { maxDepth: big, maxSize: big })).toEqual({ _tag: "NotJson", kind })
    })
  }

  it("a sparse array too long to write is refused after a few of its holes, not walked to its end", () => {
    // 2^29 - 30 entries pass the count of brackets and commas; the holes, 4 characters each ("null"), do not.
    let reads = 0
    const holes = new Proxy(new Array(2 ** 29 - 30), {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      }
    })
    expect(JsonBounds.check(holes, JsonBounds.storedLimits)).toEqual({ _tag: "TooLarge", limit: JsonBounds.storedLimits.maxSize })
    expect(reads).toBeLessThan(100)
  })

  it("a cycle is too deep, a throwing getter cannot be read", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = [cyclic]
    expect(JsonBounds.check(cyclic, { maxDepth: 64, maxSize: big })).toEqual({ _tag: "TooDeep", limit: 64 })
    const getter = { nested: { get x() { throw new Error("no") } } }
    expect(JsonBounds.check(getter, { maxDepth: 64, maxSize: big })).toEqual({ _tag: "NotJson", kind: "value that cannot be read" })
  })
})

/** The most characters `JSON.stringify` could write for `value`'s strings and keys: each character escaped (6). */
const escapedAtMost = (value: unknown): number => {
  if (typeof value === "string") return 6 * value.length
  if (typeof value !== "object" || value === null) return 0
  let most = 0
  for (const [key, item] of Object.entries(value)) most += (Array.isArray(value) ? 0 : 6 * key.length) + escapedAtMost(item)
  return most
}

describe("JsonBounds.bound: the most characters a value's JSON takes, so that parts' bounds add up", () => {
  it("2,000 random values: never under the text's length, never over it by more than every escape and one per entry", () => {
    const next = random(20261124)
    for (let i = 0; i < 2000; i++) {
      const { depth, entries, value } = make(next, 0)
      const length = (JSON.stringify(value) ?? "").length
      const at = `value ${i}: ${JSON.stringify(value)}`
      const bound = JsonBounds.bound(value, { maxDepth: depth, maxSize: big })
      expect(typeof bound, at).toBe("number")
      expect(bound, at).toBeGreaterThanOrEqual(length)
      expect(bound, at).toBeLessThanOrEqual(length + entries + escapedAtMost(value))
      // Under a limit the text passes: too large (counted without escapes), or a bound past the limit.
      const tight = JsonBounds.bound(value, { maxDepth: depth, maxSize: length - 1 })
      if (typeof tight === "number") expect(tight, at).toBeGreaterThan(length - 1)
      else expect(tight, at).toEqual({ _tag: "TooLarge", limit: length - 1 })
      if (depth > 0) expect(JsonBounds.bound(value, { maxDepth: depth - 1, maxSize: big }), at).toEqual({ _tag: "TooDeep", limit: depth - 1 })
    }
  })

  it("gives check's problems: not JSON, too deep, too large without escapes, unreadable", () => {
    for (const [, value, kind] of notJson) expect(JsonBounds.bound(value, { maxDepth: big, maxSize: big })).toEqual({ _tag: "NotJson", kind })
    const cyclic: Record<string, unknown> = {}
    cyclic.self = [cyclic]
    expect(JsonBounds.bound(cyclic, { maxDepth: 64, maxSize: big })).toEqual({ _tag: "TooDeep", limit: 64 })
    expect(JsonBounds.bound({ text: "x".repeat(100) }, { maxDepth: 64, maxSize: 50 })).toEqual({ _tag: "TooLarge", limit: 50 })
    const getter = { nested: { get x() { throw new Error("no") } } }
    expect(JsonBounds.bound(getter, { maxDepth: 64, maxSize: big })).toEqual({ _tag: "NotJson", kind: "value that cannot be read" })
  })
})

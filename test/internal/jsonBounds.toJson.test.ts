/**
 * `JsonBounds.check` refuses what `JSON.stringify` would write through a
 * `toJSON` method, which it looks up on every object and array (own and
 * hidden, on an array, inherited from a class or a polluted prototype,
 * through a Proxy): such a value is written as what `toJSON` returns, of
 * any size, or not at all. A value it accepts has a JSON text that fits.
 */
import { describe, expect, it } from "@effect/vitest"
import * as JsonBounds from "../../src/internal/jsonBounds.ts"

const limits = { maxDepth: 64, maxSize: 100 }
const huge = () => "x".repeat(1_000)

/** What check says must be right: accepted means the JSON text exists and fits. */
const agrees = (value: unknown) => {
  const problem = JsonBounds.check(value, limits)
  if (problem !== undefined) return
  let text: string | undefined
  expect(() => {
    text = JSON.stringify(value)
  }, "accepted, so JSON.stringify must not throw").not.toThrow()
  expect((text ?? "").length, "accepted, so its JSON fits maxSize").toBeLessThanOrEqual(limits.maxSize)
}

describe("check and toJSON", () => {
  it("a plain object with a non-enumerable own toJSON", () => {
    const value = {}
    Object.defineProperty(value, "toJSON", { value: huge })
    agrees(value)
  })

  it("an array with an own toJSON (an extra non-index property)", () => {
    const value: Array<number> & { toJSON?: () => string } = [1]
    value.toJSON = huge
    agrees(value)
  })

  it("an Array subclass whose prototype has toJSON", () => {
    class Wrapped extends Array<number> {
      toJSON() {
        return huge()
      }
    }
    agrees(Wrapped.from([1]))
  })

  it("toJSON returning a bigint: JSON.stringify throws on an accepted value", () => {
    const value = { a: 1 }
    Object.defineProperty(value, "toJSON", { value: () => 1n })
    agrees(value)
  })

  it("an array whose prototype is Date.prototype: JSON.stringify throws (toISOString on a non-Date)", () => {
    agrees(Object.setPrototypeOf([], Date.prototype))
  })

  it("a Proxy whose get trap answers toJSON", () => {
    agrees(new Proxy({}, { get: (_, key) => key === "toJSON" ? huge : undefined }))
  })

  it("a Proxy of a Date that reports Object.prototype as its prototype", () => {
    agrees(new Proxy(new Date(0), { getPrototypeOf: () => Object.prototype }))
  })

  it("Object.prototype.toJSON (polluted in the test, restored)", () => {
    const proto = Object.prototype as { toJSON?: unknown }
    proto.toJSON = huge
    try {
      agrees({ a: 1 })
    } finally {
      delete proto.toJSON
    }
  })

  it("Array.prototype.toJSON (polluted in the test, restored)", () => {
    const proto = Array.prototype as { toJSON?: unknown }
    Object.defineProperty(proto, "toJSON", { value: huge, configurable: true, writable: true })
    try {
      agrees([1])
    } finally {
      delete proto.toJSON
    }
  })
})

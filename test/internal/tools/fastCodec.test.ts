import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { fastDecoder, fastEncoder } from "../../../src/internal/tools/fastCodec.ts"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

/** What a codec comes to for `u`: its value (with its keys in order), its error's message, or what it threw. */
const outcome = (codec: Codec, u: unknown) => {
  try {
    const exit = Effect.runSyncExit(codec(u))
    if (Exit.isSuccess(exit)) {
      const value: unknown = exit.value
      return { value, keys: typeof value === "object" && value !== null ? Reflect.ownKeys(value) : undefined }
    }
    const error = Cause.squash(exit.cause)
    return { failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }
  } catch (thrown) {
    return { thrown: String(thrown) }
  }
}

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({ text: "a" }, {})
  revoke()
  return proxy
}

const throwing = () => ({
  get text(): string {
    throw new Error("no reading")
  }
})

const inputs: ReadonlyArray<readonly [string, () => unknown]> = [
  ["valid", () => ({ text: "a", n: 1, yes: true })],
  ["valid, keys in another order", () => ({ yes: false, n: -0, text: "" })],
  ["extra keys", () => ({ text: "a", n: 1, yes: true, more: { deep: [1] } })],
  ["NaN and Infinity", () => ({ text: "a", n: Number.NaN, yes: true, m: Number.POSITIVE_INFINITY })],
  ["a missing key", () => ({ text: "a", yes: true })],
  ["undefined for a key", () => ({ text: "a", n: undefined, yes: true })],
  ["a wrong type", () => ({ text: 1, n: 1, yes: true })],
  ["a string boolean", () => ({ text: "a", n: 1, yes: "true" })],
  ["inherited keys", () => Object.assign(Object.create({ text: "a", n: 1 }), { yes: true })],
  ["a null-prototype object", () => Object.assign(Object.create(null), { text: "a", n: 1, yes: true })],
  ["an own __proto__ key", () => JSON.parse(`{"__proto__": {"x": 1}, "text": "a", "n": 1, "yes": true}`)],
  ["an array", () => ["a", 1, true]],
  ["null", () => null],
  ["undefined", () => undefined],
  ["a string", () => "a"],
  ["a number", () => 1],
  ["a throwing getter", throwing],
  ["a revoked proxy", revoked]
]

const structs: ReadonlyArray<readonly [string, Schema.Top]> = [
  ["string, number, boolean", Schema.Struct({ text: Schema.String, n: Schema.Number, yes: Schema.Boolean })],
  ["one string", Schema.Struct({ text: Schema.String })],
  ["an optional key (not fast)", Schema.Struct({ text: Schema.String, n: Schema.optional(Schema.Number) })],
  ["a check (not fast)", Schema.Struct({ text: Schema.String.check(Schema.isMinLength(2)), n: Schema.Number })],
  ["a transformation (not fast)", Schema.Struct({ text: Schema.String, n: Schema.NumberFromString })],
  ["a finite number (not fast)", Schema.Struct({ text: Schema.String, n: Schema.Finite })],
  ["a __proto__ key (not fast)", Schema.Struct({ ["__proto__"]: Schema.String, text: Schema.String })],
  ["nested (not fast)", Schema.Struct({ text: Schema.String, inner: Schema.Struct({ n: Schema.Number }) })]
]

describe("fastDecoder", () => {
  for (const [name, schema] of structs) {
    it(`gives what the Schema decoder gives: ${name}`, () => {
      const full: Codec = Schema.decodeUnknownEffect(schema as Schema.Codec<unknown, unknown>)
      const fast = fastDecoder(schema.ast, full)
      for (const [label, input] of inputs) {
        expect(outcome(fast, input()), label).toStrictEqual(outcome(full, input()))
      }
    })
  }

  it("decodes a plain struct of primitives itself, and only such a struct", () => {
    const full: Codec = () => Effect.die("the Schema decoder ran")
    const fast = fastDecoder(structs[0][1].ast, full)
    expect(Effect.runSync(fast({ yes: true, text: "a", n: 2, more: 1 }))).toStrictEqual({ text: "a", n: 2, yes: true })
    for (const [, schema] of structs.slice(2)) expect(fastDecoder(schema.ast, full)).toBe(full)
  })
})

describe("fastEncoder", () => {
  const values: ReadonlyArray<unknown> = ["a", "", 0, Number.NaN, true, false, null, undefined, { a: 1 }, [1], 1n]
  for (const schema of [Schema.String, Schema.Number, Schema.Boolean, Schema.Finite, Schema.NumberFromString, Schema.Unknown]) {
    it(`gives what the Schema encoder gives: ${String(schema.ast)}`, () => {
      const full: Codec = Schema.encodeUnknownEffect(schema as Schema.Codec<unknown, unknown>)
      const fast = fastEncoder(schema.ast, full)
      for (const value of values) expect(outcome(fast, value), String(value)).toStrictEqual(outcome(full, value))
    })
  }
})

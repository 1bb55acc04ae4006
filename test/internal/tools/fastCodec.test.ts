import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { fastDecoder, fastEncoder } from "../../../src/internal/tools/fastCodec.ts"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

/** What a codec comes to for `u`: its value (its keys in order, its prototype, whether it is `u`), its error's message, or what it threw. */
const outcome = (codec: Codec, u: unknown) => {
  try {
    const exit = Effect.runSyncExit(codec(u))
    if (Exit.isSuccess(exit)) {
      const value: unknown = exit.value
      return {
        value,
        keys: typeof value === "object" && value !== null ? Reflect.ownKeys(value) : undefined,
        proto: typeof value === "object" && value !== null ? Object.getPrototypeOf(value) : undefined,
        same: value === u
      }
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

const protoKeys = Object.getOwnPropertyNames(Object.prototype)

describe("fastDecoder vs Schema over Object.prototype names", () => {
  for (const key of protoKeys) {
    it(`field ${key}`, () => {
      const schema = Schema.Struct({ [key]: Schema.String, n: Schema.Number })
      const full: Codec = Schema.decodeUnknownEffect(schema as unknown as Schema.Codec<unknown, unknown>)
      const fast = fastDecoder(schema.ast, full)
      const inputs: Array<unknown> = [
        { n: 1 },
        { [key]: "x", n: 1 },
        JSON.parse(`{"${key}": "x", "n": 1}`),
        Object.assign(Object.create(null), { n: 1 }),
        Object.assign(Object.create(null), { [key]: "v", n: 1 }),
        Object.create({ [key]: "inh", n: 2 })
      ]
      for (const input of inputs) expect(outcome(fast, input), `${key} ${String(Object.keys(input as object))}`).toStrictEqual(outcome(full, input))
    })
  }
})

describe("fastDecoder vs Schema: schema shapes", () => {
  class C extends Schema.Class<C>("C")({ text: Schema.String }) {}
  const Opaque = Schema.Struct({ text: Schema.String })
  const shapes: Array<[string, Schema.Top]> = [
    ["class", C],
    ["branded field", Schema.Struct({ text: Schema.String.pipe(Schema.brand("B")) })],
    ["branded struct", Schema.Struct({ text: Schema.String }).pipe(Schema.brand("S"))],
    ["annotated", Schema.Struct({ text: Schema.String.annotate({ description: "d" }) }).annotate({ identifier: "X" })],
    ["mutable key", Schema.Struct({ text: Schema.mutableKey(Schema.String) })],
    ["optionalKey", Schema.Struct({ text: Schema.optionalKey(Schema.String) })],
    ["NaN/Finite", Schema.Struct({ n: Schema.Number })],
    ["constructor field", Schema.Struct({ constructor: Schema.String })],
    ["numeric key", Schema.Struct({ "0": Schema.String, "1": Schema.Number })],
    ["toType class", Schema.toType(C as unknown as Schema.Top)],
    ["opaque", Opaque],
    ["withDecodingDefault", Schema.Struct({ text: Schema.String.pipe(Schema.optionalKey, Schema.withDecodingDefault(Effect.succeed("d"))) })]
  ]
  const inputs: Array<unknown> = [
    { text: "a", n: 1 },
    { text: "a", n: Number.NaN },
    { text: "a", n: -0 },
    { text: "a", n: Infinity },
    { "0": "a", "1": 2, text: "x", n: 1 },
    ["a", 1],
    { text: "x".repeat(1 << 20), n: 1 },
    { constructor: "c" },
    {},
    new Proxy({ text: "p", n: 1 }, {}),
    Object.freeze({ text: "f", n: 3 })
  ]
  for (const [name, schema] of shapes) {
    it(name, () => {
      const full: Codec = Schema.decodeUnknownEffect(schema as unknown as Schema.Codec<unknown, unknown>)
      const fast = fastDecoder(schema.ast, full)
      for (const input of inputs) {
        const a = outcome(fast, input)
        const b = outcome(full, input)
        expect(a, `${name}`).toStrictEqual(b)
        if ("value" in a && "value" in b) expect(Object.is((a.value as { readonly n?: unknown } | undefined)?.n, (b.value as { readonly n?: unknown } | undefined)?.n)).toBe(true)
      }
    })
  }
})

describe("fastEncoder vs Schema", () => {
  const values: Array<unknown> = ["a", -0, Number.NaN, Infinity, true, new String("a"), Object("s"), 1n, Symbol("s")]
  for (const schema of [Schema.String, Schema.Number, Schema.Boolean, Schema.String.pipe(Schema.brand("B")), Schema.String.annotate({ title: "t" })]) {
    it(String(schema.ast), () => {
      const full: Codec = Schema.encodeUnknownEffect(schema as unknown as Schema.Codec<unknown, unknown>)
      const fast = fastEncoder(schema.ast, full)
      for (const v of values) {
        const a = outcome(fast, v), b = outcome(full, v)
        expect(a).toStrictEqual(b)
        if ("value" in a && "value" in b) expect(Object.is(a.value, b.value)).toBe(true)
      }
    })
  }
})

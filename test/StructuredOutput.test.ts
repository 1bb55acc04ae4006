/**
 * A run with `output` ends in a typed value: every strategy on the scripted
 * model, re-asks with the decode error, the typed failure after the
 * retries, wrapped (non-object) outputs, OpenAI's strict form, the chain
 * handed back with the caller's toolkit, refusals before any model call,
 * and hostile answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, JsonSchema, Result, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Chain, LoopError, Mode, Privacy, StructuredOutput } from "../src/index.ts"
import { ScriptedModel } from "../src/testing/index.ts"

const Verdict = Schema.Struct({ approved: Schema.Boolean, reason: Schema.String })
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ id: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)
const handlers = toolkit.toLayer({ lookup: ({ id }) => Effect.succeed(`order ${id}: 20 EUR`) })
const start = () => Chain.make({ user: "Review refund 7", toolkit })

/** Runs `output` on `turns`; the exit and the model (its requests). */
const runWith = (turns: ReadonlyArray<ScriptedModel.Turn>, output: StructuredOutput.Spec, options?: ScriptedModel.Options) => {
  const model = ScriptedModel.make(turns, options)
  return Effect.map(
    Effect.exit(Chain.run(start(), { mode: Mode.whileNeedsResponse, output }).pipe(Effect.provide([model.layer, handlers]))),
    (exit) => ({ exit, model })
  )
}

const final = (params: unknown): ScriptedModel.Turn => ({ toolCalls: [{ name: "final_answer", params }] })
const reasonOf = (exit: Exit.Exit<unknown, LoopError.RunError>) =>
  Exit.isFailure(exit) ? exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error.reason : undefined))[0] : undefined
const toolNames = (model: ScriptedModel.ScriptedModel, i: number) => model.requests[i]!.tools.map((t) => t.name)
const lastUserText = (prompt: Prompt.Prompt): string => {
  const message = prompt.content.filter((m) => m.role === "user").at(-1)
  return message === undefined ? "" : message.content.map((p) => (p.type === "text" ? p.text : "")).join("")
}

describe("StructuredOutput: the tool strategy", () => {
  it.effect("a valid final answer ends the run with the decoded value, after the chain's own tools ran", () =>
    Effect.gen(function*() {
      const { exit, model } = yield* runWith(
        [{ toolCalls: [{ name: "lookup", params: { id: "7" } }] }, final({ approved: true, reason: "paid" })],
        Verdict
      )
      const outcome = yield* exit
      expect(outcome._tag).toBe("Ok")
      if (outcome._tag !== "Ok") return
      expect(outcome.output).toEqual({ approved: true, reason: "paid" })
      expect(outcome.reason).toBe("return-behavior")
      expect(toolNames(model, 0)).toEqual(["lookup", "final_answer"])
      // The chain handed back has the caller's toolkit: the final-answer tool is gone.
      expect(Object.keys(outcome.chain.toolkit.tools)).toEqual(["lookup"])
      expect(model.calls).toBe(2)
    }))

  it.effect("the final-answer tool is shown the output's JSON Schema", () =>
    Effect.gen(function*() {
      const { model } = yield* runWith([final({ approved: true, reason: "ok" })], Verdict)
      const tool = model.requests[0]!.tools.find((t) => t.name === "final_answer")!
      expect(Tool.getJsonSchema(tool)).toEqual(Tool.getJsonSchemaFromSchema(Verdict))
    }))

  const table: ReadonlyArray<{
    readonly name: string
    readonly turns: ReadonlyArray<ScriptedModel.Turn>
    readonly retries: number
    readonly expected: { readonly output: unknown } | { readonly attempts: number; readonly raw: string }
    readonly calls: number
  }> = [
    { name: "wrong arguments, then right", turns: [final({ approved: "yes" }), final({ approved: false, reason: "late" })], retries: 2, expected: { output: { approved: false, reason: "late" } }, calls: 2 },
    { name: "wrong arguments past the retries", turns: [final({}), final({ approved: 1 })], retries: 1, expected: { attempts: 2, raw: "{\"approved\":1}" }, calls: 2 },
    { name: "no retries: the first wrong answer fails", turns: [final({ approved: true })], retries: 0, expected: { attempts: 1, raw: "{\"approved\":true}" }, calls: 1 },
    { name: "a text answer that is the JSON", turns: [{ text: "Here: ```json\n{\"approved\":true,\"reason\":\"ok\"}\n```" }], retries: 2, expected: { output: { approved: true, reason: "ok" } }, calls: 1 },
    { name: "a prose answer, re-asked, then the tool", turns: [{ text: "Looks fine to me." }, final({ approved: true, reason: "fine" })], retries: 1, expected: { output: { approved: true, reason: "fine" } }, calls: 2 },
    { name: "prose past the retries", turns: [{ text: "Fine." }, { text: "Really fine." }], retries: 1, expected: { attempts: 2, raw: "Really fine." }, calls: 2 }
  ]
  for (const row of table) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const { exit, model } = yield* runWith(row.turns, StructuredOutput.make(Verdict, { retries: row.retries }))
        expect(model.calls).toBe(row.calls)
        if ("output" in row.expected) {
          const outcome = yield* exit
          expect(outcome._tag === "Ok" ? outcome.output : outcome._tag).toEqual(row.expected.output)
          return
        }
        const reason = reasonOf(exit)
        expect(reason).toBeInstanceOf(LoopError.OutputInvalid)
        const invalid = reason as LoopError.OutputInvalid
        expect({ attempts: invalid.attempts, raw: invalid.raw }).toEqual(row.expected)
        expect(invalid.message).toContain(`after ${row.expected.attempts} attempt(s)`)
        // Nothing is lost: the error's chain holds every answer, with the caller's toolkit.
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        const chain = error?._tag === "Fail" ? (error.error as LoopError.RunError).chain : undefined
        expect(chain?.runCount).toBe(row.calls)
        expect(Object.keys(chain?.toolkit.tools ?? {})).toEqual(["lookup"])
      }))
  }

  it.effect("a wrong answer is fed back as a failed call naming the error; a prose answer is re-asked by a user message", () =>
    Effect.gen(function*() {
      const { model } = yield* runWith([final({ approved: "yes" }), { text: "ok" }, final({ approved: true, reason: "r" })], Verdict)
      const fedBack = model.requests[1]!.prompt.content.at(-1)!
      expect(fedBack.role).toBe("tool")
      const result = fedBack.role === "tool" ? fedBack.content[0] : undefined
      expect(result?.type === "tool-result" && result.isFailure).toBe(true)
      expect(result?.type === "tool-result" ? String(result.result) : "").toContain("approved")
      expect(lastUserText(model.requests[2]!.prompt)).toContain("calling `final_answer`")
    }))
})

describe("StructuredOutput: the native strategy", () => {
  it.effect("every request carries the response format; the JSON text is the answer; no tool is added", () =>
    Effect.gen(function*() {
      const { exit, model } = yield* runWith([{ text: "{\"approved\":true,\"reason\":\"ok\"}" }], StructuredOutput.make(Verdict, { strategy: "native" }))
      const outcome = yield* exit
      expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: true, reason: "ok" })
      expect(model.requests[0]!.responseFormat?.name).toBe("final_answer")
      expect(model.requests[0]!.responseFormat?.schema).toEqual(Tool.getJsonSchemaFromSchema(Verdict))
      expect(toolNames(model, 0)).toEqual(["lookup"])
    }))

  it.effect("a wrong answer is re-asked with the error; past the retries the run fails with OutputInvalid", () =>
    Effect.gen(function*() {
      const { exit, model } = yield* runWith(
        [{ text: "{\"approved\":true}" }, { text: "not json" }],
        StructuredOutput.make(Verdict, { strategy: "native", retries: 1 })
      )
      expect(lastUserText(model.requests[1]!.prompt)).toContain("did not match the required JSON Schema")
      expect(lastUserText(model.requests[1]!.prompt)).toContain("reason")
      const reason = reasonOf(exit) as LoopError.OutputInvalid
      expect([reason._tag, reason.attempts, reason.raw]).toEqual(["OutputInvalid", 2, "not json"])
      expect(reason.error).toContain("not valid JSON")
    }))

  it.effect("auto: native when the model says it supports it, the tool otherwise", () =>
    Effect.gen(function*() {
      const native = yield* runWith([{ text: "{\"approved\":true,\"reason\":\"n\"}" }], Verdict, { structuredOutputs: true })
      expect(native.model.requests[0]!.responseFormat).toBeDefined()
      const tool = yield* runWith([final({ approved: true, reason: "t" })], Verdict)
      expect(tool.model.requests[0]!.responseFormat).toBeUndefined()
      expect(toolNames(tool.model, 0)).toContain("final_answer")
    }))
})

describe("StructuredOutput: outputs that are not objects are asked for as { value }", () => {
  const Names = Schema.Array(Schema.String)
  it.effect("through the tool", () =>
    Effect.gen(function*() {
      const { exit, model } = yield* runWith([final({ value: ["a", "b"] })], Names)
      expect((yield* exit) as { readonly output?: unknown }).toMatchObject({ output: ["a", "b"] })
      const tool = model.requests[0]!.tools.find((t) => t.name === "final_answer")!
      expect(Tool.getJsonSchema(tool)).toMatchObject({ type: "object", required: ["value"] })
    }))
  it.effect("natively, and a bare value in text is accepted too", () =>
    Effect.gen(function*() {
      const wrapped = yield* runWith([{ text: "{\"value\":[\"x\"]}" }], StructuredOutput.make(Names, { strategy: "native" }))
      expect((yield* wrapped.exit) as { readonly output?: unknown }).toMatchObject({ output: ["x"] })
      const bare = yield* runWith([{ text: "[\"y\"]" }], StructuredOutput.make(Names, { strategy: "native" }))
      expect((yield* bare.exit) as { readonly output?: unknown }).toMatchObject({ output: ["y"] })
      const text = yield* runWith([{ text: "plain words" }], StructuredOutput.make(Schema.String, { strategy: "native" }))
      expect((yield* text.exit) as { readonly output?: unknown }).toMatchObject({ output: "plain words" })
    }))
})

describe("StructuredOutput: answers are read as the JSON their JSON Schema describes", () => {
  // The model is shown the JSON codec's form (a Date as text, a BigInt as digits); answers decode through it.
  const Shipment = Schema.Struct({ at: Schema.Date, grams: Schema.BigInt, note: Schema.optional(Schema.String) })
  const answer = { at: "2026-11-26T10:00:00.000Z", grams: "1200", note: null }
  it.effect.each([
    ["the tool", "tool", final(answer)],
    ["the provider's JSON mode", "native", { text: JSON.stringify(answer) }]
  ] as const)("through %s: a Date, a BigInt and a null optional key decode", ([, strategy, turn]) =>
    Effect.gen(function*() {
      const output = StructuredOutput.make(Shipment, { strategy })
      const { exit, model } = yield* runWith([turn], output)
      expect((yield* exit) as { readonly output?: unknown }).toMatchObject({ output: { at: new Date(answer.at), grams: 1200n } })
      const shown = strategy === "tool"
        ? Tool.getJsonSchema(model.requests[0]!.tools.find((t) => t.name === "final_answer")!)
        : model.requests[0]!.responseFormat?.schema
      expect(shown).toMatchObject({ properties: { at: { type: "string" }, grams: { type: "string" } } })
    }))
})

describe("StructuredOutput: strict form", () => {
  it("objects get every property required and additionalProperties: false, at every depth", () => {
    const nested = Schema.Struct({ a: Schema.String, b: Schema.Array(Schema.Struct({ c: Schema.NullOr(Schema.Number) })) })
    const output = StructuredOutput.make(nested, { strict: true })
    expect(output.problem).toBeUndefined()
    expect(output.jsonSchema).toMatchObject({
      additionalProperties: false,
      required: ["a", "b"],
      properties: { b: { items: { additionalProperties: false, required: ["c"] } } }
    })
  })
  const refused: ReadonlyArray<readonly [string, Schema.Top & { readonly DecodingServices: never }, string]> = [
    ["an optional key", Schema.Struct({ a: Schema.optionalKey(Schema.String) }), "Schema.NullOr"],
    ["a record", Schema.Record(Schema.String, Schema.Number), "any name"]
  ]
  for (const [name, schema, hint] of refused) {
    it.effect(`${name} is refused before any model call`, () =>
      Effect.gen(function*() {
        const { exit, model } = yield* runWith([{ text: "{}" }], StructuredOutput.make(schema, { strict: true }))
        const reason = reasonOf(exit) as LoopError.InvalidInput
        expect([reason._tag, reason.field]).toEqual(["InvalidInput", "output.strict"])
        expect(reason.message).toContain(hint)
        expect(model.calls).toBe(0)
      }))
  }
  it("strictJsonSchema works on any JSON Schema ($defs, anyOf), and refuses what has no strict form", () => {
    const schema: JsonSchema.JsonSchema = {
      anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }],
      $defs: { A: { type: "object", properties: { x: { type: "string" } }, required: ["x"] } }
    }
    const strict = StructuredOutput.strictJsonSchema(schema)
    expect(Result.isSuccess(strict) && strict.success).toMatchObject({ $defs: { A: { additionalProperties: false } } })
    const optional = StructuredOutput.strictJsonSchema({ type: "object", properties: { x: {} } })
    expect(Result.isFailure(optional) && optional.failure.message).toContain("$.x is optional")
    let deep: JsonSchema.JsonSchema = { type: "string" }
    for (let i = 0; i < 200; i++) deep = { type: "array", items: deep }
    expect(Result.isFailure(StructuredOutput.strictJsonSchema(deep))).toBe(true)
  })
})

describe("StructuredOutput: refusals before any model call", () => {
  const rows: ReadonlyArray<readonly [string, unknown, string]> = [
    ["not a Schema", 42, "output"],
    ["a negative retry count", StructuredOutput.make(Verdict, { retries: -1 }), "output.retries"],
    ["an unknown strategy", StructuredOutput.make(Verdict, { strategy: "json" as never }), "output.strategy"],
    ["a name no provider accepts", StructuredOutput.make(Verdict, { name: "final answer!" }), "output.name"],
    ["the name of a chain's tool", StructuredOutput.make(Verdict, { name: "lookup" }), "output.name"],
    ["options that are not an object (from JavaScript)", StructuredOutput.make(Verdict, 5 as never), "output.options"],
    ["a make given no Schema (from JavaScript)", StructuredOutput.make("person" as never), "output.schema"]
  ]
  for (const [name, output, field] of rows) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const { exit, model } = yield* runWith([final({ approved: true, reason: "x" })], output as StructuredOutput.Spec)
        const reason = reasonOf(exit) as LoopError.InvalidInput
        expect([reason._tag, reason.field]).toEqual(["InvalidInput", field])
        expect(model.calls).toBe(0)
      }))
  }
})

describe("StructuredOutput: hostile answers", () => {
  const prototypeNames = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"]
  it.effect("prototype names as keys decode to the Schema's keys only and pollute nothing", () =>
    Effect.gen(function*() {
      const hostile = JSON.parse(`{${prototypeNames.map((n) => `"${n}":{"polluted":true}`).join(",")},"approved":true,"reason":"r"}`)
      const { exit } = yield* runWith([final(hostile)], Verdict)
      const outcome = yield* exit
      expect(outcome._tag === "Ok" ? outcome.output : undefined).toEqual({ approved: true, reason: "r" })
      expect(({} as { readonly polluted?: unknown }).polluted).toBeUndefined()
    }))
  it.effect("a huge, deeply nested or empty text answer ends in OutputInvalid, never a defect", () =>
    Effect.gen(function*() {
      for (const text of ["", "[".repeat(100_000), "{".repeat(50_000) + "}".repeat(50_000), "x".repeat(2_000_000)]) {
        const { exit } = yield* runWith([{ text }], StructuredOutput.make(Verdict, { strategy: "native", retries: 0 }))
        expect(reasonOf(exit)?._tag).toBe("OutputInvalid")
        expect((reasonOf(exit) as LoopError.OutputInvalid).error.length).toBeLessThanOrEqual(2_001)
      }
    }))
})

describe("StructuredOutput: streams", () => {
  it.effect("Chain.stream with output runs the re-asks and ends in RunFinished", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([final({ approved: "no" }), final({ approved: true, reason: "s" })])
      const events = yield* Chain.stream(start(), { mode: Mode.whileNeedsResponse, output: Verdict }).pipe(
        Stream.runCollect,
        Effect.provide([model.layer, handlers])
      )
      expect(events.at(-1)?._tag).toBe("RunFinished")
      expect(model.calls).toBe(2)
    }))

  it.effect("RunFinished carries the output encoded by its schema; none without output or with OmitContent", () =>
    Effect.gen(function*() {
      // A schema whose encoded form differs from its type: the event shows the JSON form.
      const Dated = Schema.Struct({ approved: Schema.Boolean, count: Schema.NumberFromString })
      const last = (output: StructuredOutput.Spec | undefined, omit = false) => {
        const model = ScriptedModel.make(
          output === undefined ? [{ text: "fine" }] : [final({ approved: true, count: "3" })]
        )
        const options = output === undefined ? { mode: Mode.whileNeedsResponse } : { mode: Mode.whileNeedsResponse, output }
        const events = Chain.stream(start(), options).pipe(Stream.runCollect, Effect.provide([model.layer, handlers]))
        return Effect.map(omit ? Privacy.omitContent(events) : events, (all) => all.at(-1))
      }
      const withOutput = yield* last(Dated)
      expect(withOutput?._tag === "RunFinished" && withOutput.output).toEqual({ approved: true, count: "3" })
      const without = yield* last(undefined)
      expect(without?._tag === "RunFinished" && "output" in without).toBe(false)
      const omitted = yield* last(Dated, true)
      expect(omitted?._tag === "RunFinished" && "output" in omitted).toBe(false)
    }))
})

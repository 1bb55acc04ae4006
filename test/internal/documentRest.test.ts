/**
 * `Chain.encode` writes a document's fields besides its messages without
 * the Schema when they have the loop's usual shapes (a plain copy), and
 * through it otherwise. On random documents — every optional field present
 * or absent, usual and odd values (a bad finish reason, a fractional or
 * negative count, arguments left out, a mode state with entries, call
 * states) — the plain copy is either refused or equal to the Schema's
 * encoding, and it is never taken where the Schema refuses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Response } from "effect/ai"
import { Document } from "../../src/internal/chainDocument.ts"
import { plainRest } from "../../src/internal/documentRest.ts"

const CallSpec = Schema.Struct({ id: Schema.String, name: Schema.String, params: Schema.Literals(["object", "string"]), extra: Schema.Boolean })
const ResultSpec = Schema.Struct({
  isFailure: Schema.Boolean,
  encoded: Schema.Literals(["value", "undefined", "missing"]),
  failureOrigin: Schema.Literals(["none", "handler", "timeout"]),
  rejected: Schema.Literals(["none", "true", "false"]),
  directReturn: Schema.Literals(["none", "true"])
})
const ResponseSpec = Schema.Union([
  Schema.Literal("none"),
  Schema.Struct({
    text: Schema.String,
    finishReason: Schema.Literals(["stop", "tool-calls", "unknown"]),
    calls: Schema.Array(CallSpec).check(Schema.isMaxLength(2)),
    usage: Schema.Literals(["none", "empty", "counts", "partial"])
  })
])
/** At most one odd value per document (most have none), so that both paths are exercised. */
const oddities = [
  "badFinish",
  "nullText",
  "paramsUndefined",
  "paramsMissing",
  "nameNotString",
  "isFailureNotBoolean",
  "badOrigin",
  "badFlag",
  "roundWithoutEncoded",
  "fractionCount",
  "negativeCount",
  "modeStateEntries",
  "contextNullProto",
  "contextSymbolKey",
  "callStates",
  "usageUndefined",
  "usagePlain",
  "usageFraction"
] as const
const RestSpec = Schema.Struct({
  response: ResponseSpec,
  pending: Schema.Array(CallSpec).check(Schema.isMaxLength(2)),
  stored: Schema.Array(ResultSpec).check(Schema.isMaxLength(2)),
  round: Schema.Union([Schema.Literal("none"), Schema.Array(ResultSpec).check(Schema.isMaxLength(2))]),
  runCount: Schema.Literals([0, 1, 7, 25, 1000]),
  failureCount: Schema.Literals([0, 2]),
  oddity: Schema.Literals(oddities.map((_, i) => i).concat([-1, -2, -3, -4, -5, -6]))
})

const callOf = (spec: typeof CallSpec.Type, i: number): Record<string, unknown> => ({
  id: spec.id,
  name: spec.name,
  params: spec.params === "object" ? { q: `v${i}` } : "text",
  ...(spec.extra ? { extra: 1 } : {})
})

const resultOf = (spec: typeof ResultSpec.Type, i: number): Record<string, unknown> => ({
  id: `r${i}`,
  name: "t",
  isFailure: spec.isFailure,
  ...(spec.encoded === "missing" ? {} : { encoded: spec.encoded === "value" ? { out: i } : undefined }),
  ...(spec.failureOrigin === "none" ? {} : { failureOrigin: spec.failureOrigin }),
  ...(spec.rejected === "none" ? {} : { rejected: spec.rejected === "true" }),
  ...(spec.directReturn === "none" ? {} : { directReturn: true })
})

const usageOf = (spec: "empty" | "counts" | "partial"): Response.Usage =>
  spec === "empty"
    ? new Response.Usage({ inputTokens: {}, outputTokens: {} })
    : spec === "partial"
    ? new Response.Usage({ inputTokens: { total: 12 }, outputTokens: { text: undefined } })
    : new Response.Usage({
      inputTokens: { uncached: 3, total: 5, cacheRead: 2, cacheWrite: undefined },
      outputTokens: { total: 7, text: 7, reasoning: undefined }
    })

const responseOf = (spec: Exclude<typeof ResponseSpec.Type, "none">): Record<string, unknown> => ({
  text: spec.text,
  toolCalls: spec.calls.map(callOf),
  finishReason: spec.finishReason,
  ...(spec.usage === "none" ? {} : { usage: usageOf(spec.usage) })
})

type Built = Record<string, unknown> & {
  lastResponse?: Record<string, unknown>
  pendingToolCalls: Array<Record<string, unknown>>
  lastToolResults: Array<Record<string, unknown>>
  roundResults?: Array<Record<string, unknown>>
}

/** The document's odd value, where the document has a place for it. */
const applyOddity = (rest: Built, oddity: (typeof oddities)[number]): void => {
  const response = rest.lastResponse
  const call = rest.pendingToolCalls[0]
  const stored = rest.lastToolResults[0]
  switch (oddity) {
    case "badFinish":
      if (response !== undefined) response.finishReason = "bogus"
      break
    case "nullText":
      if (response !== undefined) response.text = null
      break
    case "paramsUndefined":
      if (call !== undefined) call.params = undefined
      break
    case "paramsMissing":
      if (call !== undefined) delete call.params
      break
    case "nameNotString":
      if (call !== undefined) call.name = 3
      break
    case "isFailureNotBoolean":
      if (stored !== undefined) stored.isFailure = "no"
      break
    case "badOrigin":
      if (stored !== undefined) stored.failureOrigin = "bogus"
      break
    case "badFlag":
      if (stored !== undefined) stored.rejected = "yes"
      break
    case "roundWithoutEncoded":
      if (rest.roundResults?.[0] !== undefined) delete rest.roundResults[0].encoded
      break
    case "fractionCount":
      rest.runCount = 1.5
      break
    case "negativeCount":
      rest.failureCount = -1
      break
    case "modeStateEntries":
      rest.modeState = { step: 2, tags: ["a", null] }
      break
    case "contextNullProto":
      rest.context = Object.create(null)
      break
    case "contextSymbolKey":
      rest.context = { [Symbol.for("loopwork/test")]: 1 }
      break
    case "callStates":
      rest.callStates = { r0: { _tag: "AwaitingApproval" } }
      break
    case "usageUndefined":
      if (response !== undefined) response.usage = undefined
      break
    case "usagePlain":
      if (response !== undefined) response.usage = { inputTokens: {}, outputTokens: {} }
      break
    case "usageFraction":
      // The constructor refuses it; an instance made around it holds it.
      if (response !== undefined) {
        response.usage = Object.assign(Object.create(Response.Usage.prototype), { inputTokens: { total: 1.5 }, outputTokens: {} })
      }
      break
  }
}

/** A document without messages, as `Chain.encode` builds it (typed loosely: odd values are the point). */
const restOf = (spec: typeof RestSpec.Type): typeof Document.Type => {
  const rest: Built = {
    format: "loopwork/chain",
    version: 2,
    messages: [],
    ...(spec.response === "none" ? {} : { lastResponse: responseOf(spec.response) }),
    pendingToolCalls: spec.pending.map(callOf),
    lastToolResults: spec.stored.map(resultOf),
    ...(spec.round === "none" ? {} : { roundResults: spec.round.map(resultOf) }),
    runCount: spec.runCount,
    failureCount: spec.failureCount,
    modeState: {},
    context: {}
  }
  const oddity = oddities[spec.oddity]
  if (oddity !== undefined) applyOddity(rest, oddity)
  return rest as never
}

/** The value as text, `undefined`s shown: the same text means the same keys, in the same order. */
const shown = (value: unknown): string => JSON.stringify(value, (_, v: unknown) => v === undefined ? "(undefined)" : v)

const bySchema = Schema.encodeExit(Document)

describe("Chain.encode, the document's fields besides its messages", () => {
  it.effect.prop(
    "the plain copy is refused or equals the Schema's encoding, and is refused where the Schema fails",
    { spec: RestSpec },
    ({ spec }) =>
      Effect.sync(() => {
        const rest = restOf(spec)
        const plain = plainRest(rest)
        if (plain === undefined) return
        const encoded = bySchema(rest)
        expect(Exit.isSuccess(encoded)).toBe(true)
        if (Exit.isSuccess(encoded)) {
          expect(plain).toStrictEqual(encoded.value)
          expect(shown(plain)).toBe(shown(encoded.value))
        }
      }),
    { arbitrary: { runs: 2000 } }
  )

  it("takes the plain copy for the loop's usual fields", () => {
    const rest = restOf({
      response: { text: "done", finishReason: "stop", calls: [], usage: "counts" },
      pending: [{ id: "c1", name: "echo", params: "object", extra: false }],
      stored: [{ isFailure: false, encoded: "missing", failureOrigin: "none", rejected: "none", directReturn: "none" }],
      round: [{ isFailure: true, encoded: "value", failureOrigin: "handler", rejected: "true", directReturn: "none" }],
      runCount: 7,
      failureCount: 0,
      oddity: -1
    })
    const plain = plainRest(rest)
    expect(plain).toBeDefined()
    const encoded = bySchema(rest)
    expect(Exit.isSuccess(encoded) ? encoded.value : encoded).toStrictEqual(plain)
    expect(shown(plain)).toBe(shown(Exit.isSuccess(encoded) ? encoded.value : undefined))
  })

  it("leaves every odd value to the Schema", () => {
    for (let i = 0; i < oddities.length; i++) {
      const rest = restOf({
        response: { text: "done", finishReason: "stop", calls: [], usage: "counts" },
        pending: [{ id: "c1", name: "echo", params: "object", extra: false }],
        stored: [{ isFailure: false, encoded: "value", failureOrigin: "none", rejected: "none", directReturn: "none" }],
        round: [{ isFailure: true, encoded: "value", failureOrigin: "handler", rejected: "true", directReturn: "none" }],
        runCount: 7,
        failureCount: 0,
        oddity: i
      })
      expect([oddities[i], plainRest(rest)]).toStrictEqual([oddities[i], undefined])
    }
  })
})

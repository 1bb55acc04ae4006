/**
 * A stored round result may lack `encoded` (JSON drops an `undefined` one: a
 * tool returning nothing), and nothing else is lenient: a round result
 * still needs its other fields, a last-round result without `encoded` still
 * needs the transcript to hold it; and the document's other fields are read
 * once (helper-51's review).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"

const key = Redacted.make("a secret of at least thirty-two bytes, surely!")
const Ask = Tool.make("ask", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, needsApproval: true })
const Quiet = Tool.make("quiet", { parameters: Schema.Struct({}), success: Schema.Void })
const Loud = Tool.make("loud", { parameters: Schema.Struct({}), success: Schema.String })
const kit = Toolkit.make(Ask, Quiet, Loud)
const handlers = kit.toLayer({ ask: () => Effect.succeed("answered"), quiet: () => Effect.void, loud: () => Effect.succeed("loud!") })

/** A chain paused on `ask`'s approval after `quiet` and `loud` ran (their results in roundResults), as parsed JSON. */
const pausedDocument = Effect.gen(function*() {
  const model = ScriptedModel.make([{
    toolCalls: [{ id: "v1", name: "quiet", params: {} }, { id: "l1", name: "loud", params: {} }, { id: "a1", name: "ask", params: { q: "x" } }]
  }])
  const paused = yield* Chain.run(Chain.make({ user: "hi", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide([model.layer, handlers])
  )
  const text = JSON.stringify(yield* Chain.encode(paused.chain))
  return JSON.parse(text) as { roundResults: Array<Record<string, unknown>>; lastToolResults: Array<Record<string, unknown>> }
})

const decodes = (document: unknown) =>
  Effect.map(Effect.exit(Chain.decode(JSON.stringify(document), { toolkit: kit, trustUnsignedApprovals: true })), Exit.isSuccess)

describe("roundResults' encoded is optional, nothing else is", () => {
  it.effect("without `encoded` a round result decodes (as undefined); without id, name or isFailure it is refused", () =>
    Effect.gen(function*() {
      const document = yield* pausedDocument
      expect(document.roundResults.map((r) => r.id)).toEqual(["v1", "l1"])
      const without = (field: string) => ({
        ...document,
        roundResults: document.roundResults.map((r) => r.id === "l1" ? Object.fromEntries(Object.entries(r).filter(([k]) => k !== field)) : r)
      })
      const outcome = {
        encoded: yield* decodes(without("encoded")),
        id: yield* decodes(without("id")),
        name: yield* decodes(without("name")),
        isFailure: yield* decodes(without("isFailure"))
      }
      expect(outcome).toEqual({ encoded: true, id: false, name: false, isFailure: false })
      const back = yield* Chain.decode(JSON.stringify(without("encoded")), { toolkit: kit, trustUnsignedApprovals: true })
      expect(back.roundResults.map((r) => [r.id, r.result])).toEqual([["v1", undefined], ["l1", undefined]])
    }))

  it.effect("a Void tool's round result round-trips signed (its undefined `encoded` left out by JSON)", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{ toolCalls: [{ id: "v1", name: "quiet", params: {} }, { id: "a1", name: "ask", params: { q: "x" } }] }])
      const paused = yield* Chain.run(Chain.make({ user: "hi", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      const signed = JSON.stringify(yield* Chain.encode(paused.chain, { signingKey: key }))
      const back = yield* Chain.decode(signed, { toolkit: kit, signingKey: key })
      expect(JSON.stringify(yield* Chain.encode(back, { signingKey: key }))).toBe(signed)
    }))
})

describe("lastToolResults keep their rules", () => {
  it.effect("a last-round result without `encoded` whose transcript lacks it, or without isFailure, is refused", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{ toolCalls: [{ id: "l1", name: "loud", params: {} }] }, { text: "done" }])
      let chain = Chain.make({ user: "hi", toolkit: kit })
      for (let i = 0; i < 3 && chain.lastToolResults.length === 0; i++) {
        chain = (yield* Chain.run(chain, { mode: Mode.step }).pipe(Effect.provide([model.layer, handlers]))).chain
      }
      const step = { chain }
      const document = JSON.parse(JSON.stringify(yield* Chain.encode(step.chain))) as {
        lastToolResults: Array<Record<string, unknown>>
        messages: Array<{ role: string; content: unknown }>
      }
      expect(document.lastToolResults.length).toBe(1)
      expect(Object.hasOwn(document.lastToolResults[0], "encoded")).toBe(false)
      expect(yield* decodes(document)).toBe(true)
      const noIsFailure = { ...document, lastToolResults: [{ id: "l1", name: "loud", encoded: "loud!" }] }
      expect(yield* decodes(noIsFailure)).toBe(false)
      const noTranscript = { ...document, messages: document.messages.filter((m) => m.role !== "tool") }
      expect(yield* decodes(noTranscript)).toBe(false)
    }))
})

describe("documentRest reads a field once", () => {
  it("a last response whose text getter answers a string then a number never stores the number", () => {
    let reads = 0
    const response = Object.defineProperties({}, {
      text: { enumerable: true, get: () => reads++ < 1 ? "t" : 5 },
      toolCalls: { enumerable: true, value: [] },
      finishReason: { enumerable: true, value: "stop" }
    }) as { text: string; toolCalls: []; finishReason: "stop" }
    const exit = Effect.runSyncExit(Chain.encode(Chain.make({ user: "hi" }).copy({ lastResponse: response, runCount: 1 })))
    const stored = Exit.isSuccess(exit) ? exit.value.lastResponse?.text : "refused"
    expect(typeof stored).toBe("string")
  })
})

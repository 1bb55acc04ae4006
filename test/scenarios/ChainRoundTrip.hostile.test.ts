/**
 * Chains built through the public API (runs of ScriptedModel, approvals, external results)
 * encode to a document that serialises, decodes (signed: verifies) and encodes to the same text:
 * hostile call ids, -0 usage, and a paused round next to a tool returning nothing (`Schema.Void`),
 * whose `undefined` result JSON leaves out (found by helper-50: decode refused it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ExternalTool, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"

const key = Redacted.make("a secret of at least thirty-two bytes, surely!")

const Ask = Tool.make("ask", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, needsApproval: true })
const Quiet = Tool.make("quiet", { parameters: Schema.Struct({}), success: Schema.Void })
const Ext = ExternalTool.mark(Tool.make("ext", { parameters: Schema.Struct({}), success: Schema.Unknown }))
const kit = Toolkit.make(Ask, Quiet, Ext)
const handlers = kit.toLayer({ ask: () => Effect.succeed("answered"), quiet: () => Effect.void, ext: () => Effect.die("external") })

/** encode → text → decode → encode → text, unsigned and signed; the two texts equal. */
const roundTrips = (chain: Chain.Chain<Toolkit.Tools<typeof kit>>) =>
  Effect.gen(function*() {
    const first = JSON.stringify(yield* Chain.encode(chain))
    const again = JSON.stringify(yield* Chain.encode(yield* Chain.decode(first, { toolkit: kit, trustUnsignedApprovals: true })))
    expect(again).toBe(first)
    const signed = JSON.stringify(yield* Chain.encode(chain, { signingKey: key }))
    const back = yield* Chain.decode(signed, { toolkit: kit, signingKey: key })
    expect(JSON.stringify(yield* Chain.encode(back, { signingKey: key }))).toBe(signed)
    const tampered = signed.replace("\"runCount\":", "\"runCount\":1")
    expect(Exit.isFailure(yield* Effect.exit(Chain.decode(tampered, { toolkit: kit, signingKey: key })))).toBe(true)
  })

const hostile = [...Object.getOwnPropertyNames(Object.prototype), "", "x".repeat(5000), "\ud800", "💥"]

describe("public-API chains round-trip", () => {
  it.effect("a round paused on approval with hostile call ids round-trips signed and unsigned", () =>
    Effect.gen(function*() {
      const calls = hostile.map((id) => ({ id, name: "ask", params: { q: id } }))
      const model = ScriptedModel.make([{ toolCalls: calls }])
      const paused = yield* Chain.run(Chain.make({ user: "hi", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      yield* roundTrips(paused.chain)
      const decisions: Record<string, Approval.Decision> = Object.create(null)
      for (const id of hostile.slice(0, 6)) decisions[id] = Approval.approve
      const decided = yield* Approval.decide(paused.chain, decisions)
      yield* roundTrips(decided)
    }), 30_000)

  it.effect("a tool returning nothing (Schema.Void) round-trips: its undefined result survives JSON", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{ toolCalls: [{ id: "v1", name: "quiet", params: {} }, { id: "a1", name: "ask", params: { q: "x" } }] }])
      const paused = yield* Chain.run(Chain.make({ user: "hi", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      yield* roundTrips(paused.chain)
    }))

  it.effect("usage counts of -0 and a supplied external result round-trip signed", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{
        toolCalls: [{ id: "__proto__", name: "ext", params: {} }],
        usage: { inputTokens: -0, outputTokens: -0 }
      }])
      const paused = yield* Chain.run(Chain.make({ user: "hi", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      yield* roundTrips(paused.chain)
      const results: Record<string, ExternalTool.Supplied> = Object.create(null)
      results["__proto__"] = { result: JSON.parse("{\"__proto__\":{\"a\":-0},\"constructor\":[null]}") }
      const supplied = yield* ExternalTool.supply(paused.chain, results)
      yield* roundTrips(supplied)
    }))
})

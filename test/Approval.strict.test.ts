/**
 * Decisions and pending calls from JavaScript: a decision with a key no decision has (a typo such
 * as `mesage`) is refused with `InvalidInput`, not silently dropped, for `Approval.decide` as for
 * `ExternalTool.supply`; `Approval.pending` and `ExternalTool.pending` given something that is not
 * a chain throw `InvalidInput`, never a `TypeError`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Approval, Chain, ChatModel, ExternalTool, LoopError, Mode } from "../src/index.ts"
import { makeKit } from "./support/approval.ts"

/** A chain paused with `call_1_1` (delete_file) waiting for approval. */
const paused = Effect.gen(function*() {
  const kit = makeKit()
  const model = ChatModel.scripted([{ toolCalls: [{ name: "delete_file", params: { path: "/tmp/x" } }] }])
  const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
  return outcome.chain
})

describe("Approval.decide refuses keys no decision has", () => {
  it.effect.each([
    { name: "a misspelt message", decision: { _tag: "Reject", mesage: "too risky" }, names: "mesage" },
    { name: "an extra key on Approve", decision: { _tag: "Approve", reason: "fine" }, names: "reason" },
    { name: "an edit with a stray key", decision: { _tag: "Edit", params: { path: "/tmp/y" }, approve: true }, names: "approve" }
  ])("$name: InvalidInput naming the key, the chain unchanged", ({ decision, names }) =>
    Effect.gen(function*() {
      const chain = yield* paused
      const error = yield* Effect.flip(Approval.decide(chain, { call_1_1: decision as unknown as Approval.Decision }))
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
      expect(error.message).toContain(names)
      expect(Approval.pending(chain).map((call) => call.id)).toEqual(["call_1_1"])
    }))

  it.effect("the three well-formed decisions still pass", () =>
    Effect.gen(function*() {
      const chain = yield* paused
      for (const decision of [Approval.approve, Approval.reject("no"), Approval.edit({ path: "/tmp/y" })]) {
        const decided = yield* Approval.decide(chain, { call_1_1: decision })
        expect(decided.callStates.get("call_1_1")?._tag).toBe(decision._tag === "Reject" ? "Rejected" : "Approved")
      }
    }))
})

describe("pending given something that is not a chain", () => {
  const notChains: ReadonlyArray<unknown> = [null, undefined, {}, { pendingToolCalls: [] }, "chain", 42]
  it.each(notChains)("Approval.pending(%j) and ExternalTool.pending throw InvalidInput on chain", (value) => {
    for (const pending of [Approval.pending, ExternalTool.pending]) {
      let thrown: unknown
      try {
        pending(value as Chain.Chain)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(LoopError.InvalidInput)
      expect((thrown as LoopError.InvalidInput).field).toBe("chain")
    }
  })
})

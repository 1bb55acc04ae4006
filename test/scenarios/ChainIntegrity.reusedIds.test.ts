/**
 * Promises: a decision for one call never acts on another; "a decision
 * replayed for an old call matches nothing" (README "Security model",
 * Approvals); decode refuses a document that contradicts its transcript.
 *
 * On arrival the loop renames a call whose id an earlier call used (the
 * model's second `c2` becomes `loopwork_2_1`), so a client retrying its
 * old `{ c2: approve }` gets CallNotAwaiting. `Chain.decode` does not hold
 * a stored document to that: an unsigned document (no approval in it, so
 * no key or trust needed) whose pending call is renamed back to the id of
 * the already executed `c2` decodes, and the replayed old decision then
 * approves the new call (a transfer to mallory nobody looked at).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Approval, Chain, ChatModel, Mode } from "../../src/index.ts"
import { stored, toolkit } from "../support/paymentWorld.ts"

describe("a stored pending call reusing an executed call's id", () => {
  it.effect("refused by decode, or an old decision replayed on it matches nothing", () =>
    Effect.gen(function*() {
      const transfers: Array<unknown> = []
      const handlers = toolkit.toLayer({
        transfer: (params) => Effect.sync(() => (transfers.push(params), "sent")),
        lookup: () => Effect.succeed("found")
      })
      let turn = 0
      const model = ChatModel.scripted([() => ({
        toolCalls: [{ id: "c2", name: "transfer", params: { to: turn++ === 0 ? "bob" : "mallory", amount: 1 } }]
      })], { repeat: true })
      const run = (chain: Chain.Chain<typeof toolkit.tools>) =>
        Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 5 }).pipe(Effect.provide([model.layer, handlers]))

      const oldDecision = { c2: Approval.approve } // the human's decision on the bob transfer
      const first = yield* run(Chain.make({ user: "go", toolkit }))
      const second = yield* run(yield* Approval.decide(first.chain, oldDecision))
      expect(transfers).toEqual([{ to: "bob", amount: 1 }])
      expect(second._tag === "Pause" && second.reason._tag === "ApprovalPending" && second.reason.calls.map((c) => c.id))
        .toEqual(["loopwork_2_1"])
      // In memory the replay matches nothing:
      expect(Exit.isFailure(yield* Effect.exit(Approval.decide(second.chain, oldDecision)))).toBe(true)

      // Stored unsigned, the new call renamed back to "c2" everywhere.
      const text = JSON.stringify(yield* stored(second.chain)).replaceAll(`"loopwork_2_1"`, `"c2"`)
      const decoded = yield* Effect.exit(Chain.decode(text, { toolkit }))
      if (Exit.isFailure(decoded)) return // refused: the promise holds
      const replayed = yield* Effect.exit(Approval.decide(decoded.value, oldDecision))
      if (Exit.isFailure(replayed)) return // matches nothing: the promise holds
      yield* run(replayed.value)
      expect(transfers).toEqual([{ to: "bob", amount: 1 }]) // mallory's transfer ran on bob's approval
    }))
})

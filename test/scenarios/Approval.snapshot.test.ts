/**
 * Promise: a tool needing approval runs only with the exact arguments a
 * human decided on; an edit is checked against the schema and "a getter
 * that answers differently on a later read, or an object the client
 * changes after the call, cannot change what was checked and approved"
 * (src/internal/snapshot.ts).
 *
 * `snapshot` treats any RangeError from `structuredClone` as "nested too
 * deeply" and returns the caller's object uncopied. A decisions object
 * whose getter throws a RangeError once skips the copy; the edited params
 * object is then kept by reference, and mutating it after `decide`
 * returned changes what the handler runs with.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Approval } from "../../src/index.ts"
import { world } from "../support/paymentWorld.ts"

describe("Approval.decide keeps a copy of the edit", () => {
  it.effect("edited params changed after decide (copy skipped by a one-off RangeError) must not reach the handler", () =>
    Effect.gen(function*() {
      const w = world()
      const paused = yield* w.paused
      const params = { to: "bob", amount: 5 }
      let first = true
      const decisions = {
        get c2() {
          if (first) {
            first = false
            throw new RangeError("once")
          }
          return Approval.edit(params)
        }
      }
      const decided = yield* Approval.decide(paused, decisions)
      expect(decided.pendingToolCalls).toEqual([{ id: "c2", name: "transfer", params: { to: "bob", amount: 5 } }])

      params.to = "mallory"
      params.amount = 1_000_000

      // What was checked and decided stays; what runs is what was decided.
      expect(decided.pendingToolCalls[0].params).toEqual({ to: "bob", amount: 5 })
      yield* w.run(decided)
      expect(w.runs.filter((r) => r.tool === "transfer").map((r) => r.params)).toEqual([{ to: "bob", amount: 5 }])
    }))
})

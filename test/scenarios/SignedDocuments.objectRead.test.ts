/**
 * Promise: a signed document that was changed in any way fails to verify;
 * a document read with a key approves only what the key holder signed.
 *
 * `Chain.decode` accepts the document as an object too. The signature is
 * checked on one read of its fields (`{ signature, ...content }`), and
 * the Schema decodes it from another read. A document object whose
 * `callStates` getter answers the signed value on the first two reads and
 * `Approved` on the third verifies and decodes as approved: the transfer
 * runs with no human decision. (Its getters do not throw, so the
 * "value that cannot be read" check does not catch it.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Chain } from "../../src/index.ts"
import { key, stored, toolkit, world } from "../support/paymentWorld.ts"

describe("a signed document given as an object", () => {
  it.effect("a field that reads differently after verification: refused, or decoded as signed (never approved)", () =>
    Effect.gen(function*() {
      const w = world()
      const signed = yield* stored(yield* w.paused, { signingKey: key })
      const signedStates = signed.callStates
      expect(signedStates).toEqual({ c2: { _tag: "AwaitingApproval" } })
      let reads = 0
      Object.defineProperty(signed, "callStates", {
        enumerable: true,
        get: () => ++reads <= 2 ? signedStates : { c2: { _tag: "Approved" } }
      })
      const exit = yield* Effect.exit(Chain.decode(signed, { toolkit, signingKey: key }))
      if (Exit.isFailure(exit)) return // refused: the promise holds
      expect(exit.value.callStates.get("c2")).toEqual({ _tag: "AwaitingApproval" })
      yield* w.run(exit.value)
      expect(w.runs.filter((r) => r.tool === "transfer")).toEqual([])
    }))
})

/**
 * Promise: a signed document that was changed in any way fails to verify
 * (and `encode(decode(text))` is `text`, so stores may hash or compare
 * documents).
 *
 * The signature is 43 base64url characters for 32 bytes: the last
 * character carries 2 unused bits, and `Buffer.from(s, "base64url")`
 * ignores them. Three other last characters give the same bytes, so a
 * document with a changed `signature` verifies.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Chain } from "../../src/index.ts"
import { key, stored, toolkit, world } from "../support/paymentWorld.ts"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

describe("signature encoding", () => {
  it.effect("only the exact signature string verifies", () =>
    Effect.gen(function*() {
      const signed = yield* stored(yield* world().paused, { signingKey: key })
      const signature: string = signed.signature
      const accepted: Array<string> = []
      for (const last of alphabet) {
        const changed = { ...signed, signature: signature.slice(0, -1) + last }
        const exit = yield* Effect.exit(Chain.decode(JSON.stringify(changed), { toolkit, signingKey: key }))
        if (Exit.isSuccess(exit)) accepted.push(changed.signature)
      }
      expect(accepted).toEqual([signature])
    }))
})

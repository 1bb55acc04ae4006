/**
 * Promise (README "Security model", Bounded input): tool-call arguments
 * larger than `maxArgumentSize` (1,000,000 characters by default) never
 * reach a handler.
 *
 * The limit is applied where a model response arrives. Arguments that come
 * in through a decision (`Approval.edit`) or a stored document are only
 * held to the stored-value limits (512 levels, ~512M characters), so a
 * 2,000,000-character argument reaches the handler both ways.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Approval, Chain } from "../../src/index.ts"
import { stored, toolkit, world } from "../support/paymentWorld.ts"

const big = "x".repeat(2_000_000)
const longest = (runs: ReadonlyArray<{ params: unknown }>) => Math.max(0, ...runs.map((r) => JSON.stringify(r.params).length))

describe("maxArgumentSize on arguments that arrive on resume", () => {
  it.effect("an edit of 2,000,000 characters: refused by decide, or never reaches the handler", () =>
    Effect.gen(function*() {
      const w = world()
      const paused = yield* w.paused
      const exit = yield* Effect.exit(Approval.decide(paused, { c2: Approval.edit({ to: big, amount: 1 }) }))
      if (Exit.isFailure(exit)) return
      yield* w.run(exit.value)
      expect(longest(w.runs)).toBeLessThanOrEqual(1_000_000)
    }))

  it.effect("an unsigned stored document whose open call carries 2,000,000 characters: refused, or never reaches the handler", () =>
    Effect.gen(function*() {
      const w = world()
      const document = yield* stored(yield* w.paused)
      // c1 (lookup, no approval needed) made pending again with huge arguments, everywhere the document shows them.
      const params = { q: big }
      document.roundResults = []
      document.pendingToolCalls.unshift({ id: "c1", name: "lookup", params })
      document.messages[1].content[0].params = params
      document.lastResponse.toolCalls[0].params = params
      const exit = yield* Effect.exit(Chain.decode(JSON.stringify(document), { toolkit }))
      if (Exit.isFailure(exit)) return
      const before = w.runs.length
      yield* w.run(exit.value)
      expect(longest(w.runs.slice(before))).toBeLessThanOrEqual(1_000_000)
    }))
})

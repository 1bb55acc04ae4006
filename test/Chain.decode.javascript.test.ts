/**
 * Stored chains and answers from JavaScript (helper-72's probes): hostile
 * values as `Chain.decode`'s input, toolkit or signing key, and as
 * `Chain.encode`'s signing key, are a `ChainCodecError` (they were a
 * TypeError defect, or, for `encode`, a synchronous throw); a `Map` of
 * decisions or results is an `InvalidInput` (it decided nothing, silently).
 * None of it could grant an approval: the probes found every tampered
 * document refused or granting nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted } from "effect"
import { Approval, Chain, ChatModel, ExternalTool, Mode } from "../src/index.ts"
import { makeKit, mixedTurn } from "./support/approval.ts"

/** A Proxy revoked at once: every operation on it throws a TypeError. */
const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

/** The failure `make` comes to, as its `_tag` (a throw, a defect or a success fails the test). */
const failureOf = <A, E>(make: () => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let effect: Effect.Effect<A, E>
    try {
      effect = make()
    } catch (error) {
      return expect.unreachable(`thrown: ${String(error)}`)
    }
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) return expect.unreachable("it fails")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    return (Cause.squash(exit.cause) as { readonly _tag: string })._tag
  })

const paused = Effect.gen(function*() {
  const kit = makeKit()
  const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide([ChatModel.scripted([mixedTurn, { text: "All done." }]).layer, kit.layer])
  )
  return { kit, chain: outcome.chain, document: yield* Chain.encode(outcome.chain) }
})

describe("stored chains from JavaScript", () => {
  it.effect("Chain.decode with a hostile toolkit, input or signing key: ChainCodecError", () =>
    Effect.gen(function*() {
      const { document, kit } = yield* paused
      const toolsThrow = Object.assign(Object.create(null), { "~effect/ai/Toolkit": true })
      Object.defineProperty(toolsThrow, "tools", { get: () => { throw new Error("tools boom") } })
      const toolsRevoked = { "~effect/ai/Toolkit": true, tools: revoked() }
      expect([
        yield* failureOf(() => Chain.decode(document, { toolkit: revoked() as never })),
        yield* failureOf(() => Chain.decode(document, { toolkit: toolsThrow as never })),
        yield* failureOf(() => Chain.decode(document, { toolkit: toolsRevoked as never })),
        yield* failureOf(() => Chain.decode(revoked() as never, { toolkit: kit.toolkit })),
        yield* failureOf(() => Chain.decode(document, { toolkit: kit.toolkit, signingKey: revoked() as never }))
      ]).toEqual(["ChainCodecError", "ChainCodecError", "ChainCodecError", "ChainCodecError", "ChainCodecError"])
    }))

  it.effect("Chain.encode with a revoked Proxy as its signing key: ChainCodecError, not a throw", () =>
    Effect.gen(function*() {
      const { chain } = yield* paused
      expect(yield* failureOf(() => Chain.encode(chain, { signingKey: revoked() as never }))).toBe("ChainCodecError")
      // A real key still signs.
      const signed = yield* Chain.encode(chain, { signingKey: Redacted.make("k".repeat(32)) })
      expect(typeof signed).toBe("object")
    }))

  it.effect("a Map of decisions or of results: InvalidInput, and nothing is decided", () =>
    Effect.gen(function*() {
      const { chain } = yield* paused
      const pending = Approval.pending(chain).map((call) => call.id)
      const decisions = new Map(pending.map((id) => [id, Approval.approve]))
      expect(yield* failureOf(() => Approval.decide(chain, decisions as never))).toBe("InvalidInput")
      expect(yield* failureOf(() => ExternalTool.supply(chain, new Map([["x", { result: 1 }]]) as never))).toBe("InvalidInput")
      expect(Approval.pending(chain).map((call) => call.id)).toEqual(pending)
    }))
})

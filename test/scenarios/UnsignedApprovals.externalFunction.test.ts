/**
 * An external tool whose `needsApproval` is a function: a call it answered
 * `false` for goes straight to awaiting its result, while one it answered
 * `true` for gets there only once a human approves it. An unsigned document
 * cannot show which (an attacker could turn a call awaiting approval into one
 * awaiting its result), so it is refused with a message saying what to do,
 * and the same chain signed, or read with `trustUnsignedApprovals`, decodes,
 * and its result can be supplied.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, ExternalTool, Mode } from "../../src/index.ts"

const Pay = ExternalTool.mark(Tool.make("pay", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }: { amount: number }) => amount > 100
}))
const kit = Toolkit.make(Pay)
const model = ChatModel.scripted([(request) =>
  request.prompt.content.some((m) => m.role === "tool")
    ? { text: "done" }
    : { toolCalls: [{ id: "p1", name: "pay", params: { to: "bob", amount: 5 } }] }
], { repeat: true })
const run = (chain: Chain.Chain<typeof kit.tools>) =>
  Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))

const key = Redacted.make("a signing key of at least thirty-two bytes!!")

describe("an external tool whose needsApproval function answered false, paused awaiting its result", () => {
  it.effect("an unsigned document is refused, saying why and what to do", () =>
    Effect.gen(function*() {
      const paused = yield* run(Chain.make({ user: "pay bob 5", toolkit: kit }))
      expect(paused._tag === "Pause" && paused.reason._tag).toBe("ExternalPending")
      const document = yield* Chain.encode(paused.chain)
      expect(document.callStates).toEqual({ p1: { _tag: "AwaitingResult" } })
      const exit = yield* Effect.exit(Chain.decode(JSON.stringify(document), { toolkit: kit }))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      const message = error?._tag === "Fail" ? String((error.error as { readonly message?: unknown }).message) : ""
      expect(message).toMatch(/awaiting its result whose tool's needsApproval may have asked a human first, namely call "p1" but is not signed/)
      expect(message).toMatch(/trustUnsignedApprovals: true/)
    }))

  for (const [name, encodeKey, decodeOptions] of [
    ["signed and read with its key", key, { toolkit: kit, signingKey: key }],
    ["unsigned and read with trustUnsignedApprovals", undefined, { toolkit: kit, trustUnsignedApprovals: true }]
  ] as const) {
    it.effect(`${name}: it decodes, and its result can be supplied`, () =>
      Effect.gen(function*() {
        const paused = yield* run(Chain.make({ user: "pay bob 5", toolkit: kit }))
        const document = yield* Chain.encode(paused.chain, encodeKey === undefined ? undefined : { signingKey: encodeKey })
        const decoded = yield* Chain.decode(JSON.stringify(document), decodeOptions)
        const supplied = yield* ExternalTool.supply(decoded, { p1: { result: "paid" } })
        const done = yield* run(supplied)
        expect(done._tag).toBe("Ok")
      }))
  }
})

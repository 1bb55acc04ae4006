/**
 * A mode from JavaScript that breaks its contract (helper-38's probes) —
 * throws, returns no Effect, or succeeds with something that is not an
 * Outcome — ends the run with a `RunError` whose reason is
 * `InvalidInput` on `mode`, carrying the chain, never a defect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { Chain, ChatModel, type Mode } from "../src/index.ts"

describe("a mode that breaks its contract", () => {
  it.effect.each([
    { name: "throws", mode: () => { throw new Error("no mode today, api_key=sk-proj-AAAABBBBCCCCDDDDEEEE1234") }, did: "threw: no mode today, api_key=[REDACTED]" },
    { name: "returns 42", mode: () => 42, did: "returned no Effect" },
    { name: "succeeds with null", mode: () => Effect.succeed(null), did: "succeeded with something that is not an Outcome" },
    { name: "succeeds with a look-alike", mode: () => Effect.succeed({ _tag: "Ok", reason: "done" }), did: "succeeded with something that is not an Outcome" }
  ])("$name: RunError with InvalidInput on mode, the chain kept", ({ did, mode }) =>
    Effect.gen(function*() {
      const chain = Chain.make({ user: "Hi" })
      const model = ChatModel.scripted([{ text: "hello" }])
      const exit = yield* Effect.exit(Chain.run(chain, { mode: mode as unknown as Mode.Mode }).pipe(Effect.provide(model.layer)))
      if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error._tag).toBe("RunError")
      expect(error.reason).toMatchObject({ _tag: "InvalidInput", field: "mode" })
      expect(error.message).toContain(`(it ${did})`)
      expect(error.chain.messages).toEqual(chain.messages)
      expect(model.calls).toBe(0)
    }))
})

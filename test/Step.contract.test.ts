/**
 * A `Step.make` function from JavaScript that breaks the step contract — throws, returns no
 * Effect, or succeeds with something that is not an Outcome — ends the loop with `Error` and an
 * `InvalidInput` on `Step.make argument` saying what it did, the chain kept; the steps after it
 * pass that outcome on (no later step reads a broken value), and nothing dies. A pause is an
 * Outcome only with one of the pause reasons (`Outcome.PauseReason`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { Chain, ChatModel, type Mode, Outcome, Step } from "../src/index.ts"

type Broken = (chain: Chain.Chain) => Effect.Effect<Outcome.Outcome>

const rows: ReadonlyArray<{ readonly name: string; readonly f: unknown; readonly did: string }> = [
  { name: "throws", f: () => { throw new Error("no step, api_key=sk-proj-AAAABBBBCCCCDDDDEEEE1234") }, did: "threw: no step, api_key=[REDACTED]" },
  { name: "returns null", f: () => null, did: "returned no Effect" },
  { name: "returns a Promise", f: () => Promise.resolve(null), did: "returned no Effect" },
  { name: "succeeds with null", f: () => Effect.succeed(null), did: "succeeded with something that is not an Outcome" },
  { name: "succeeds later with a look-alike", f: () => Effect.as(Effect.yieldNow, { _tag: "Continue" }), did: "succeeded with something that is not an Outcome" },
  {
    name: "pauses with a null reason",
    f: (c: Chain.Chain) => Effect.succeed(new Outcome.Pause(c, null as never)),
    did: "paused with a reason that is not an Outcome.PauseReason"
  },
  {
    name: "pauses later with an invented reason",
    f: (c: Chain.Chain) => Effect.as(Effect.yieldNow, new Outcome.Pause(c, { _tag: "Approved" } as never)),
    did: "paused with a reason that is not an Outcome.PauseReason"
  },
  {
    name: "pauses for approval of calls that are not calls",
    f: (c: Chain.Chain) => Effect.succeed(new Outcome.Pause(c, { _tag: "ApprovalPending", calls: [null] } as never)),
    did: "paused with a reason that is not an Outcome.PauseReason"
  }
]

describe("a Step.make function that breaks the contract", () => {
  it.effect.each(rows)("$name: Error with InvalidInput, later steps skipped, the chain kept", ({ did, f }) =>
    Effect.gen(function*() {
      const chain = Chain.make({ user: "Hi" })
      const model = ChatModel.scripted([{ text: "hello" }])
      const exit = yield* Effect.exit(
        Step.start(chain).pipe(Step.make(f as Broken), Step.callLlm, Step.checkMaxRuns({ maxRuns: 3 })).pipe(
          Effect.provide(model.layer)
        )
      )
      if (Exit.isFailure(exit)) throw new Error(`the pipeline failed: ${Cause.pretty(exit.cause)}`)
      const outcome = exit.value
      if (!(outcome instanceof Outcome.Error)) throw new Error(`not an Error outcome: ${String(outcome._tag)}`)
      expect(outcome.error).toMatchObject({ _tag: "InvalidInput", field: "Step.make argument" })
      expect(outcome.error.message).toContain(`(it ${did})`)
      expect(outcome.chain).toBe(chain)
      expect(model.calls).toBe(0)
    }))

  it.effect.each(rows)("$name, inside a custom mode: RunError with InvalidInput, never a defect", ({ did, f }) =>
    Effect.gen(function*() {
      const chain = Chain.make({ user: "Hi" })
      const model = ChatModel.scripted([{ text: "hello" }])
      const mode: Mode.Mode<ChatModel.ChatModel> = (c) => Step.start(c).pipe(Step.callLlm, Step.make(f as Broken))
      const exit = yield* Effect.exit(Chain.run(chain, { mode }).pipe(Effect.provide(model.layer)))
      if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error.reason).toMatchObject({ _tag: "InvalidInput", field: "Step.make argument" })
      expect(error.message).toContain(`(it ${did})`)
      // the model's answer is kept
      expect(error.chain.messages.map((message) => message.role)).toEqual(["user", "assistant"])
    }))
})

/**
 * The checks after a round (src/internal/steps/maxRuns.ts, pauses.ts, toolChecks.ts, returns.ts):
 * `checkMaxRuns`, `checkPause`, `checkUntilTool`, `checkReturnBehavior`, `checkToolSuccess`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Outcome, Step } from "../../src/index.ts"
import {
  handlers, baseChain, call, withPending, assistantText, run, runTools, expectContinue, expectOk, expectError,
  lastMessage, toolResultParts
} from "../support/steps.ts"

// -----------------------------------------------------------------------------
// checkMaxRuns
// -----------------------------------------------------------------------------

describe("checkMaxRuns", () => {
  const needsResponse = (runCount: number) => baseChain().copy({ runCount })
  const answered = (runCount: number) =>
    baseChain().copy({ runCount, messages: [...baseChain().messages, assistantText("Done.")] })

  it.effect.each([
    ["default, 25/25", undefined, 25, "Exceeded maximum number of runs (25/25)"],
    ["maxRuns 50, 50/50", 50, 50, "Exceeded maximum number of runs (50/50)"],
    ["maxRuns 1, 1/1", 1, 1, "Exceeded maximum number of runs (1/1)"]
  ] as const)("%s while a response is needed -> MaxRunsExceeded", ([, maxRuns, runCount, message]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      const error = expectError(yield* run(chain, step))
      expect(error.error._tag).toBe("MaxRunsExceeded")
      expect(error.error).toBeInstanceOf(LoopError.MaxRunsExceeded)
      expect(error.error.message).toBe(message)
      expect(error.chain).toBe(chain)
    }))

  it.effect("at the max with tool calls pending -> Continue: the pending calls run first", () =>
    Effect.gen(function*() {
      const chain = withPending([call("a", "search", { query: "q" })]).copy({ runCount: 25 })
      expect(chain.needsResponse).toBe(true)
      expect(expectContinue(yield* run(chain, Step.checkMaxRuns()))).toBe(chain)
    }))

  it.effect("... and once they have run, the next model call is refused", () =>
    Effect.gen(function*() {
      const chain = withPending([call("a", "search", { query: "q" })]).copy({ runCount: 25 })
      const outcome = yield* run(chain, Step.executeTools).pipe(Step.checkMaxRuns(), Effect.provide(handlers()))
      const error = expectError(outcome)
      expect(error.error.message).toBe("Exceeded maximum number of runs (25/25)")
      // every tool call has its result in the failed chain
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(toolResultParts(lastMessage(error.chain)).map((p) => p.id)).toEqual(["a"])
    }))

  it.effect.each([
    ["runCount 30, since 5: 25 runs used", 30, 5, true],
    ["runCount 30, since 6: 24 runs used", 30, 6, false],
    ["runCount 25, since 0 (the default)", 25, 0, true]
  ] as const)("since counts the budget from a start point (%s)", ([, runCount, since, exceeded]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const outcome = yield* run(chain, Step.checkMaxRuns({ since }))
      if (exceeded) {
        const error = expectError(outcome)
        expect(error.error.message).toBe("Exceeded maximum number of runs (25/25)")
        expect(error.error).toMatchObject({ runs: 25, maxRuns: 25 })
      } else {
        expect(expectContinue(outcome)).toBe(chain)
      }
    }))

  it.effect("since with a custom maxRuns: runCount 53, since 3, maxRuns 50 -> (50/50)", () =>
    Effect.gen(function*() {
      const error = expectError(yield* run(needsResponse(53), Step.checkMaxRuns({ maxRuns: 50, since: 3 })))
      expect(error.error.message).toBe("Exceeded maximum number of runs (50/50)")
    }))

  it.effect.each([
    ["below the default max (24/25)", undefined, 24],
    ["below a custom max (49/50)", 50, 49],
    ["at 0 runs", undefined, 0]
  ] as const)("%s -> Continue with the same chain", ([, maxRuns, runCount]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      expect(expectContinue(yield* run(chain, step))).toBe(chain)
    }))

  it.effect.each([
    ["default 25/25", undefined, 25],
    ["maxRuns 50, 50/50", 50, 50]
  ] as const)("at the max (%s) but the model has answered -> Continue", ([, maxRuns, runCount]) =>
    Effect.gen(function*() {
      const chain = answered(runCount)
      expect(chain.needsResponse).toBe(false)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      expect(expectContinue(yield* run(chain, step))).toBe(chain)
    }))
})

// -----------------------------------------------------------------------------
// checkPause
// -----------------------------------------------------------------------------

describe("checkPause", () => {
  it.effect("true -> Pause with StopRequested and the same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      const outcome = yield* run(chain, Step.checkPause(() => true))
      expect(outcome._tag).toBe("Pause")
      if (outcome._tag !== "Pause") return
      expect(outcome.reason).toEqual({ _tag: "StopRequested" })
      expect(outcome.chain).toBe(chain)
    }))

  it.effect("false -> Continue with the same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkPause(() => false)))).toBe(chain)
    }))

  it.effect("the predicate sees the chain", () =>
    Effect.gen(function*() {
      const seen: Array<Chain.Chain> = []
      const pauseAfterTwo = Step.checkPause((c) => (seen.push(c), c.runCount >= 2))
      const low = baseChain().copy({ runCount: 1 })
      const high = baseChain().copy({ runCount: 2 })
      expect((yield* run(low, pauseAfterTwo))._tag).toBe("Continue")
      expect((yield* run(high, pauseAfterTwo))._tag).toBe("Pause")
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(low)
      expect(seen[1]).toBe(high)
    }))

  it.effect.each([true, false])("an Effect predicate returning %s", (answer) =>
    Effect.gen(function*() {
      const chain = baseChain()
      let evaluated = 0
      const step = Step.checkPause(() => Effect.sync(() => (evaluated++, answer)))
      const outcome = yield* run(chain, step)
      expect(outcome._tag).toBe(answer ? "Pause" : "Continue")
      expect(outcome.chain).toBe(chain)
      expect(evaluated).toBe(1)
    }))

  it.effect("an Effect predicate can use the Effect context (TestClock time)", () =>
    Effect.gen(function*() {
      const step = Step.checkPause(() => Effect.map(Clock.currentTimeMillis, (now) => now >= 1000))
      expect((yield* run(baseChain(), step))._tag).toBe("Continue")
      yield* TestClock.adjust("1 second")
      expect((yield* run(baseChain(), step))._tag).toBe("Pause")
    }))

  it.effect("a custom reason", () =>
    Effect.gen(function*() {
      const reason: Outcome.PauseReason = { _tag: "Requested", message: "drain for deploy" }
      const outcome = yield* run(baseChain(), Step.checkPause(() => true, reason))
      expect(outcome._tag).toBe("Pause")
      if (outcome._tag !== "Pause") return
      expect(outcome.reason).toEqual({ _tag: "Requested", message: "drain for deploy" })
    }))
})

// -----------------------------------------------------------------------------
// checkUntilTool
// -----------------------------------------------------------------------------

describe("checkUntilTool", () => {
  it.effect("a successful call to a watched tool in the round that just ran -> Ok tool-used with its result", () =>
    Effect.gen(function*() {
      const calls = [call("s1", "search", { query: "q" }), call("sub", "submit", { answer: "42" })]
      const outcome = yield* runTools(calls, { step: (self) => Step.checkUntilTool(["x", "submit"])(Step.executeTools(self)) })
      const ok = expectOk(outcome)
      expect(ok.reason).toBe("tool-used")
      expect(ok.extra).toBe(ok.chain.lastToolResults[1])
      expect(ok.extra).toEqual({ id: "sub", name: "submit", isFailure: false, result: "submitted 42", encoded: "submitted 42" })
    }))

  it.effect("accepts a single name as a string", () =>
    Effect.gen(function*() {
      const outcome = yield* runTools([call("sub", "submit", { answer: "1" })], {
        step: (self) => Step.checkUntilTool("submit")(Step.executeTools(self))
      })
      expect(expectOk(outcome).reason).toBe("tool-used")
    }))

  it.effect("with two successful watched calls, the first in call order wins", () =>
    Effect.gen(function*() {
      const calls = [call("first", "submit", { answer: "1" }), call("second", "submit", { answer: "2" })]
      const ok = expectOk(yield* runTools(calls, { step: (self) => Step.checkUntilTool(["submit"])(Step.executeTools(self)) }))
      expect(ok.extra).toMatchObject({ id: "first", result: "submitted 1" })
    }))

  it.effect("only other tools ran -> Continue with the same chain", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s1", "search", { query: "q" })]))
      expect(expectContinue(yield* run(ran, Step.checkUntilTool(["submit"])))).toBe(ran)
    }))

  it.effect("a failed call to a watched tool -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("bad", "submit", { answer: 42 })]))
      expect(ran.lastToolResults[0].isFailure).toBe(true)
      expect(expectContinue(yield* run(ran, Step.checkUntilTool(["submit"])))).toBe(ran)
    }))

  it.effect("a failed watched call followed by a successful one -> Ok with the successful one", () =>
    Effect.gen(function*() {
      const calls = [call("bad", "search", { query: "fail" }), call("good", "search", { query: "ok" })]
      const ran = expectContinue(yield* runTools(calls))
      const ok = expectOk(yield* run(ran, Step.checkUntilTool(["search"])))
      expect(ok.extra).toBe(ran.lastToolResults[1])
    }))

  it.effect("results of an earlier round (the model has spoken since) do not count", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("sub", "submit", { answer: "1" })]))
      const model = ChatModel.scripted([{ text: "I submitted it." }])
      const after = expectContinue(yield* run(ran, Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(after.lastToolResults).toHaveLength(1)
      expect(expectContinue(yield* run(after, Step.checkUntilTool(["submit"])))).toBe(after)
    }))

  it.effect("no round ran -> Continue", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkUntilTool(["submit"])))).toBe(chain)
    }))
})

// -----------------------------------------------------------------------------
// checkReturnBehavior and checkToolSuccess
// -----------------------------------------------------------------------------

describe("checkReturnBehavior", () => {
  it.effect("a clean round of IMMEDIATE tools -> Ok return-behavior with the round's results", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {})]))
      const ok = expectOk(yield* run(ran, Step.checkReturnBehavior))
      expect(ok.reason).toBe("return-behavior")
      expect(ok.chain).toBe(ran)
      expect(ok.extra).toBe(ran.lastToolResults)
    }))

  it.effect("a TO_LLM tool in the round -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {}), call("s", "search", { query: "q" })]))
      expect(expectContinue(yield* run(ran, Step.checkReturnBehavior))).toBe(ran)
    }))

  it.effect("an unknown tool counts as TO_LLM and as a failure -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {}), call("n", "nope", {})]))
      expect(expectContinue(yield* run(ran, Step.checkReturnBehavior))).toBe(ran)
    }))

  it.effect("stale results (the model has spoken since) -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {})]))
      const after = ran.copy({ messages: [...ran.messages, assistantText("ok")] })
      expect(expectContinue(yield* run(after, Step.checkReturnBehavior))).toBe(after)
    }))
})

describe("checkToolSuccess", () => {
  it.effect("a clean round -> Ok tools-succeeded", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s", "search", { query: "q" })]))
      const ok = expectOk(yield* run(ran, Step.checkToolSuccess))
      expect(ok.reason).toBe("tools-succeeded")
      expect(ok.chain).toBe(ran)
    }))

  it.effect("a round with a failure -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s", "search", { query: "q" }), call("f", "search", { query: "fail" })]))
      expect(expectContinue(yield* run(ran, Step.checkToolSuccess))).toBe(ran)
    }))

  it.effect("no round, the model has answered -> Ok done", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ messages: [...baseChain().messages, assistantText("Done.")] })
      expect(expectOk(yield* run(chain, Step.checkToolSuccess)).reason).toBe("done")
    }))

  it.effect("no round, a response is needed -> Continue", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkToolSuccess))).toBe(chain)
    }))
})

// -----------------------------------------------------------------------------
// continueOrDone and make
// -----------------------------------------------------------------------------

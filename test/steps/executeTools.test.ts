/**
 * `Step.executeTools` (src/internal/steps/executeTools.ts): the pending calls run, one tool
 * message with their results in call order, failures as results, failureCount and maxFailures.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Chain, LoopError, Step } from "../../src/index.ts"
import {
  makeProbe, handlers, baseChain, call, withPending, run, runTools, expectContinue, expectError, lastMessage,
  toolResultParts
} from "../support/steps.ts"

// -----------------------------------------------------------------------------
// Step.executeTools
// -----------------------------------------------------------------------------

describe("executeTools", () => {
  it.effect("no pending calls: Continue with the very same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 2 })
      const probe = makeProbe()
      const outcome = yield* run(chain, Step.executeTools).pipe(Effect.provide(handlers(probe)))
      expect(expectContinue(outcome)).toBe(chain)
      expect(probe.started).toEqual([])
    }))

  it.effect("runs the calls, appends one tool message and clears the pending calls", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "search", { query: "effect" }), call("b", "submit", { answer: "42" })]
      const before = withPending(calls)
      const next = expectContinue(yield* run(before, Step.executeTools).pipe(Effect.provide(handlers(probe))))
      expect(probe.started).toEqual(["search:effect", "submit:42"])
      expect(next.pendingToolCalls).toEqual([])
      expect(next.messages).toHaveLength(before.messages.length + 1)
      expect(next.lastToolResults).toEqual([
        { id: "a", name: "search", isFailure: false, result: "results for effect", encoded: "results for effect" },
        { id: "b", name: "submit", isFailure: false, result: "submitted 42", encoded: "submitted 42" }
      ])
      const parts = toolResultParts(lastMessage(next))
      expect(lastMessage(next).role).toBe("tool")
      expect(parts).toHaveLength(2)
      expect(parts.map((p) => [p.id, p.name, p.isFailure, p.result])).toEqual([
        ["a", "search", false, "results for effect"],
        ["b", "submit", false, "submitted 42"]
      ])
      expect(next.failureCount).toBe(0)
      expect(next.runCount).toBe(before.runCount)
      expect(next.needsResponse).toBe(true)
    }))

  it.effect("the tool message has one result part per call with matching ids, failures included", () =>
    Effect.gen(function*() {
      const calls = [
        call("x1", "search", { query: "ok" }),
        call("x2", "nope", {}),
        call("x3", "search", { query: "fail" }),
        call("x4", "submit", { answer: 7 })
      ]
      const next = expectContinue(yield* runTools(calls))
      const parts = toolResultParts(lastMessage(next))
      expect(parts.map((p) => p.id)).toEqual(["x1", "x2", "x3", "x4"])
      expect(parts.map((p) => p.name)).toEqual(["search", "nope", "search", "submit"])
      expect(parts.map((p) => p.isFailure)).toEqual([false, true, true, true])
      expect(parts.map((p) => p.result)).toEqual(next.lastToolResults.map((r) => r.encoded))
      expect(next.lastToolResults.map((r) => r.failureOrigin)).toEqual([undefined, "unknown-tool", "handler", "parameters"])
    }))

  it.effect("the model is shown the result encoded through the tool's success schema", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("n1", "count", { text: "abc" })]))
      expect(next.lastToolResults[0]).toMatchObject({ id: "n1", isFailure: false, result: 3, encoded: "3" })
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "n1", name: "count", result: "3" })
    }))

  it.effect("results come back in call order even when the first call finishes last", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [
        call("slow", "wait", { label: "slow", ms: 100 }),
        call("fast", "wait", { label: "fast", ms: 10 })
      ]
      const fiber = yield* runTools(calls, { probe }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 second")
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(probe.finished).toEqual(["fast@10", "slow@100"])
      expect(next.lastToolResults.map((r) => [r.id, r.result])).toEqual([["slow", "slow"], ["fast", "fast"]])
      expect(toolResultParts(lastMessage(next)).map((p) => p.id)).toEqual(["slow", "fast"])
    }))

  it.effect("by default the calls of a round run concurrently (two 50 ms tools take 50 ms)", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "wait", { label: "a", ms: 50 }), call("b", "wait", { label: "b", ms: 50 })]
      const fiber = yield* runTools(calls, { probe }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 millis")
      // both started at once
      expect(probe.started).toEqual(["wait:a", "wait:b"])
      yield* TestClock.adjust("49 millis")
      expect(probe.finished).toEqual(["a@50", "b@50"])
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(next.lastToolResults.map((r) => r.id)).toEqual(["a", "b"])
    }))

  it.effect("executeToolsWith({ concurrency: 1 }) runs them one after another (100 ms)", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "wait", { label: "a", ms: 50 }), call("b", "wait", { label: "b", ms: 50 })]
      const fiber = yield* runTools(calls, { probe, step: Step.executeToolsWith({ concurrency: 1 }) }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("49 millis")
      // b waits for a
      expect(probe.started).toEqual(["wait:a"])
      expect(probe.finished).toEqual([])
      yield* TestClock.adjust("1 millis")
      expect(probe.finished).toEqual(["a@50"])
      expect(probe.started).toEqual(["wait:a", "wait:b"])
      yield* TestClock.adjust("49 millis")
      expect(probe.finished).toEqual(["a@50"])
      yield* TestClock.adjust("1 millis")
      expect(probe.finished).toEqual(["a@50", "b@100"])
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(next.lastToolResults.map((r) => r.id)).toEqual(["a", "b"])
    }))

  it.effect("executeToolsWith({ concurrency: 2 }) with 3 calls: the third starts when a slot frees", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [
        call("a", "wait", { label: "a", ms: 50 }),
        call("b", "wait", { label: "b", ms: 50 }),
        call("c", "wait", { label: "c", ms: 50 })
      ]
      const fiber = yield* runTools(calls, { probe, step: Step.executeToolsWith({ concurrency: 2 }) }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      expect(probe.finished).toEqual(["a@50", "b@50", "c@100"])
      expectContinue(yield* Fiber.join(fiber))
    }))

  it.effect("an unknown tool becomes a failed result naming it and listing the available tools", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("u1", "nope", { q: 1 })]))
      const [result] = next.lastToolResults
      expect(result.id).toBe("u1")
      expect(result.name).toBe("nope")
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("unknown-tool")
      expect(result.encoded).toBe("Tool 'nope' not found. Available tools: search, submit, wait, finish, crash, reject, count")
      expect(next.failureCount).toBe(1)
    }))

  it.effect("an unknown tool in a chain without a toolkit says there are none", () =>
    Effect.gen(function*() {
      const chain = withPending([call("u1", "nope", {})], Chain.make({ user: "Hi" }))
      const next = expectContinue(yield* run(chain, Step.executeTools))
      expect(next.lastToolResults[0].encoded).toBe("Tool 'nope' not found. Available tools: (none)")
    }))

  it.effect.each([
    ["a wrong type", { query: 42 }],
    ["a missing field", {}]
  ] as const)("invalid arguments (%s) become a failed result naming the tool and the field", ([, params]) =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const next = expectContinue(yield* runTools([call("p1", "search", params)], { probe }))
      const [result] = next.lastToolResults
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("parameters")
      expect(typeof result.encoded).toBe("string")
      const message = String(result.encoded)
      expect(message).toContain("Invalid arguments for tool 'search'")
      expect(message).toContain("query")
      // the handler never ran
      expect(probe.started).toEqual([])
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "p1", isFailure: true, result: message })
    }))

  it.effect("a failing handler becomes a failed result with origin handler and its failure", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const next = expectContinue(yield* runTools([call("h1", "search", { query: "fail" })], { probe }))
      const [result] = next.lastToolResults
      expect(probe.started).toEqual(["search:fail"])
      expect(result).toMatchObject({ id: "h1", name: "search", isFailure: true, failureOrigin: "handler" })
      // typed failure, encoded through the failure schema (a string here)
      expect(result.result).toBe("search broke")
      expect(result.encoded).toBe("search broke")
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "h1", isFailure: true, result: result.encoded })
      expect(next.failureCount).toBe(1)
    }))

  // Regression (fixed in eb4195a): Cause.findError's Result was read the wrong
  // way round, so typed failures became strings and defects lost their message.
  it.effect("a typed handler failure is kept typed and encoded through the tool's failure schema", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("r1", "reject", {})]))
      const [result] = next.lastToolResults
      expect(result).toMatchObject({ id: "r1", name: "reject", isFailure: true, failureOrigin: "handler" })
      expect(result.result).toEqual({ code: 7, reason: "not allowed" })
      expect(result.encoded).toEqual({ code: 7, reason: "not allowed" })
      expect(toolResultParts(lastMessage(next))[0].result).toEqual({ code: 7, reason: "not allowed" })
    }))

  it.effect("a handler defect becomes a failed result (origin handler) showing the defect's message", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("d1", "crash", {})]))
      const [result] = next.lastToolResults
      expect(result).toMatchObject({ id: "d1", name: "crash", isFailure: true, failureOrigin: "handler" })
      expect(result.encoded).toBe("Tool 'crash' failed unexpectedly: kaboom")
      expect(toolResultParts(lastMessage(next))[0].result).toBe("Tool 'crash' failed unexpectedly: kaboom")
      expect(next.failureCount).toBe(1)
    }))

  it.effect("failureCount goes up by one per failed round and back to 0 after a clean round", () =>
    Effect.gen(function*() {
      const failing = [call("f", "search", { query: "fail" }), call("ok", "search", { query: "fine" })]
      const round1 = expectContinue(yield* runTools(failing))
      expect(round1.failureCount).toBe(1)
      const round2 = expectContinue(yield* runTools(failing, { chain: round1 }))
      expect(round2.failureCount).toBe(2)
      const clean = expectContinue(yield* runTools([call("c", "search", { query: "fine" })], { chain: round2 }))
      expect(clean.failureCount).toBe(0)
      const again = expectContinue(yield* runTools(failing, { chain: clean }))
      expect(again.failureCount).toBe(1)
    }))

  it.effect("reaching the default maxFailures (3) ends with MaxFailuresExceeded", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 2 })
      const error = expectError(yield* runTools([call("f", "search", { query: "fail" })], { chain }))
      expect(error.error._tag).toBe("MaxFailuresExceeded")
      expect(error.error).toBeInstanceOf(LoopError.MaxFailuresExceeded)
      expect(error.error.message).toBe("exceeded max failure count (3)")
      expect(error.error).toMatchObject({ failures: 3, maxFailures: 3 })
      // the failing round is kept on the chain
      expect(error.chain.failureCount).toBe(3)
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(lastMessage(error.chain).role).toBe("tool")
      expect(error.chain.lastToolResults.map((r) => r.id)).toEqual(["f"])
    }))

  it.effect("two failed rounds stay below the default maxFailures", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 1 })
      const next = expectContinue(yield* runTools([call("f", "search", { query: "fail" })], { chain }))
      expect(next.failureCount).toBe(2)
    }))

  it.effect("three consecutive real failed rounds end the loop on the third", () =>
    Effect.gen(function*() {
      const failing = [call("f", "nope", {})]
      const r1 = expectContinue(yield* runTools(failing))
      const r2 = expectContinue(yield* runTools(failing, { chain: r1 }))
      const r3 = expectError(yield* runTools(failing, { chain: r2 }))
      expect(r3.error.message).toBe("exceeded max failure count (3)")
    }))

  it.effect("executeToolsWith({ maxFailures: 1 }) ends on the first failed round", () =>
    Effect.gen(function*() {
      const step = Step.executeToolsWith({ maxFailures: 1 })
      const error = expectError(yield* runTools([call("f", "search", { query: "fail" })], { step }))
      expect(error.error._tag).toBe("MaxFailuresExceeded")
      expect(error.error.message).toBe("exceeded max failure count (1)")
      expect(error.chain.failureCount).toBe(1)
      // a clean round with maxFailures 1 continues
      const clean = expectContinue(yield* runTools([call("ok", "search", { query: "fine" })], { step }))
      expect(clean.failureCount).toBe(0)
    }))
})

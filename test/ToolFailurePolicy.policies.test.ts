/**
 * `onToolFailure` policy by policy: feed-back and its format, fail (the run's error and chain),
 * and repair functions (new arguments, a result in place of the call, failures of the repair itself).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Approval, Chain, ChatModel, LoopError, Mode, ToolFailurePolicy } from "../src/index.ts"
import {
  AVAILABLE, makeHandlers, userChain, roles, toolResultsOf, seenByModel, callsInTranscript, asOk,
  asToolCallFailed, policyMessage, PARAMS_MESSAGE, scenarios
} from "./support/toolFailure.ts"

// -----------------------------------------------------------------------------
// Policies: details
// -----------------------------------------------------------------------------

describe("onToolFailure: feed-back and format", () => {
  it.effect("format: the model sees the formatter's text; the failure carries kind, call, message and error", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        {
          toolCalls: [
            { name: "weather", params: { city: "Atlantis" } },
            { name: "teleport", params: {} },
            { name: "weather", params: { city: 42 } },
            { name: "weather", params: { city: "Lisbon" } }
          ]
        },
        { text: "Some failed." }
      ])
      const handlers = makeHandlers()
      const seen: Array<ToolFailurePolicy.ToolFailure> = []
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: {
            format: (failure) => {
              seen.push(failure)
              return `[${failure.kind}] ${failure.call.name}: ${failure.message}`
            }
          }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result: "[handler] weather: Tool 'weather' failed: no such city: Atlantis"
        },
        {
          id: "call_1_2",
          name: "teleport",
          isFailure: true,
          result: `[unknown-tool] teleport: Tool 'teleport' not found. Available tools: ${AVAILABLE}`
        },
        { id: "call_1_3", name: "weather", isFailure: true, result: `[parameters] weather: ${PARAMS_MESSAGE}` },
        { id: "call_1_4", name: "weather", isFailure: false, result: { celsius: 21 } }
      ])
      const byId = new Map(seen.map((failure) => [failure.call.id, failure]))
      expect(seen).toHaveLength(3)
      const handler = byId.get("call_1_1")!
      expect(handler.kind).toBe("handler")
      expect(handler.call).toEqual({ id: "call_1_1", name: "weather", params: { city: "Atlantis" } })
      expect(handler.error).toBe("no such city: Atlantis")
      const unknown = byId.get("call_1_2")!
      expect(unknown.kind).toBe("unknown-tool")
      expect("error" in unknown).toBe(false)
      const parameters = byId.get("call_1_3")!
      expect(parameters.kind).toBe("parameters")
      expect(parameters.error).toBeInstanceOf(globalThis.Error)
      expect(String((parameters.error as Error).message)).toContain("Expected string")
      // the failures keep their origin in the chain
      expect(outcome.chain.lastToolResults.map((result) => result.failureOrigin)).toEqual([
        "handler",
        "unknown-tool",
        "parameters",
        undefined
      ])
      expect(outcome.chain.failureCount).toBe(1)
    }))

  it.effect("format applies to a rejection too, which stays a non-error result", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { amount: 5000 } }] },
        { text: "OK, not sending." }
      ])
      const handlers = makeHandlers()
      const options = {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { format: (failure: ToolFailurePolicy.ToolFailure) => `${failure.kind}: ${failure.message}` }
      }
      const outcome = asOk(
        yield* Effect.gen(function*() {
          const paused = yield* Chain.run(userChain(), options)
          const decided = yield* Effect.orDie(Approval.decide(paused.chain, { call_1_1: Approval.reject() }))
          return yield* Chain.run(decided, options)
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "transfer",
          isFailure: false,
          result: "rejected: Tool call 'transfer' was rejected by a human reviewer."
        }
      ])
      expect(outcome.chain.lastToolResults[0].rejected).toBe(true)
      expect(handlers.log.transfer).toEqual([])
    }))

  it.effect("a handler that dies is a 'handler' failure naming the defect", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Chernobyl" } }] },
        { text: "The sensor broke." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result: "Tool 'weather' failed unexpectedly: sensor exploded"
        }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("handler")
    }))

  it.effect("a dying handler with policy 'fail' ends the run with ToolCallFailed (handler)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "weather", params: { city: "Chernobyl" } }] }])
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } })
        .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      const reason = asToolCallFailed(error.reason)
      expect(reason.kind).toBe("handler")
      expect(reason.detail).toBe("Tool 'weather' failed unexpectedly: sensor exploded")
      expect(model.calls).toBe(1)
    }))
})

describe("onToolFailure: fail", () => {
  it.effect("the round completes first: every call has its result in RunError.chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        {
          toolCalls: [
            { name: "weather", params: { city: "Lisbon" } },
            { name: "weather", params: { city: "Atlantis" } },
            { name: "weather", params: { city: "Oslo" } }
          ]
        },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const start = userChain()
      const error = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason).toBeInstanceOf(LoopError.ToolCallFailed)
      expect(error.message).toBe(
        policyMessage("weather", "call_1_2", "handler", "Tool 'weather' failed: no such city: Atlantis")
      )
      expect(model.calls).toBe(1)
      expect(handlers.log.weather).toEqual(["Lisbon", "Atlantis", "Oslo"])
      expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([
        { id: "call_1_1", name: "weather", isFailure: false, result: { celsius: 21 } },
        { id: "call_1_2", name: "weather", isFailure: true, result: "no such city: Atlantis" },
        { id: "call_1_3", name: "weather", isFailure: false, result: { celsius: 4 } }
      ])
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(error.chain.runCount).toBe(1)
      expect(error.chain.failureCount).toBe(1)
      // the chain needs a response: running it again lets the model answer
      expect(error.chain.needsResponse).toBe(true)
    }))

  it.effect("several 'fail' failures in one round: the first in call order is reported, not the first to finish", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "nap", params: { ms: 5000 } }, { name: "teleport" }, { name: "weather", params: { city: 1 } }] }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { timeout: "fail", "unknown-tool": "fail", parameters: "fail" }
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip, Effect.forkChild)
      // teleport and the bad arguments fail at once; nap times out at 2s
      yield* TestClock.adjust("1999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      const reason = asToolCallFailed(error.reason)
      expect([reason.kind, reason.callId, reason.tool, reason.detail]).toEqual([
        "timeout",
        "call_1_1",
        "nap",
        "Tool 'nap' timed out after 2s"
      ])
      expect(toolResultsOf(error.chain.messages.at(-1)).map((seen) => [seen.id, seen.isFailure])).toEqual([
        ["call_1_1", true],
        ["call_1_2", true],
        ["call_1_3", true]
      ])
      expect(handlers.log.interrupted).toEqual(["nap:5000"])
    }))

  it.effect("a 'fail' kind does not affect other kinds: a fed-back failure in the same round does not end the run", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] },
        { text: "Atlantis does not exist." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { "unknown-tool": "fail", parameters: "fail", timeout: "fail" }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(seenByModel(model, 1)).toEqual([scenarios.handler.shown])
    }))
})

describe("onToolFailure: repair functions", () => {
  it.effect("a retried call that fails again is fed back (its new failure), with the retried arguments", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Still wrong." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { parameters: () => Effect.succeed(ToolFailurePolicy.retryWith({ town: "Lisbon" })) }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      const seen = seenByModel(model, 1)
      expect(seen).toHaveLength(1)
      expect(seen[0].isFailure).toBe(true)
      expect(String(seen[0].result)).toContain("Invalid arguments for tool 'weather'")
      expect(String(seen[0].result)).toContain("city")
      expect(callsInTranscript(outcome.chain)).toEqual([
        { id: "call_1_1", name: "weather", params: { town: "Lisbon" } }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("parameters")
      expect(handlers.log.weather).toEqual([])
    }))

  it.effect("the repair runs once per call: a second failure is fed back, not repaired again", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Still wrong." }
      ])
      const handlers = makeHandlers()
      let consulted = 0
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: {
            parameters: () =>
              Effect.sync(() => {
                consulted++
                // a second repair would turn the failure into a success
                return consulted === 1
                  ? ToolFailurePolicy.retryWith({ city: 7 })
                  : ToolFailurePolicy.succeedWith({ celsius: 99 })
              })
          }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(consulted).toBe(1)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "weather", isFailure: true, result: PARAMS_MESSAGE }
      ])
      expect(callsInTranscript(outcome.chain)).toEqual([{ id: "call_1_1", name: "weather", params: { city: 7 } }])
    }))

  it.effect("succeedWith a value that fails the success schema becomes a 'result' failure", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Hmm." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { parameters: () => Effect.succeed(ToolFailurePolicy.succeedWith({ celsius: "warm" })) }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result:
            "Tool 'weather': the repaired result does not match the tool's success schema: Expected number\n  at [\"celsius\"]"
        }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("result")
      expect(outcome.chain.lastToolResults[0].result).toEqual({ celsius: "warm" })
    }))

  it.effect("a repair returning ToolFailurePolicy.fail ends the run like 'fail'", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] }])
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { handler: () => Effect.succeed(ToolFailurePolicy.fail) }
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      const reason = asToolCallFailed(error.reason)
      expect([reason.kind, reason.callId, reason.detail]).toEqual([
        "handler",
        "call_1_1",
        "Tool 'weather' failed: no such city: Atlantis"
      ])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([scenarios.handler.shown])
      expect(model.calls).toBe(1)
    }))

  it.effect("a repair returning ToolFailurePolicy.feedBack feeds the failure back (with the formatter)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] },
        { text: "No Atlantis." }
      ])
      const handlers = makeHandlers()
      yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: {
          handler: () => Effect.succeed(ToolFailurePolicy.feedBack),
          format: (failure) => `formatted ${failure.kind}`
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "weather", isFailure: true, result: "formatted handler" }
      ])
    }))

  const brokenRepairs: ReadonlyArray<{ readonly name: string; readonly repair: ToolFailurePolicy.Policy }> = [
    { name: "dies", repair: () => Effect.die(new Error("repair bug")) },
    {
      name: "fails (despite its type)",
      repair: (() => Effect.fail(new Error("repair failed"))) as unknown as ToolFailurePolicy.Policy
    },
    {
      name: "throws",
      repair: () => {
        throw new Error("repair threw")
      }
    }
  ]
  for (const row of brokenRepairs) {
    it.effect(`a repair function that ${row.name}: the failure is fed back`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "weather", params: { city: 42 } }] },
          { text: "Bad arguments." }
        ])
        const handlers = makeHandlers()
        const outcome = asOk(
          yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure: { parameters: row.repair } })
            .pipe(Effect.provide([model.layer, handlers.layer]))
        )
        expect(outcome.reason).toBe("done")
        expect(seenByModel(model, 1)).toEqual([scenarios.parameters.shown])
        expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("parameters")
      }))
  }
})

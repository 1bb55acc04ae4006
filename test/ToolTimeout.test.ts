/**
 * `ToolTimeout`: the annotation and the run's `toolTimeout`, exactly at the limit under `TestClock`;
 * the annotation wins over the run's option; a timed-out call is a failed result of kind "timeout"
 * whose message gives the duration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, Mode } from "../src/index.ts"
import { makeHandlers, userChain, seenByModel, asOk, settleRun } from "./support/toolFailure.ts"

// -----------------------------------------------------------------------------
// Timeouts
// -----------------------------------------------------------------------------

describe("tool timeouts", () => {
  it.effect("a handler finishing at 1.9s under a 2s annotation succeeds, exactly at 1.9s", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 1900 } }] }, { text: "Rested." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1899 millis")
      expect(handlers.log.started).toEqual(["nap:1900"])
      expect(handlers.log.finished).toEqual([])
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.finished).toEqual(["nap:1900"])
      expect(model.calls).toBe(2)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: false, result: "nap slept 1900ms" }
      ])
      expect(handlers.log.interrupted).toEqual([])
      expect(outcome.chain.failureCount).toBe(0)
    }))

  it.effect("a handler needing 2.1s is interrupted at exactly 2s and becomes a 'timeout' failure", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 2100 } }] }, { text: "Too slow." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1999 millis")
      expect(handlers.log.interrupted).toEqual([])
      expect(model.calls).toBe(1)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      // the finalizer ran and the model was called at once
      expect(handlers.log.interrupted).toEqual(["nap:2100"])
      expect(model.calls).toBe(2)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: true, result: "Tool 'nap' timed out after 2s" }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("timeout")
      // nothing keeps running in the background
      yield* TestClock.adjust("1 second")
      expect(handlers.log.finished).toEqual([])
    }))

  it.effect("toolTimeout applies to tools without an annotation; the annotation wins for tools that have one", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "fetch", params: { ms: 1500 } }, { name: "nap", params: { ms: 1500 } }] },
        { text: "One of two." }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: "1 second" }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("999 millis")
      expect(handlers.log.interrupted).toEqual([])
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.interrupted).toEqual(["fetch:1500"])
      // the round waits for nap (2s annotation) to finish at 1.5s
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("499 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(2)
      expect(handlers.log.finished).toEqual(["nap:1500"])
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: true, result: "Tool 'fetch' timed out after 1s" },
        { id: "call_1_2", name: "nap", isFailure: false, result: "nap slept 1500ms" }
      ])
    }))

  it.effect("an annotation shorter than toolTimeout wins too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 3000 } }] }, { text: "Slow." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: "10 seconds" }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1999 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.interrupted).toEqual(["nap:3000"])
      expect(model.calls).toBe(2)
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: true, result: "Tool 'nap' timed out after 2s" }
      ])
    }))

  it.effect("without toolTimeout, a tool without an annotation is never timed out", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: { ms: 600000 } }] }, { text: "Done." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("599999 millis")
      expect(model.calls).toBe(1)
      expect(handlers.log.interrupted).toEqual([])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: false, result: "fetch slept 600000ms" }
      ])
    }))

  it.effect("toolTimeout as milliseconds: the message formats the duration", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: { ms: 1000 } }] }, { text: "Slow." }])
      const handlers = makeHandlers()
      const exit = yield* settleRun(
        Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: 250 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: true, result: "Tool 'fetch' timed out after 250ms" }
      ])
      expect(handlers.log.interrupted).toEqual(["fetch:1000"])
    }))
})

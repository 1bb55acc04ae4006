/**
 * `StopSignal`: a signal raised before the run, while the model call is in flight, or by an
 * `AbortSignal` pauses the run at its next clean point with a resumable chain; an invalid `stop`
 * option is refused with `InvalidInput` before any model call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import {
Chain,
ChatModel,LoopError,
Mode,
Outcome,StopSignal
} from "../src/index.ts"
import { makeHandlers, freshChain, asOk, asPause, toolResultParts, toolCallParts } from "./support/priority.ts"

// -----------------------------------------------------------------------------
// The stop signal
// -----------------------------------------------------------------------------

const noteTurn = (id: string, topic: string) => ({ id, name: "note", params: { topic } })

interface BeforeRunRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  /** What the run gives once the signal is cleared (script: a note call, then text). */
  readonly afterClear: { readonly reason: Outcome.OkReason; readonly modelCalls: number; readonly notes: number }
}

const beforeRunRows: ReadonlyArray<BeforeRunRow> = [
  {
    name: "whileNeedsResponse",
    mode: Mode.whileNeedsResponse,
    afterClear: { reason: "done", modelCalls: 2, notes: 1 }
  },
  { name: "untilSuccess", mode: Mode.untilSuccess, afterClear: { reason: "tools-succeeded", modelCalls: 1, notes: 1 } },
  {
    name: "untilToolUsed(note)",
    mode: Mode.untilToolUsed("note"),
    afterClear: { reason: "tool-used", modelCalls: 1, notes: 1 }
  },
  { name: "step", mode: Mode.step, afterClear: { reason: "step", modelCalls: 1, notes: 0 } }
]

describe("StopSignal raised before the run", () => {
  for (const row of beforeRunRows) {
    it.effect(`${row.name}: Pause StopRequested with no model call, again on rerun, and runs once cleared`, () =>
      Effect.gen(function*() {
        const stop = yield* StopSignal.make
        expect(yield* StopSignal.isRequested(stop)).toBe(false)
        yield* StopSignal.request(stop)
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        const model = ChatModel.scripted([{ toolCalls: [noteTurn("n1", "x")] }, { text: "Final answer." }])
        const handlers = makeHandlers(undefined, false)
        yield* Effect.gen(function*() {
          const chain = freshChain()
          const first = asPause(yield* Chain.run(chain, { mode: row.mode, stop }))
          expect(first.reason).toEqual({ _tag: "StopRequested" })
          expect(model.calls).toBe(0)
          expect(first.chain.messages).toEqual(chain.messages)
          expect(first.chain.runCount).toBe(0)
          expect(handlers.counts.note).toBe(0)

          // a raised signal stays raised: the rerun pauses again, still without a model call
          const again = asPause(yield* Chain.run(first.chain, { mode: row.mode, stop }))
          expect(again.reason).toEqual({ _tag: "StopRequested" })
          expect(model.calls).toBe(0)
          expect(yield* Chain.encode(again.chain)).toEqual(yield* Chain.encode(first.chain))
          // the paused chain remembers where its run's maxRuns budget started (see Resume tests)
          expect(again.chain.modeState).toEqual({ "loopwork/budgetStart": 0 })

          yield* StopSignal.clear(stop)
          const resumed = asOk(yield* Chain.run(again.chain, { mode: row.mode, stop }))
          expect(resumed.reason).toBe(row.afterClear.reason)
          expect(model.calls).toBe(row.afterClear.modelCalls)
          expect(handlers.counts.note).toBe(row.afterClear.notes)
          expect(model.requests[0].prompt.content.map((message) => message.role)).toEqual(["system", "user"])
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      }))
  }
})

/** Two note rounds, then a text answer; every model turn takes 1 second. */
const slowScript: ReadonlyArray<ChatModel.ScriptedReply> = [
  { toolCalls: [noteTurn("n1", "a"), noteTurn("n2", "b")], latency: "1 second" },
  { toolCalls: [noteTurn("n3", "c")], latency: "1 second" },
  { text: "All noted.", latency: "1 second" }
]

describe("StopSignal raised while the model call is in flight", () => {
  it.effect("the call's tool calls still run, every call has its result, then Pause; a rerun pauses again", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        expect(model.calls).toBe(1)
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("499 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        expect(handlers.counts.note).toBe(0)
        yield* TestClock.adjust("1 millis")
        // done without more time: the loop did not go on to the next (1 second) model call
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        const chain = paused.chain
        expect(chain.runCount).toBe(1)
        expect(chain.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"])
        expect(chain.pendingToolCalls).toEqual([])
        expect(chain.roundResults).toEqual([])
        // every tool call in the chain has its result
        const callIds = chain.messages.flatMap((message) => message.role === "assistant" ? toolCallParts(message) : [])
          .map((part) => part.id)
        const resultIds = chain.messages.flatMap((message) => message.role === "tool" ? toolResultParts(message) : [])
          .map((part) => part.id)
        expect(callIds).toEqual(["n1", "n2"])
        expect(resultIds).toEqual(callIds)
        expect(chain.lastToolResults.map((result) => [result.id, result.encoded])).toEqual([
          ["n1", "noted a"],
          ["n2", "noted b"]
        ])

        // still raised: the rerun pauses at once, without calling the model or the tools
        const again = asPause(yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, stop }))
        expect(again.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        expect(yield* Chain.encode(again.chain)).toEqual(yield* Chain.encode(chain))
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))

  it.effect("after StopSignal.clear the resumed run ends with exactly the chain of an uninterrupted run", () =>
    Effect.gen(function*() {
      // uninterrupted
      const straightModel = ChatModel.scripted(slowScript)
      const straightHandlers = makeHandlers(undefined, false)
      const straight = yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse }).pipe(Effect.forkChild)
        yield* TestClock.adjust("3 seconds")
        return asOk(yield* Fiber.join(fiber))
      }).pipe(Effect.provide([straightModel.layer, straightHandlers.layer]))
      expect(straight.reason).toBe("done")
      expect(straightModel.calls).toBe(3)

      // interrupted during the second model call, then resumed
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      const resumed = yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("1500 millis")
        expect(model.calls).toBe(2)
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("500 millis")
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(2)
        expect(handlers.counts.note).toBe(3)
        expect(paused.chain.messages.map((message) => message.role)).toEqual([
          "system",
          "user",
          "assistant",
          "tool",
          "assistant",
          "tool"
        ])
        expect(paused.chain.lastToolResults.map((result) => result.id)).toEqual(["n3"])

        yield* StopSignal.clear(stop)
        expect(yield* StopSignal.isRequested(stop)).toBe(false)
        const rerun = yield* Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("1 second")
        return asOk(yield* Fiber.join(rerun))
      }).pipe(Effect.provide([model.layer, handlers.layer]))

      expect(resumed.reason).toBe("done")
      expect(model.calls).toBe(3)
      expect(handlers.counts.note).toBe(straightHandlers.counts.note)
      expect(Chain.text(resumed.chain)).toBe("All noted.")
      expect(resumed.chain.runCount).toBe(3)
      expect(yield* Chain.encode(resumed.chain)).toEqual(yield* Chain.encode(straight.chain))
      // the model saw the same conversation on its last turn
      expect(model.requests[2].prompt).toEqual(straightModel.requests[2].prompt)
    }))

  it.effect("a stop raised during a final text answer has nothing to pause: Ok done, the signal stays raised", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted([{ text: "Hello.", latency: "1 second" }, { text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("500 millis")
        const ok = asOk(yield* Fiber.join(fiber))
        expect(ok.reason).toBe("done")
        expect(Chain.text(ok.chain)).toBe("Hello.")
        expect(model.calls).toBe(1)
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        // the next question pauses before its model call
        const next = asPause(yield* Chain.run(ok.chain.pipe(Chain.addUser("And?")), { mode: Mode.whileNeedsResponse, stop }))
        expect(next.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

describe("StopSignal.fromAbortSignal", () => {
  it.effect("an already aborted signal: the run pauses before any model call", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      controller.abort()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      expect(StopSignal.isStopSignal(stop)).toBe(true)
      expect(yield* StopSignal.isRequested(stop)).toBe(true)
      const model = ChatModel.scripted([{ text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      const paused = asPause(
        yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(paused.reason).toEqual({ _tag: "StopRequested" })
      expect(model.calls).toBe(0)
    }))

  it.effect("a controller never aborted does not stop the run", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      expect(yield* StopSignal.isRequested(stop)).toBe(false)
      const model = ChatModel.scripted([{ toolCalls: [noteTurn("n1", "a")] }, { text: "Final answer." }])
      const handlers = makeHandlers(undefined, false)
      const ok = asOk(
        yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(ok.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(handlers.counts.note).toBe(1)
    }))

  it.effect("abort() while the model call is in flight: the round runs, then Pause; cleared, the run finishes", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        controller.abort()
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        yield* TestClock.adjust("500 millis")
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        expect(paused.chain.pendingToolCalls).toEqual([])
        expect(toolResultParts(paused.chain.messages[paused.chain.messages.length - 1]).map((part) => part.id))
          .toEqual(["n1", "n2"])

        yield* StopSignal.clear(stop)
        const rerun = yield* Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("2 seconds")
        const ok = asOk(yield* Fiber.join(rerun))
        expect(ok.reason).toBe("done")
        expect(Chain.text(ok.chain)).toBe("All noted.")
        expect(model.calls).toBe(3)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

// -----------------------------------------------------------------------------
// An invalid `stop` option
// -----------------------------------------------------------------------------

interface InvalidStopRow {
  readonly name: string
  readonly value: unknown
  readonly shown: string
}

const invalidStopRows: ReadonlyArray<InvalidStopRow> = [
  { name: "a look-alike object", value: { requested: true }, shown: "{\"requested\":true}" },
  { name: "an AbortSignal (not wrapped with fromAbortSignal)", value: new AbortController().signal, shown: "{}" },
  { name: "a string", value: "stop", shown: "\"stop\"" },
  { name: "a boolean", value: true, shown: "true" },
  { name: "null", value: null, shown: "null" }
]

describe("an invalid stop option", () => {
  for (const row of invalidStopRows) {
    it.effect(`${row.name} → RunError InvalidInput naming stop, before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "never reached" }])
        const handlers = makeHandlers(undefined, false)
        const chain = freshChain()
        const error = yield* Chain.run(chain, {
          mode: Mode.whileNeedsResponse,
          stop: row.value as StopSignal.StopSignal
        }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
        expect(error._tag).toBe("RunError")
        expect(error.reason._tag).toBe("InvalidInput")
        const reason = error.reason
        if (!(reason instanceof LoopError.InvalidInput)) throw new globalThis.Error("expected InvalidInput")
        expect(reason.field).toBe("stop")
        expect(reason.rule).toBe("must be a StopSignal (yield* StopSignal.make)")
        expect(reason.value).toBe(row.value)
        expect(error.message).toBe(`Invalid stop: must be a StopSignal (yield* StopSignal.make) (got ${row.shown})`)
        expect(error.chain).toBe(chain)
        expect(model.calls).toBe(0)
      }))
  }

  it.effect("the StopSignal.make effect itself (not yielded) is rejected too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      const error = yield* Chain.run(freshChain(), {
        mode: Mode.untilSuccess,
        stop: StopSignal.make as unknown as StopSignal.StopSignal
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error.reason._tag).toBe("InvalidInput")
      expect(error.message.startsWith("Invalid stop: must be a StopSignal (yield* StopSignal.make) (got ")).toBe(true)
      expect(model.calls).toBe(0)
    }))
})

/**
 * `StopSignal.interrupt`: cutting a run short yields a resumable paused chain
 * instead of losing the round. Mid-model-call, the chain is the one before
 * the call; mid-round, finished calls keep their results and running calls
 * are interrupted (finalizers run, nothing left running) and stay pending.
 * Resuming after a JSON round trip ends exactly like the uninterrupted run.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, Mode, type Outcome, type RunEvent, StopSignal } from "../../src/index.ts"
import { Stream } from "effect"

const Wait = Tool.make("wait", { parameters: Schema.Struct({ ms: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(Wait)

/** A tool that sleeps `ms`, counting starts, completions, finalizers and what is running. */
const tracked = () => {
  const state = { started: [] as Array<number>, completed: [] as Array<number>, finalized: 0, running: 0 }
  const layer = toolkit.toLayer({
    wait: ({ ms }) =>
      Effect.sync(() => {
        state.started.push(ms)
        state.running++
      }).pipe(
        Effect.andThen(Effect.sleep(ms)),
        Effect.andThen(Effect.sync(() => {
          state.completed.push(ms)
          return `waited ${ms}`
        })),
        Effect.ensuring(Effect.sync(() => {
          state.running--
          state.finalized++
        }))
      )
  })
  return { state, layer }
}

/** Replies as functions of the conversation, so a resumed run gets the same answers. */
const script = () =>
  ChatModel.scripted(
    [(request) => {
      const rounds = request.prompt.content.filter((message) => message.role === "tool").length
      return rounds === 0
        ? { toolCalls: [1000, 5000, 8000].map((ms, i) => ({ name: "wait", params: { ms }, id: `w${i}` })), latency: "2 seconds" }
        : { text: "all waited", latency: "10 seconds" }
    }],
    { repeat: true }
  )

const start = Chain.make({ user: "wait for me", toolkit })

const encoded = (chain: Chain.Chain) => Effect.map(Chain.encode(chain), (document) => JSON.parse(JSON.stringify(document)))

/** The uninterrupted run's final chain document. */
const uninterrupted = Effect.gen(function*() {
  const tools = tracked()
  const fiber = yield* Effect.forkChild(
    Chain.run(start, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([script().layer, tools.layer]))
  )
  yield* TestClock.adjust("1 minute")
  const outcome = yield* Fiber.join(fiber)
  return yield* encoded(outcome.chain)
})

/** Runs from `chain` with a fresh signal, interrupting it after `after`; returns the outcome. */
const interruptedAfter = (chain: Chain.Chain, after: Duration.Input, tools: ReturnType<typeof tracked>) =>
  Effect.gen(function*() {
    const stop = yield* StopSignal.make
    const fiber = yield* Effect.forkChild(
      Chain.run(chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.provide([script().layer, tools.layer]))
    )
    yield* TestClock.adjust(after)
    yield* StopSignal.interrupt(stop)
    return yield* Fiber.join(fiber)
  })

const resume = (outcome: Outcome.Final, tools: ReturnType<typeof tracked>) =>
  Effect.gen(function*() {
    // through JSON, as a stored pause would be
    const decoded = yield* Chain.decode(JSON.stringify(yield* Chain.encode(outcome.chain)), { toolkit })
    const fiber = yield* Effect.forkChild(
      Chain.run(decoded, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([script().layer, tools.layer]))
    )
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

describe("StopSignal.interrupt", () => {
  it.effect("mid-round: finished calls keep their results, running calls are interrupted and stay pending; resuming ends as the uninterrupted run", () =>
    Effect.gen(function*() {
      const expected = yield* uninterrupted
      const tools = tracked()
      // model answers at 2 s; the calls of 1 s, 5 s and 8 s start then; at 4 s only the first has finished
      const paused = yield* interruptedAfter(start, "4 seconds", tools)
      expect(paused._tag).toBe("Pause")
      expect(paused._tag === "Pause" && paused.reason).toEqual({ _tag: "StopRequested" })
      expect(tools.state).toEqual({ started: [1000, 5000, 8000], completed: [1000], finalized: 3, running: 0 })
      expect(paused.chain.roundResults.map((result) => [result.id, result.encoded])).toEqual([["w0", "waited 1000"]])
      expect(paused.chain.pendingToolCalls.map((call) => call.id)).toEqual(["w1", "w2"])
      expect(paused.chain.messages.map((message) => message.role)).toEqual(["user", "assistant"])
      // nothing more happens after the pause
      yield* TestClock.adjust("1 minute")
      expect(tools.state.completed).toEqual([1000])

      const finished = yield* resume(paused, tools)
      expect(finished._tag).toBe("Ok")
      // only the interrupted calls ran again
      expect(tools.state.started).toEqual([1000, 5000, 8000, 5000, 8000])
      expect(yield* encoded(finished.chain)).toEqual(expected)
    }))

  it.effect("mid-model-call: the call is abandoned and the chain is the one before it; resuming ends as the uninterrupted run", () =>
    Effect.gen(function*() {
      const expected = yield* uninterrupted
      const tools = tracked()
      // the round ends at 10 s; the second model call takes 10 s more; interrupt at 15 s
      const paused = yield* interruptedAfter(start, "15 seconds", tools)
      expect(paused._tag).toBe("Pause")
      expect(paused.chain.runCount).toBe(1)
      expect(paused.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
      expect(paused.chain.pendingToolCalls).toEqual([])
      expect(tools.state).toEqual({ started: [1000, 5000, 8000], completed: [1000, 5000, 8000], finalized: 3, running: 0 })
      const finished = yield* resume(paused, tools)
      expect(finished._tag).toBe("Ok")
      expect(tools.state.started).toHaveLength(3) // no tool ran again
      expect(yield* encoded(finished.chain)).toEqual(expected)
    }))

  it.effect("during the first model call: the chain is unchanged, no tool starts", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const paused = yield* interruptedAfter(start, "1 second", tools)
      expect(paused._tag).toBe("Pause")
      // the same chain, plus the run's maxRuns budget start kept for the resume
      const { modeState, ...rest } = yield* encoded(paused.chain)
      const { modeState: _, ...before } = yield* encoded(start)
      expect(rest).toEqual(before)
      expect(modeState).toEqual({ "loopwork/budgetStart": 0 })
      yield* TestClock.adjust("1 minute")
      expect(tools.state.started).toEqual([])
    }))

  it.effect("a signal interrupted before the run pauses it at once; clear makes it usable again", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const stop = yield* StopSignal.make
      yield* StopSignal.interrupt(stop)
      expect(yield* StopSignal.isRequested(stop)).toBe(true)
      const model = script()
      const paused = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, stop }).pipe(
        Effect.provide([model.layer, tools.layer])
      )
      expect(paused._tag).toBe("Pause")
      expect(model.calls).toBe(0)
      yield* StopSignal.clear(stop)
      const fiber = yield* Effect.forkChild(
        Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.provide([script().layer, tools.layer]))
      )
      yield* TestClock.adjust("1 minute")
      const finished = yield* Fiber.join(fiber)
      expect(finished._tag).toBe("Ok")
      expect(Chain.text(finished.chain)).toBe("all waited")
    }))

  it.effect("StopSignal.request (not interrupt) still lets the round finish before pausing", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const stop = yield* StopSignal.make
      const fiber = yield* Effect.forkChild(
        Chain.run(start, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.provide([script().layer, tools.layer]))
      )
      yield* TestClock.adjust("4 seconds")
      yield* StopSignal.request(stop)
      yield* TestClock.adjust("1 minute")
      const paused = yield* Fiber.join(fiber)
      expect(paused._tag).toBe("Pause")
      expect(tools.state.completed).toEqual([1000, 5000, 8000])
      expect(paused.chain.pendingToolCalls).toEqual([])
      expect(paused.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
    }))

  it.effect("a handler whose work cannot be interrupted: reported interrupted, kept pending, run again on resume (the documented limit)", () =>
    Effect.gen(function*() {
      // Effect discards the value of an uninterruptible region that ends with an interruption
      // pending, so the loop cannot know the work happened: such tools should be idempotent.
      const Transfer = Tool.make("transfer", { parameters: Schema.Struct({ id: Schema.String }), success: Schema.String })
      const tools = Toolkit.make(Transfer)
      let executed = 0
      const handlers = tools.toLayer({
        transfer: ({ id }) =>
          Effect.uninterruptible(Effect.sleep("500 millis").pipe(Effect.as(`sent ${id}`), Effect.tap(() => Effect.sync(() => executed++))))
      })
      const model = () =>
        ChatModel.scripted([(request) =>
          request.prompt.content.some((message) => message.role === "tool")
            ? { text: "done" }
            : { toolCalls: [{ name: "transfer", params: { id: "t1" }, id: "t1" }] }
        ], { repeat: true })
      const stop = yield* StopSignal.make
      const events: Array<RunEvent.RunEvent> = []
      const fiber = yield* Effect.forkChild(
        Chain.stream(Chain.make({ user: "pay", toolkit: tools }), { mode: Mode.whileNeedsResponse, stop }).pipe(
          Stream.runForEach((event) => Effect.sync(() => events.push(event))),
          Effect.provide([model().layer, handlers])
        )
      )
      yield* TestClock.adjust("100 millis")
      yield* StopSignal.interrupt(stop)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      // the interruption waited for the uninterruptible work to end
      expect(executed).toBe(1)
      const paused = events.at(-1)
      expect(paused?._tag).toBe("RunPaused")
      expect(events.filter((e) => e._tag === "ToolCallFinished").map((e) => e._tag === "ToolCallFinished" && e.status)).toEqual(["interrupted"])
      const chain = yield* Chain.decode(paused?._tag === "RunPaused" ? paused.chain : undefined, { toolkit: tools })
      expect(chain.pendingToolCalls.map((call) => call.id)).toEqual(["t1"])
      const resumed = yield* Effect.forkChild(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model().layer, handlers])))
      yield* TestClock.adjust("1 second")
      const finished = yield* Fiber.join(resumed)
      expect(Chain.text(finished.chain)).toBe("done")
      expect(executed).toBe(2)
    }))

  it.effect("a call that finishes at the moment of the interrupt keeps its result", () =>
    Effect.gen(function*() {
      const tools = tracked()
      // the 1 s call started at 2 s and finishes at 3 s: interrupt exactly then
      const paused = yield* interruptedAfter(start, "3 seconds", tools)
      expect(paused.chain.roundResults.map((result) => result.id)).toEqual(["w0"])
      expect(paused.chain.pendingToolCalls.map((call) => call.id)).toEqual(["w1", "w2"])
    }))

  it.effect("every started tool call gets its end event: interrupted calls end with status \"interrupted\"", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const stop = yield* StopSignal.make
      const events: Array<RunEvent.RunEvent> = []
      const fiber = yield* Effect.forkChild(
        Chain.stream(start, { mode: Mode.whileNeedsResponse, stop }).pipe(
          Stream.runForEach((event) => Effect.sync(() => events.push(event))),
          Effect.provide([script().layer, tools.layer])
        )
      )
      yield* TestClock.adjust("4 seconds")
      yield* StopSignal.interrupt(stop)
      yield* Fiber.join(fiber)
      expect(events.filter((e) => e._tag === "ToolCallFinished").map((e) => e._tag === "ToolCallFinished" ? [e.id, e.status] : [])).toEqual([
        ["w0", "succeeded"],
        ["w1", "interrupted"],
        ["w2", "interrupted"]
      ])
      expect(events.at(-1)?._tag).toBe("RunPaused")
    }))

  it.effect("the final-answer call of onMaxRuns is abandoned too", () =>
    Effect.gen(function*() {
      const tools = tracked()
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "wait", params: { ms: 10 } }] },
        { text: "final", latency: "3 seconds" }
      ])
      const stop = yield* StopSignal.make
      const fiber = yield* Effect.forkChild(
        Chain.run(start, { mode: Mode.whileNeedsResponse, stop, maxRuns: 1, onMaxRuns: "final-answer" }).pipe(
          Effect.provide([model.layer, tools.layer])
        )
      )
      yield* TestClock.adjust("300 millis")
      yield* StopSignal.interrupt(stop)
      const paused = yield* Fiber.join(fiber)
      expect(paused._tag).toBe("Pause")
      expect(paused.chain.runCount).toBe(1)
      expect(paused.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
    }))
})

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
import { Chain, ChatModel, Mode, type Outcome, StopSignal } from "../src/index.ts"

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
})

/**
 * `Chain.stream`'s contract with its consumer, beyond the events themselves: the run waits once the
 * consumer is `bufferSize` events behind (it neither runs to its end nor drops events), then goes on
 * when the consumer catches up; a run that dies fails the stream with that defect; and a custom mode
 * reporting through the run's `Observer` (with `emitTo`, or calling `emit` itself) puts its events in
 * the stream, in order, a failure event's message redacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, type Mode, Outcome, RunEvent } from "../../src/index.ts"
import { type Event, events, whileNeeds } from "../support/stream.ts"

const Count = Tool.make("count", { parameters: Schema.Struct({ n: Schema.Number }), success: Schema.Number })
const toolkit = Toolkit.make(Count)

/** 20 rounds of one `count` call (4 events each: the model call's two, the tool call's two), then text. */
const rounds = 20
const setup = () => {
  const handled = { count: 0 }
  const layer = toolkit.toLayer({ count: ({ n }) => Effect.sync(() => (handled.count++, n)) })
  const model = ChatModel.scripted([
    ...Array.from({ length: rounds }, (_, n) => ({ toolCalls: [{ name: "count", params: { n } }] })),
    { text: "done" }
  ])
  return { handled, model, layers: Layer.merge(model.layer, layer) }
}

const chain = Chain.make({ user: "count", toolkit })

/** The run's progress while the consumer holds its first event, then every event once it lets go. */
const stalled = (bufferSize: number) =>
  Effect.gen(function*() {
    const { handled, layers, model } = setup()
    const gate = yield* Deferred.make<void>()
    const seen: Array<Event> = []
    const fiber = yield* Effect.forkChild(
      Stream.runForEach(Chain.stream(chain, { ...whileNeeds, bufferSize }), (event) =>
        Effect.suspend(() => {
          seen.push(event)
          return seen.length === 1 ? Deferred.await(gate) : Effect.void
        })).pipe(Effect.provide(layers))
    )
    for (let i = 0; i < 200; i++) yield* Effect.yieldNow
    const whileHeld = { seen: seen.length, modelCalls: model.calls, toolCalls: handled.count }
    yield* Deferred.succeed(gate, undefined)
    yield* Fiber.join(fiber)
    return { whileHeld, seen, after: { modelCalls: model.calls, toolCalls: handled.count } }
  })

/** An event without its duration. */
const untimed = (event: Event): unknown => {
  if (!("durationMillis" in event)) return event
  const { durationMillis: _durationMillis, ...rest } = event
  return rest
}

describe("Chain.stream: a consumer that falls behind", () => {
  for (const bufferSize of [1, 8, 32]) {
    it.effect(`bufferSize ${bufferSize}: the run goes about bufferSize events ahead, waits, then finishes with every event`, () =>
      Effect.gen(function*() {
        const unhurried = setup()
        const all = yield* events(Chain.stream(chain, whileNeeds)).pipe(Effect.provide(unhurried.layers))
        expect(all).toHaveLength(1 + rounds * 4 + 4)

        const { after, seen, whileHeld } = yield* stalled(bufferSize)
        expect(whileHeld.seen).toBe(1)
        // The events the run had emitted when it stopped: counted from below (RunStarted, four per tool
        // call that ran), at least the buffer's size; bounded from above by its model calls: the
        // consumer's first chunk (≤ bufferSize), a full buffer and the event that waits.
        const emitted = 1 + 4 * whileHeld.toolCalls
        expect(emitted).toBeGreaterThanOrEqual(Math.min(bufferSize, all.length))
        expect(4 * (whileHeld.modelCalls - 1)).toBeLessThanOrEqual(2 * bufferSize + 1)
        expect(whileHeld.modelCalls).toBeLessThan(rounds + 1)
        // Once let go, nothing was lost, repeated or reordered.
        expect(seen.map(untimed)).toEqual(all.map(untimed))
        expect(after).toEqual({ modelCalls: rounds + 1, toolCalls: rounds })
      }))
  }
})

describe("Chain.stream: a run that dies", () => {
  it.effect("fails the stream with the run's defect, after the events the run emitted", () =>
    Effect.gen(function*() {
      const boom = new Error("the mode broke")
      const dying: Mode.Mode = () => Effect.die(boom)
      const seen: Array<Event> = []
      const exit = yield* Effect.exit(
        Stream.runForEach(Chain.stream(Chain.make({ user: "go" }), { mode: dying }), (event) => Effect.sync(() => seen.push(event)))
      )
      expect(seen.map((event) => event._tag)).toEqual(["RunStarted"])
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(exit.cause.reasons.filter(Cause.isDieReason).map((reason) => reason.defect)).toEqual([boom])
      }
    }))
})

describe("Chain.stream: a custom mode reporting through the run's observer", () => {
  const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"

  it.effect("its events arrive in order between RunStarted and RunFinished; emitTo redacts a failure's message", () =>
    Effect.gen(function*() {
      const reporting: Mode.Mode = (chain) =>
        Effect.gen(function*() {
          const observer = yield* RunEvent.Observer
          yield* RunEvent.emitTo(observer, { _tag: "ModelCallFailed", call: 1, attempt: 1, error: "X", message: `Bearer ${key}`, durationMillis: 2 })
          // An effect made and never run reports nothing; `emit` reports when it runs.
          observer.emit({ _tag: "ToolCallStarted", id: "never", name: "never" })
          yield* observer.emit({ _tag: "ToolCallStarted", id: "t1", name: "lookup" })
          return new Outcome.Ok(chain, "done")
        })
      const seen = yield* events(Chain.stream(Chain.make({ user: "go" }), { mode: reporting }))
      expect(seen.map((event) => event._tag)).toEqual(["RunStarted", "ModelCallFailed", "ToolCallStarted", "RunFinished"])
      expect(seen[1]).toMatchObject({ message: "Bearer [REDACTED]" })
      expect(seen[2]).toEqual({ _tag: "ToolCallStarted", id: "t1", name: "lookup" })
    }))
})

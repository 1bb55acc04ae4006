/**
 * `RunEvent`: events as Schema data (JSON out and back), call numbers that go on after a resume;
 * `RunEvent.Observer` on runs you start yourself (an observer that fails changes nothing; an observed
 * run ends with the same chain as one that is not); and a slow consumer (backpressure).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Response } from "effect/ai"
import {
Chain,
ChatModel,type LoopError,ModelRetry,
type Outcome,
RunEvent
} from "../src/index.ts"
import {
  basicToolkit, approvalToolkit, makeHandlers, lookup, row, encodeEvent, decodeEvent, drain, events, last,
  documentOf, settled, whileNeeds, finish, type Event
} from "./support/stream.ts"

// -----------------------------------------------------------------------------
// Events as data
// -----------------------------------------------------------------------------

describe("events as data", () => {
  it.effect("every kind of event encodes to JSON and decodes back equal", () =>
    Effect.gen(function*() {
      const all: Array<Event> = []
      const collect = <R>(stream: Stream.Stream<Event, LoopError.RunError, R>) =>
        Effect.map(drain(stream), (drained) => all.push(...drained.events))
      const handlers = makeHandlers()
      yield* collect(Chain.stream(
        Chain.make({ user: "go", toolkit: basicToolkit }),
        { ...whileNeeds, retry: ModelRetry.schedule({ times: 1 }) }
      )).pipe(Effect.provide([
        ChatModel.scripted([
          { fail: "busy" },
          { text: "ok ", toolCalls: [lookup("a", 5), { name: "fails", params: { q: "b" } }], usage: { inputTokens: 3, outputTokens: 2 } },
          { text: "done" }
        ]).layer,
        handlers.layer
      ]))
      yield* collect(Chain.stream(Chain.make({ user: "go", toolkit: approvalToolkit }), whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted([{ toolCalls: [{ name: "transfer", params: { to: "A", amount: 1 } }] }]).layer, handlers.layer])
      )
      yield* collect(Chain.stream(Chain.make({ user: "go" }), whileNeeds)).pipe(
        Effect.provide(ChatModel.scripted([{ fail: "down" }]).layer)
      )
      expect(new Set(all.map((event) => event._tag))).toEqual(
        new Set([
          "RunStarted",
          "ModelCallStarted",
          "TextDelta",
          "ModelCallFinished",
          "ModelCallFailed",
          "ToolCallStarted",
          "ToolCallFinished",
          "RunPaused",
          "RunFinished",
          "RunFailed"
        ])
      )
      for (const event of all) {
        const json = JSON.stringify(encodeEvent(event))
        expect(decodeEvent(JSON.parse(json))).toEqual(event)
      }
      // the documents in terminal events are Chain.encode documents
      for (const event of all) {
        if (event._tag === "RunFinished" || event._tag === "RunPaused" || event._tag === "RunFailed") {
          const json = JSON.stringify(event.chain)
          const decoded: Chain.Chain = event._tag === "RunPaused"
            ? yield* Chain.decode(json, { toolkit: approvalToolkit })
            : yield* Chain.decode(json, { toolkit: basicToolkit })
          expect(yield* Chain.encode(decoded)).toEqual(event.chain)
        }
      }
    }))

  it.effect("call numbers go on after a resume: a stopped run resumed from its document continues at runCount + 1", () =>
    Effect.gen(function*() {
      const turns = [{ toolCalls: [lookup("a", 1)] }, { toolCalls: [lookup("b", 1)] }, { text: "end" }]
      const model = ChatModel.scripted(turns)
      const handlers = makeHandlers()
      const first = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, maxRuns: 1, onMaxRuns: "stop" }))
        .pipe(Effect.provide([model.layer, handlers.layer]))
      const stopped = last(first)
      expect(row(stopped)).toBe(`RunFinished max-runs ""`)
      const resumed = addUser(yield* Chain.decode(documentOf(stopped), { toolkit: basicToolkit }))
      const second = yield* events(Chain.stream(resumed, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(turns.slice(1)).layer, handlers.layer])
      )
      expect(second[0]).toEqual({ _tag: "RunStarted", messages: 4, runCount: 1 })
      expect(calls(first)).toEqual([1])
      expect(calls(second)).toEqual([2, 3])
      // every model event of a call carries its number
      expect(
        second.flatMap((event) => "call" in event ? [`${event._tag} ${event.call}`] : [])
      ).toEqual(["ModelCallStarted 2", "ModelCallFinished 2", "ModelCallStarted 3", "TextDelta 3", "ModelCallFinished 3"])
    }))
})

const addUser = Chain.addUser("and then?")
const calls = (events: ReadonlyArray<Event>) => events.flatMap((event) => event._tag === "ModelCallFinished" ? [event.call] : [])

// -----------------------------------------------------------------------------
// Observers
// -----------------------------------------------------------------------------

/** A run with tools, text, a failed call and usage: enough to exercise every event of a finished run. */
const observedTurns: ReadonlyArray<ChatModel.ScriptedTurn> = [
  { text: "Let me check two things.", toolCalls: [lookup("a", 30), lookup("b", 10)], usage: { inputTokens: 10, outputTokens: 5 } },
  { toolCalls: [{ name: "fails", params: { q: "c" } }, { name: "nope", params: {} }] },
  { text: "Here is what I found: a and b.", usage: { inputTokens: 30, outputTokens: 9 } }
]
const observedStart = Chain.make({ system: "Research.", user: "go", toolkit: basicToolkit })

interface Summary {
  readonly tag: string
  readonly detail: string
  readonly document: unknown
}

const summarize = <R>(outcome: Effect.Effect<Outcome.Final, LoopError.RunError, R>): Effect.Effect<Summary, never, R> =>
  Effect.matchEffect(outcome, {
    onSuccess: (final) =>
      Effect.map(Chain.encode(final.chain), (document) => ({
        tag: final._tag,
        detail: final._tag === "Ok" ? final.reason : final.reason._tag,
        document
      })).pipe(Effect.orDie),
    onFailure: (error) =>
      Effect.map(Chain.encode(error.chain), (document) => ({ tag: "Error", detail: error.reason._tag, document })).pipe(Effect.orDie)
  })

const runObserved = (observer: RunEvent.Observer | undefined, turns = observedTurns) =>
  Effect.gen(function*() {
    const run = Chain.run(observedStart, whileNeeds)
    const observed = observer === undefined ? run : Effect.provideService(run, RunEvent.Observer, observer)
    return yield* settled(summarize(observed))
  }).pipe(Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer]))

describe("RunEvent.Observer", () => {
  const failing: ReadonlyArray<readonly [string, (event: Event) => Effect.Effect<void>]> = [
    ["dies", () => Effect.die(new Error("observer died"))],
    ["throws instead of returning an Effect", () => {
      throw new Error("observer threw")
    }],
    // a careless caller's observer with a typed failure (the type says it cannot fail)
    ["fails", () => Effect.fail("observer failed") as unknown as Effect.Effect<void>],
    ["fails only on the terminal event", (event) => event._tag === "RunFinished" ? Effect.die("late") : Effect.void]
  ]

  for (const [name, emit] of failing) {
    for (const streaming of [false, true]) {
      it.effect(`an observer that ${name} (streaming ${streaming}) does not change the run's result`, () =>
        Effect.gen(function*() {
          let received = 0
          const counted = (event: Event) => Effect.suspend(() => (received++, emit(event)))
          const plain = yield* runObserved(undefined)
          const observed = yield* runObserved({ emit: counted, streaming })
          expect(observed).toEqual(plain)
          expect(plain.tag).toBe("Ok")
          // it was called for every event, not dropped after its first failure
          expect(received).toBeGreaterThan(10)
        }))
    }
  }

  it.effect("an observer whose emit fails does not change a failing run's error", () =>
    Effect.gen(function*() {
      const turns = [...observedTurns.slice(0, 1), { fail: "down" }]
      const plain = yield* runObserved(undefined, turns)
      const observed = yield* runObserved({ emit: () => Effect.die("observer died"), streaming: true }, turns)
      expect(plain.detail).toBe("ModelCallFailed")
      expect(observed).toEqual(plain)
    }))

  it.effect("an observer receives the events Chain.stream yields; without streaming, the same minus the text deltas", () =>
    Effect.gen(function*() {
      const received = (streaming: boolean) =>
        Effect.gen(function*() {
          const seen: Array<Event> = []
          yield* runObserved({ emit: (event) => Effect.sync(() => seen.push(event)), streaming })
          return seen
        })
      const streamed = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      expect(yield* received(true)).toEqual(streamed)
      const unstreamed = yield* received(false)
      expect(unstreamed).toEqual(streamed.filter((event) => event._tag !== "TextDelta"))
      expect(streamed.some((event) => event._tag === "TextDelta")).toBe(true)
    }))

  it.effect("an observed run, streamed or not, ends with the same chain as the default run", () =>
    Effect.gen(function*() {
      const plain = yield* runObserved(undefined)
      const streamed = yield* runObserved({ emit: () => Effect.void, streaming: true })
      const unstreamed = yield* runObserved({ emit: () => Effect.void, streaming: false })
      const viaStream = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      expect(streamed).toEqual(plain)
      expect(unstreamed).toEqual(plain)
      expect(documentOf(last(viaStream))).toEqual(plain.document)
      expect(plain.detail).toBe("done")
    }))

  it.effect("a model whose stream has reasoning, several text blocks and tool-argument deltas: the same chain as generate's", () =>
    Effect.gen(function*() {
      const whole = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("reasoning", { text: "I should look it up." }),
            Response.makePart("text", { text: "Looking " }),
            Response.makePart("text", { text: "it up." }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            finish("tool-calls")
          ]
          : [Response.makePart("text", { text: "Found a." }), finish("stop")]
      const streamedParts = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("reasoning-start", { id: "r" }),
            Response.makePart("reasoning-delta", { id: "r", delta: "I should " }),
            Response.makePart("reasoning-delta", { id: "r", delta: "look it up." }),
            Response.makePart("reasoning-end", { id: "r" }),
            Response.makePart("text-start", { id: "t1" }),
            Response.makePart("text-delta", { id: "t1", delta: "Looking " }),
            Response.makePart("text-end", { id: "t1" }),
            Response.makePart("text-start", { id: "t2" }),
            Response.makePart("text-delta", { id: "t2", delta: "it " }),
            Response.makePart("text-delta", { id: "t2", delta: "up." }),
            Response.makePart("text-end", { id: "t2" }),
            Response.makePart("tool-params-start", { id: "c1", name: "lookup", providerExecuted: false }),
            Response.makePart("tool-params-delta", { id: "c1", delta: "{\"q\":\"a\",\"ms\":5}" }),
            Response.makePart("tool-params-end", { id: "c1" }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            finish("tool-calls")
          ]
          : [
            Response.makePart("text-start", { id: "t" }),
            Response.makePart("text-delta", { id: "t", delta: "Found " }),
            Response.makePart("text-delta", { id: "t", delta: "a." }),
            Response.makePart("text-end", { id: "t" }),
            finish("stop")
          ]
      const { plain, seen } = yield* generatedAndStreamed(partsModel(whole, streamedParts))
      expect(plain.detail).toBe("done")
      expect(documentOf(last(seen))).toEqual(plain.document)
      expect(seen.filter((event) => event._tag === "ModelCallFinished").map((event) => event._tag === "ModelCallFinished" && event.text))
        .toEqual(["Looking it up.", "Found a."])
    }))

  it.effect("a model stream that reuses a block id once the block has ended: no text is lost, the same chain as generate's", () =>
    Effect.gen(function*() {
      // ids identify a block only while it is open (as in the AI SDK's stream protocol)
      const whole = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("text", { text: "Let me check. " }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            Response.makePart("text", { text: "Checking now." }),
            finish("tool-calls")
          ]
          : [Response.makePart("text", { text: "Found a." }), finish("stop")]
      const streamedParts = (turn: number): ReadonlyArray<Response.AnyPart> =>
        turn === 0
          ? [
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Let me check. " }),
            Response.makePart("text-end", { id: "0" }),
            Response.makePart("tool-call", { id: "c1", name: "lookup", params: { q: "a", ms: 5 }, providerExecuted: false }),
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Checking now." }),
            Response.makePart("text-end", { id: "0" }),
            finish("tool-calls")
          ]
          : [
            Response.makePart("text-start", { id: "0" }),
            Response.makePart("text-delta", { id: "0", delta: "Found a." }),
            Response.makePart("text-end", { id: "0" }),
            finish("stop")
          ]
      const { plain, seen } = yield* generatedAndStreamed(partsModel(whole, streamedParts))
      expect(seen.filter((event) => event._tag === "ModelCallFinished").map((event) => event._tag === "ModelCallFinished" && event.text))
        .toEqual(["Let me check. Checking now.", "Found a."])
      expect(documentOf(last(seen))).toEqual(plain.document)
    }))
})

/** A model answering turn n with `whole(n)` from generate, and `streamed(n)` from stream. */
const partsModel = (
  whole: (turn: number) => ReadonlyArray<Response.AnyPart>,
  streamed: (turn: number) => ReadonlyArray<Response.AnyPart>
): Layer.Layer<ChatModel.ChatModel> =>
  Layer.sync(ChatModel.ChatModel, () => {
    let generated = 0
    let streamedTurns = 0
    return ChatModel.ChatModel.of({
      generate: () => Effect.sync(() => whole(generated++)),
      stream: () => Stream.suspend(() => Stream.fromIterable(streamed(streamedTurns++)))
    })
  })

/** The same run with Chain.run (generate) and Chain.stream (stream). */
const generatedAndStreamed = (modelLayer: Layer.Layer<ChatModel.ChatModel>) =>
  Effect.gen(function*() {
    const start = Chain.make({ user: "go", toolkit: basicToolkit })
    const plain = yield* settled(summarize(Chain.run(start, whileNeeds))).pipe(
      Effect.provide([modelLayer, makeHandlers().layer])
    )
    const seen = yield* events(Chain.stream(start, whileNeeds)).pipe(Effect.provide([modelLayer, makeHandlers().layer]))
    return { plain, seen }
  })

// -----------------------------------------------------------------------------
// Backpressure
// -----------------------------------------------------------------------------

/** An event without its duration (for comparing runs whose clocks differ). */
const untimed = (event: Event): unknown => {
  if ("durationMillis" in event) {
    const { durationMillis: _durationMillis, ...rest } = event
    return rest
  }
  return event
}

describe("a slow consumer", () => {
  // One tool call at a time, so the run's order of events does not depend on scheduling.
  const sequential = { ...whileNeeds, concurrency: 1 }
  const fastEvents = events(Chain.stream(observedStart, sequential)).pipe(
    Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
  )

  it.effect("with bufferSize 1, a consumer that yields on every event still gets every event, in order", () =>
    Effect.gen(function*() {
      const fast = yield* fastEvents
      const slow = yield* events(
        Chain.stream(observedStart, { ...sequential, bufferSize: 1 }).pipe(
          Stream.tap(() => Effect.repeat(Effect.yieldNow, { times: 20 }))
        )
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      expect(slow.map(untimed)).toEqual(fast.map(untimed))
      expect(slow.length).toBeGreaterThan(20)
    }))

  it.effect("with bufferSize 1, a consumer that takes a second per event: every event in order, the same chain", () =>
    Effect.gen(function*() {
      const fast = yield* fastEvents
      const slow = yield* events(
        Chain.stream(observedStart, { ...sequential, bufferSize: 1 }).pipe(Stream.tap(() => Effect.sleep("1 second")))
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      expect(slow.map(untimed)).toEqual(fast.map(untimed))
      expect(documentOf(last(slow))).toEqual(documentOf(last(fast)))
    }))

  it.effect("with unbounded concurrency and bufferSize 1, each call's events keep their order and none is lost", () =>
    Effect.gen(function*() {
      const fast = yield* events(Chain.stream(observedStart, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer])
      )
      const slow = yield* events(
        Chain.stream(observedStart, { ...whileNeeds, bufferSize: 1 }).pipe(Stream.tap(() => Effect.sleep("1 second")))
      ).pipe(Effect.provide([ChatModel.scripted(observedTurns).layer, makeHandlers().layer]))
      const key = (event: Event) => JSON.stringify(untimed(event))
      expect(slow.map(key).sort()).toEqual(fast.map(key).sort())
      const perCall = (events: ReadonlyArray<Event>) =>
        events.flatMap((event) => "id" in event ? [`${event.id} ${event._tag}`] : "call" in event ? [`#${event.call} ${key(event)}`] : [])
      for (const id of ["call_1_1", "call_1_2", "call_2_1", "call_2_2"]) {
        expect(perCall(slow).filter((line) => line.startsWith(id))).toEqual([`${id} ToolCallStarted`, `${id} ToolCallFinished`])
      }
      expect(perCall(slow).filter((line) => line.startsWith("#"))).toEqual(perCall(fast).filter((line) => line.startsWith("#")))
      expect(slow[0]._tag).toBe("RunStarted")
      expect(last(slow)._tag).toBe("RunFinished")
    }))

  it.effect("a duration measures the model call or the tool, not the time spent waiting for a slow consumer", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [lookup("a", 30), lookup("b", 10)], latency: "200 millis" },
        { toolCalls: [lookup("c", 70)], latency: "50 millis" },
        { text: "done" }
      ])
      const slow = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, bufferSize: 1 }).pipe(
          Stream.tap(() => Effect.sleep("1 second"))
        )
      ).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      const durations = slow.flatMap((event) =>
        event._tag === "ToolCallFinished" ? [`${event.id} ${event.durationMillis}ms`]
        : event._tag === "ModelCallFinished" && event.text === "" ? [`#${event.call} ${event.durationMillis}ms`]
        : []
      )
      expect(durations.sort()).toEqual(["#1 200ms", "#2 50ms", "call_1_1 30ms", "call_1_2 10ms", "call_2_1 70ms"])
    }))
})

/**
 * The chain's JSON document in a run's last event is a plain data field
 * holding what `Chain.encode` gives, in the Schema's field order, the same
 * through JSON, spreads, `structuredClone` and a frozen event, and a
 * snapshot: a context changed after the event does not change it.
 * `RunPaused`, `RunFinished` (with and without an output) and `RunFailed`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, RunEvent } from "../../src/index.ts"

const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Transfer, Lookup)
const handlers = toolkit.toLayer({ transfer: () => Effect.succeed("sent"), lookup: ({ q }) => Effect.succeed(`found ${q}`) })

const Verdict = Schema.Struct({ approved: Schema.Boolean })

/** Each way a run ends, with its script. */
const endings = {
  RunPaused: [{ toolCalls: [{ id: "t1", name: "transfer", params: { to: "Bob", amount: 300 } }] }],
  RunFinished: [{ toolCalls: [{ id: "l1", name: "lookup", params: { q: "tides" } }] }, { text: "High at noon." }],
  RunFailed: [{ toolCalls: [{ id: "l1", name: "lookup", params: { q: "tides" } }] }, { fail: "the model is down" }]
} as const

type Ending = keyof typeof endings

/** The run's last event through `Chain.stream`, and the chain `Chain.run` ends with on the same script. */
const lastEvent = (ending: Ending) =>
  Effect.gen(function*() {
    const chain = Chain.make({ user: "Check the tides, pay Bob", toolkit })
    // A failed run fails the stream after its last event.
    const seen: Array<RunEvent.RunEvent> = []
    yield* Chain.stream(chain, { mode: Mode.whileNeedsResponse }).pipe(
      Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
      Effect.ignore,
      Effect.provide(Layer.merge(ChatModel.scripted(endings[ending]).layer, handlers))
    )
    const ran = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
      Effect.map((outcome) => outcome.chain),
      Effect.catchTag("RunError", (error) => Effect.succeed(error.chain)),
      Effect.provide(Layer.merge(ChatModel.scripted(endings[ending]).layer, handlers))
    )
    const event = seen.at(-1)
    if (event === undefined) throw new Error("the stream ended with no event")
    return { event, document: yield* Chain.encode(ran) }
  })

const chainField = (event: object) => Object.getOwnPropertyDescriptor(event, "chain")

describe("Chain.stream: the chain's document in the last event", () => {
  it.effect.each([
    { ending: "RunPaused", keys: ["_tag", "reason", "chain"] },
    { ending: "RunFinished", keys: ["_tag", "reason", "text", "chain"] },
    { ending: "RunFailed", keys: ["_tag", "error", "message", "chain"] }
  ] as const)("$ending: made when read, then a plain field equal to Chain.encode's, in the Schema's order", ({ ending, keys }) =>
    Effect.gen(function*() {
      const { document, event } = yield* lastEvent(ending)
      expect(event._tag).toBe(ending)
      expect(Object.keys(event)).toEqual(keys)
      // A plain data field, as Node's util.inspect and console.log show it.
      expect(chainField(event)).toMatchObject({ value: document, enumerable: true })
      expect(chainField(event)?.get).toBeUndefined()
      // The event is the Schema's: it round-trips through JSON unchanged.
      const json = JSON.parse(JSON.stringify(event))
      expect(Schema.decodeUnknownSync(RunEvent.RunEvent)(json)).toEqual(event)
    }))

  it.effect.each(["spread", "JSON", "structuredClone", "frozen"] as const)("the document comes out whole through %s", (how) =>
    Effect.gen(function*() {
      const { document, event } = yield* lastEvent("RunFinished")
      const copy: unknown = how === "spread"
        ? { ...event }
        : how === "JSON"
        ? JSON.parse(JSON.stringify(event))
        : how === "structuredClone"
        ? structuredClone(event)
        : Object.freeze(event)
      expect(copy).toEqual({ _tag: "RunFinished", reason: "done", text: "High at noon.", chain: document })
      if (how === "frozen") expect((copy as { readonly chain: unknown }).chain).toBe((copy as { readonly chain: unknown }).chain)
    }))

  it.effect("RunFinished with an output: the document, then the output", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ id: "v1", name: "final_answer", params: { approved: true } }] }])
      const last = yield* Chain.stream(Chain.make({ user: "Approve?" }), { mode: Mode.whileNeedsResponse, output: Verdict }).pipe(
        Stream.runLast,
        Effect.provide(model.layer)
      )
      if (last._tag !== "Some") throw new Error("the stream ended with no event")
      const event = last.value
      expect(Object.keys(event)).toEqual(["_tag", "reason", "text", "chain", "output"])
      expect(event._tag === "RunFinished" && event.output).toEqual({ approved: true })
      const json = JSON.parse(JSON.stringify(event))
      expect(Object.keys(json)).toEqual(["_tag", "reason", "text", "chain", "output"])
      expect(json.chain).toMatchObject({ format: "loopwork/chain" })
    }))

  it.effect("a snapshot: a context changed after the event leaves its document as it was", () =>
    Effect.gen(function*() {
      const context: Record<string, string> = { ticket: "T-1" }
      const last = yield* Chain.stream(Chain.make({ user: "Hi", context }), { mode: Mode.whileNeedsResponse }).pipe(
        Stream.runLast,
        Effect.provide(ChatModel.scripted([{ text: "Hello." }]).layer)
      )
      if (last._tag !== "Some") throw new Error("the stream ended with no event")
      context.ticket = "changed after the run"
      expect((last.value as { readonly chain: { readonly context: unknown } }).chain.context).toEqual({ ticket: "T-1" })
    }))
})

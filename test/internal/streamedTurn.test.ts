/**
 * A streamed answer that is whole when asked (streamedTurn.ts): the scripted
 * model hands its streamed parts over as one array, and `Chain.stream`
 * reports the same deltas from it. A wrapper that replaces the service's
 * `stream` — in a spread copy, in place, through a prototype or by a proxy —
 * is read through its own stream, not the form it did not mean to keep, and
 * so is a model that has no such form. The same for `generate` and its
 * eager form (generateNow.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Stream } from "effect"
import { Prompt, Response } from "effect/ai"
import { Chain, ChatModel, Mode, type RunEvent } from "../../src/index.ts"
import { streamedTurn } from "../../src/internal/streamedTurn.ts"
import { generateNow } from "../../src/internal/generateNow.ts"
import * as Budget from "../../src/ensemble/internal/budget.ts"
import * as Parts from "../../src/internal/parts.ts"

const finish = Parts.responseFinish("stop", Parts.usage({}))

/** A turn's parts as a stream would send them: one delta per piece of text. */
const streamedText = (pieces: ReadonlyArray<string>): ReadonlyArray<Response.AnyPart> => [
  Response.makePart("text-start", { id: "t" }),
  ...pieces.map((delta) => Response.makePart("text-delta", { id: "t", delta })),
  Response.makePart("text-end", { id: "t" }),
  finish
]

/** The deltas and the final text of a drained `Chain.stream`. */
const watched = (layer: Layer.Layer<ChatModel.ChatModel>) =>
  Effect.gen(function*() {
    const events: Array<RunEvent.RunEvent> = []
    yield* Chain.stream(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
      Stream.runForEach((event) => Effect.sync(() => void events.push(event))),
      Effect.provide(layer)
    )
    const last = events.at(-1)
    return {
      deltas: events.flatMap((event) => event._tag === "TextDelta" ? [event.delta] : []),
      text: last?._tag === "RunFinished" ? last.text : undefined
    }
  })

const scripted = () => ChatModel.scripted([{ text: "Hello there, friend." }])

describe("a streamed answer that is whole when asked", () => {
  it.effect("the scripted model has one, and Chain.stream reports its deltas", () =>
    Effect.gen(function*() {
      const model = yield* Effect.provide(Effect.service(ChatModel.ChatModel), scripted().layer)
      expect(streamedTurn(model)).toBeTypeOf("function")
      expect(yield* watched(scripted().layer)).toEqual({ deltas: ["Hello ", "there, ", "friend."], text: "Hello there, friend." })
    }))

  it.effect("a wrapper that replaces stream is read through its own stream", () =>
    Effect.gen(function*() {
      const wrapped = Layer.effect(ChatModel.ChatModel)(Effect.map(Effect.service(ChatModel.ChatModel), (inner) =>
        ChatModel.ChatModel.of({
          ...inner,
          stream: () => Stream.fromIterable(streamedText(["Wrapped ", "answer."]))
        }))).pipe(Layer.provide(scripted().layer))
      const model = yield* Effect.provide(Effect.service(ChatModel.ChatModel), wrapped)
      expect(streamedTurn(model)).toBeUndefined()
      expect(yield* watched(wrapped)).toEqual({ deltas: ["Wrapped ", "answer."], text: "Wrapped answer." })
    }))

  it.effect("a model without one is read as a stream, chunk by chunk", () =>
    Effect.gen(function*() {
      const parts = streamedText(["One ", "two ", "three."])
      const plain = Layer.succeed(ChatModel.ChatModel, {
        info: { provider: "test", model: "plain" },
        generate: () => Effect.succeed([Parts.responseText("One two three."), finish]),
        // Two chunks: the loop reads past the first.
        stream: () => Stream.concat(Stream.fromIterable(parts.slice(0, 2)), Stream.fromIterable(parts.slice(2)))
      })
      expect(yield* watched(plain)).toEqual({ deltas: ["One ", "two ", "three."], text: "One two three." })
    }))

  /** Ways to replace a service's function without a spread. */
  const replacing = {
    "in place": <K extends "stream" | "generate">(inner: ChatModel.ChatModel["Service"], key: K, value: ChatModel.ChatModel["Service"][K]) =>
      Object.assign(inner, { [key]: value }),
    "through a prototype": <K extends "stream" | "generate">(inner: ChatModel.ChatModel["Service"], key: K, value: ChatModel.ChatModel["Service"][K]) =>
      Object.create(inner, { [key]: { value, enumerable: true } }) as ChatModel.ChatModel["Service"],
    "by a proxy": <K extends "stream" | "generate">(inner: ChatModel.ChatModel["Service"], key: K, value: ChatModel.ChatModel["Service"][K]) =>
      new Proxy(inner, { get: (target, property, receiver) => property === key ? value : Reflect.get(target, property, receiver) })
  } as const

  it.effect.each(Object.keys(replacing) as ReadonlyArray<keyof typeof replacing>)("stream replaced %s: read through that stream", (how) =>
    Effect.gen(function*() {
      const wrapped = Layer.effect(ChatModel.ChatModel)(Effect.map(Effect.service(ChatModel.ChatModel), (inner) =>
        replacing[how](inner, "stream", () => Stream.fromIterable(streamedText(["Wrapped ", "answer."]))))).pipe(
          Layer.provide(scripted().layer)
        )
      const model = yield* Effect.provide(Effect.service(ChatModel.ChatModel), wrapped)
      expect(streamedTurn(model)).toBeUndefined()
      expect(yield* watched(wrapped)).toEqual({ deltas: ["Wrapped ", "answer."], text: "Wrapped answer." })
    }))

  it.effect.each(Object.keys(replacing) as ReadonlyArray<keyof typeof replacing>)(
    "generate of a budget-counted model replaced %s: its own generate answers",
    (how) =>
      Effect.gen(function*() {
        const inner = yield* Effect.provide(Effect.service(ChatModel.ChatModel), scripted().layer)
        const counted = Budget.counted(Budget.make({ maxModelCalls: 5, maxDelegations: 0 }), inner)
        const replaced = replacing[how](counted, "generate", () => Effect.succeed([Parts.responseText("Replaced."), finish]))
        const request: ChatModel.GenerateRequest = { prompt: Prompt.make("Hi"), tools: [], toolChoice: "auto" }
        const parts = yield* generateNow(replaced, request)
        expect(parts.flatMap((part) => part.type === "text" ? [part.text] : [])).toEqual(["Replaced."])
      })
  )

  it.effect.each([
    { name: "throws on loopwork's symbol keys", throwsOn: (key: PropertyKey) => typeof key === "symbol" && String(key).includes("loopwork") },
    { name: "throws on reading stream", throwsOn: (key: PropertyKey) => key === "stream" }
  ])("a model whose property read $name: Chain.stream fails its call (ModelCallFailed), never a defect", ({ throwsOn }) =>
    Effect.gen(function*() {
      const strict = Layer.effect(ChatModel.ChatModel)(Effect.map(Effect.service(ChatModel.ChatModel), (inner) =>
        new Proxy(inner, {
          get: (target, key, receiver) => {
            if (throwsOn(key)) throw new Error(`no such property: ${String(key)}`)
            return Reflect.get(target, key, receiver)
          }
        }))).pipe(Layer.provide(scripted().layer))
      const exit = yield* Effect.exit(
        Chain.stream(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(Stream.runDrain, Effect.provide(strict))
      )
      if (Exit.isSuccess(exit)) throw new Error("the stream succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(Option.getOrThrow(Exit.findErrorOption(exit)).reason._tag).toBe("ModelCallFailed")
    }))
})

/**
 * `loopwork/testing`: `ScriptedModel.make` is the scripted model
 * (`ChatModel.scripted` stays as its deprecated alias, tested in
 * test/ChatModel.test.ts), `ScriptedModel.raw` answers exact parts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import { Prompt, Response } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode } from "loopwork"
import { ScriptedModel } from "loopwork/testing"

const request = (text: string): ChatModel.GenerateRequest => ({ prompt: Prompt.make(text), tools: [], toolChoice: "auto" })

const generate = (req: ChatModel.GenerateRequest) => Effect.flatMap(Effect.service(ChatModel.ChatModel), (m) => m.generate(req))

const streamAll = (req: ChatModel.GenerateRequest) =>
  Effect.flatMap(Effect.service(ChatModel.ChatModel), (m) => Stream.runCollect(m.stream(req)))

const call = (id: string, name: string) => Response.makePart("tool-call", { id, name, params: {}, providerExecuted: false })

describe("ScriptedModel.make", () => {
  it.effect("replays the script through Chain.run and records each request", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{ text: "Hello!" }])
      const outcome = yield* Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(model.layer)
      )
      expect(Chain.text(outcome.chain)).toBe("Hello!")
      expect(model.calls).toBe(1)
      expect(model.requests.length).toBe(1)
    }))

  it.effect("answers exactly like the deprecated ChatModel.scripted", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ScriptedModel.Turn> = [
        { text: "Looking", toolCalls: [{ name: "search", params: { query: "x" } }], usage: { inputTokens: 3, outputTokens: 2 } },
        (req, turn) => ({ text: `turn ${turn} saw ${req.prompt.content.length} message(s)` })
      ]
      const run = (model: ScriptedModel.ScriptedModel) =>
        Effect.all([generate(request("a")), generate(request("b"))]).pipe(Effect.provide(model.layer))
      expect(yield* run(ScriptedModel.make(turns))).toEqual(yield* run(ChatModel.scripted(turns)))
    }))

  it.effect("running out fails with ScriptExhausted, the class LoopError and ChatModel export", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(generate(request("Hi")).pipe(Effect.provide(ScriptedModel.make([]).layer)))
      expect(error).toBeInstanceOf(ScriptedModel.ScriptExhausted)
      expect(ScriptedModel.ScriptExhausted).toBe(LoopError.ScriptExhausted)
      expect(ChatModel.ScriptExhausted).toBe(LoopError.ScriptExhausted)
    }))

  it.effect("latency goes through Effect.sleep, so TestClock drives it", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.make([{ text: "late" }], { latency: "2 seconds" })
      const fiber = yield* Effect.forkChild(generate(request("Hi")).pipe(Effect.provide(model.layer)))
      yield* TestClock.adjust("1999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
    }))

  it.effect("turns that are not an array fail each call with a message naming ScriptedModel.make", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(generate(request("Hi")).pipe(Effect.provide(ScriptedModel.make(null as never).layer)))
      expect(error._tag).toBe("ModelCallFailed")
      expect(error.message).toContain("ScriptedModel.make: turns must be an array")
    }))
})

describe("ScriptedModel.raw", () => {
  it.effect("answers each turn's exact parts plus a finish, then \"done\"", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.raw([[call("same", "a"), call("same", "b")]])
      const [first, second] = yield* Effect.all([generate(request("1")), generate(request("2"))]).pipe(
        Effect.provide(model.layer)
      )
      expect(first.map((part) => part.type)).toEqual(["tool-call", "tool-call", "finish"])
      expect(first.flatMap((part) => part.type === "tool-call" ? [part.id] : [])).toEqual(["same", "same"])
      expect(second.map((part) => (part.type === "text" ? part.text : part.type))).toEqual(["done", "finish"])
      expect(model.calls).toBe(2)
      expect(model.requests.map((r) => r.prompt)).toEqual([Prompt.make("1"), Prompt.make("2")])
    }))

  it.effect("a fresh count per layer build; stream emits the same parts", () =>
    Effect.gen(function*() {
      const model = ScriptedModel.raw([[call("c1", "a")]])
      const generated = yield* generate(request("x")).pipe(Effect.provide(model.layer))
      const streamed = yield* streamAll(request("x")).pipe(Effect.provide(model.layer))
      expect(streamed).toEqual(generated)
      expect(model.calls).toBe(1)
    }))

  it.effect("a JavaScript caller's bad turns fail the call with ModelCallFailed, never a defect", () =>
    Effect.gen(function*() {
      const notArray = yield* Effect.flip(generate(request("x")).pipe(Effect.provide(ScriptedModel.raw(null as never).layer)))
      expect(notArray.message).toContain("ScriptedModel.raw: turns must be an array")
      const badTurn = yield* Effect.flip(generate(request("x")).pipe(Effect.provide(ScriptedModel.raw([5] as never).layer)))
      expect(badTurn.message).toContain("ScriptedModel.raw: turn 1 must be an array")
    }))
})

/**
 * A model's answer whose parts have the right types but wrong fields — a
 * text or reasoning part whose text is not a string, a streamed delta that
 * is not text, a finish reason effect/ai does not have — ends the call with
 * a typed `ModelCallFailed` naming the part, whether the answer comes whole
 * or streamed: nothing of it reaches the chain (whose document must
 * serialise) or the run's events (every one serialises).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Stream } from "effect"
import { Chain, ChatModel, Mode, type RunEvent } from "../../src/index.ts"

/** A ChatModel written in JavaScript that answers `parts`, whole or as a stream. */
const answering = (parts: ReadonlyArray<unknown>) =>
  Layer.succeed(ChatModel.ChatModel, {
    generate: () => Effect.succeed(parts),
    stream: () => Stream.fromIterable(parts)
  } as unknown as ChatModel.ChatModel["Service"])

const finish = { type: "finish", reason: "stop", usage: {} }

const rows: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, RegExp]> = [
  ["a text part whose text is a number", [{ type: "text", text: 5 }, finish], /part 1 is a text part whose text is not a string/],
  ["a text part whose text is an object", [{ type: "text", text: { a: 1 } }, finish], /text is not a string/],
  ["a reasoning part whose text is a bigint", [{ type: "reasoning", text: 1n }, finish], /reasoning part whose text is not a string/],
  ["a text delta that is a bigint", [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: 1n }, { type: "text-end", id: "t" }, finish], /part 2 is a text-delta part whose delta is not a string/],
  ["a text delta whose id is a symbol", [{ type: "text-delta", id: Symbol("t"), delta: "x" }, finish], /text-delta part whose id is not a string/],
  ["a finish reason effect/ai does not have", [{ type: "text", text: "hi" }, { type: "finish", reason: "Bearer sk-proj-0123456789abcdefghij", usage: {} }], /finish part with a reason effect\/ai does not have/]
]

describe("an answer with a part whose fields are wrong fails the call, typed", () => {
  for (const [name, parts, says] of rows) {
    it.effect(`${name}: Chain.run fails with ModelCallFailed`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Chain.run(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(answering(parts))))
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
        expect(error?._tag === "Fail" ? error.error : undefined).toMatchObject({ _tag: "RunError" })
        const reason = error?._tag === "Fail" ? (error.error as { readonly reason?: { readonly _tag?: string; readonly message?: string } }).reason : undefined
        expect(reason?._tag).toBe("ModelCallFailed")
        expect(reason?.message).toMatch(says)
        // The paused or failed chain it carries still encodes and serialises.
        const chain = error?._tag === "Fail" ? (error.error as { readonly chain?: Chain.Chain }).chain : undefined
        if (chain !== undefined) expect(() => JSON.stringify(Effect.runSync(Chain.encode(chain)))).not.toThrow()
      }))

    it.effect(`${name}: Chain.stream ends with RunFailed, and every event serialises`, () =>
      Effect.gen(function*() {
        const events: Array<RunEvent.RunEvent> = []
        yield* Chain.stream(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }).pipe(
          Stream.runForEach((event) => Effect.sync(() => events.push(event))),
          Effect.provide(answering(parts)),
          Effect.exit
        )
        expect(events.map((event) => event._tag)).toContain("RunFailed")
        expect(events.filter((event) => event._tag === "TextDelta" || event._tag === "ModelCallFinished")).toEqual([])
        for (const event of events) expect(() => JSON.stringify(event)).not.toThrow()
      }))
  }
})

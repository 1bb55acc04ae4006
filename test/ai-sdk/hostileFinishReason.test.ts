/**
 * A provider's finish reason is hostile input (helper-55's probe): a `unified` reason outside
 * effect/ai's set (made up, a credential, not a string), a v2-style bare string from a model that
 * claims v4, or a finish reason that is not one at all. The bridge maps only effect/ai's reasons: a
 * known one is kept, anything else is "other", and reading it never throws; a finish reason that is
 * neither an object nor a string (or none) fails the call with a typed `ModelCallFailed`, never a
 * defect. So a chain that pauses or ends on such a response still encodes, `RunPaused` carries it,
 * and no made-up text reaches the events or spans.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import { AiSdkModel } from "../../src/ai-sdk/index.ts"
import { Chain } from "../../src/index.ts"
import { request } from "../support/aiSdk.ts"
import { recording } from "../support/recordingTracer.ts"
import { deleteCall, kindOf, modelCallFailure, raw, runWith, streamWith, usage } from "./support/rawProvider.ts"

const secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a"

/** A finish reason, as a provider sent it, and the one the bridge maps it to. */
const rows: ReadonlyArray<readonly [name: string, finishReason: unknown, mapped: string]> = [
  ["a made-up unified reason", { unified: "bogus", raw: "x" }, "other"],
  ["a credential as the unified reason", { unified: `Bearer ${secret}`, raw: secret }, "other"],
  ["a unified reason that is not a string", { unified: 5, raw: "x" }, "other"],
  ["no unified reason", { raw: "stop" }, "other"],
  ["a unified reason whose getter throws", { get unified(): string { throw new Error("getter") }, raw: "x" }, "other"],
  ["a bare known reason (v2's shape)", "length", "length"],
  ["a bare made-up reason", "bogus", "other"]
]

/** A finish reason that is not one: neither an object nor a string. */
const unreadable: ReadonlyArray<readonly [name: string, finishReason: unknown]> = [["a number", 7], ["null", null], ["missing", undefined]]

/** The reason of the finish part among `parts`. */
const finishOf = (parts: ReadonlyArray<{ readonly type: string }>): unknown => {
  const finish = parts.find((part) => part.type === "finish")
  return finish !== undefined && "reason" in finish ? finish.reason : undefined
}

describe("a provider's finish reason outside effect/ai's set", () => {
  it.effect.each(rows)("generate: %s is mapped to a known reason", ([, finishReason, mapped]) =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ generate: () => ({ content: [], finishReason, usage, warnings: [] }) }]))
      const parts = yield* service.generate(request("hi"))
      expect(finishOf(parts)).toBe(mapped)
    }))

  it.effect.each(rows)("stream: %s is mapped to a known reason", ([, finishReason, mapped]) =>
    Effect.gen(function*() {
      const finish = finishReason === undefined ? { type: "finish", usage } : { type: "finish", finishReason, usage }
      const service = yield* AiSdkModel.make(raw([{ stream: [finish] }]))
      const parts = yield* Stream.runCollect(service.stream(request("hi")))
      expect(finishOf(parts)).toBe(mapped)
    }))

  it.effect("generate: a finish reason that is a number fails the call, typed and not retried", () =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ generate: () => ({ content: [], finishReason: 7, usage, warnings: [] }) }]))
      const failure = modelCallFailure(yield* Effect.exit(service.generate(request("hi"))))
      expect([failure.retryable, failure.description]).toEqual([false, expect.stringMatching(/finish reason is number/)])
    }))

  it.effect.each(unreadable)("stream: a finish part whose finish reason is %s fails the call, typed and not retried", ([, finishReason]) =>
    Effect.gen(function*() {
      const finish = finishReason === undefined ? { type: "finish", usage } : { type: "finish", finishReason, usage }
      const service = yield* AiSdkModel.make(raw([{ stream: [finish] }]))
      const exit = yield* Effect.exit(Stream.runCollect(service.stream(request("hi"))))
      expect(kindOf(exit)).toBe("fail")
      const failure = modelCallFailure(exit)
      expect([failure.retryable, failure.description]).toEqual([false, expect.stringMatching(/cannot be read: the finish reason is/)])
    }))

  it.effect("Chain.run pauses on an approval answered with a made-up reason: the paused chain encodes", () =>
    Effect.gen(function*() {
      const model = raw([{ generate: () => ({ content: [deleteCall], finishReason: { unified: "bogus", raw: "x" }, usage, warnings: [] }) }])
      const exit = yield* runWith(model)
      if (!Exit.isSuccess(exit) || exit.value._tag !== "Pause") throw new Error("expected a pause")
      expect(Exit.isSuccess(yield* Effect.exit(Chain.encode(exit.value.chain)))).toBe(true)
    }))

  it.effect("Chain.run ends on a v2-style bare \"stop\" from a v4 model: the chain encodes", () =>
    Effect.gen(function*() {
      const model = raw([{ generate: () => ({ content: [{ type: "text", text: "hi" }], finishReason: "stop", usage, warnings: [] }) }])
      const exit = yield* runWith(model)
      if (!Exit.isSuccess(exit)) throw new Error("expected the run to end")
      expect(Exit.isSuccess(yield* Effect.exit(Chain.encode(exit.value.chain)))).toBe(true)
    }))

  it.effect("Chain.stream: RunPaused carries the paused chain, and ModelCallFinished says \"other\"", () =>
    Effect.gen(function*() {
      const model = raw([{ stream: [deleteCall, { type: "finish", finishReason: { unified: "bogus", raw: "x" }, usage }] }])
      const { events } = yield* streamWith(model)
      const paused = events.find((event) => event._tag === "RunPaused")
      const finished = events.find((event) => event._tag === "ModelCallFinished")
      expect(paused?._tag === "RunPaused" ? paused.chain : null).not.toBeNull()
      expect(finished?._tag === "ModelCallFinished" ? finished.finishReason : undefined).toBe("other")
    }))

  it.effect("a credential as the finish reason reaches neither the events nor the spans", () =>
    Effect.gen(function*() {
      const model = raw([{
        stream: [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "hi" },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: `Bearer ${secret}`, raw: secret }, usage }
        ]
      }])
      const tracer = recording()
      const { events } = yield* streamWith(model).pipe(Effect.provide(tracer.layer))
      const finished = events.find((event) => event._tag === "ModelCallFinished")
      expect(finished?._tag === "ModelCallFinished" ? finished.finishReason : undefined).toBe("other")
      const spanAttributes = tracer.spans.flatMap((span) => [...span.attributes].map(([, value]) => JSON.stringify(value)))
      expect(JSON.stringify(events)).not.toContain(secret)
      expect(spanAttributes.join("\n")).not.toContain(secret)
      expect(spanAttributes.join("\n")).toContain("other")
    }))
})

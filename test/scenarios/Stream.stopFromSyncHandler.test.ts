/**
 * A synchronous handler that interrupts the round's stop signal (`StopSignal.interrupt` in its
 * `Effect.sync`) in a watched run: every call of the round is reported started and then finished
 * "interrupted", in the order the calls settle. A call whose handler settles at once is reported finished
 * before the next call starts (before 2026-11-27, eighth session, a synchronous handler ran on a fiber of
 * its own, and the interrupting call was reported finished after the others).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, StopSignal } from "../../src/index.ts"
import { events, row } from "../support/stream.ts"

const S = Tool.make("s", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const A = Tool.make("a", { parameters: Schema.Struct({ q: Schema.String, ms: Schema.Number }), success: Schema.String })
const Stop = Tool.make("stop", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(S, A, Stop)

const handlers = (signal: StopSignal.StopSignal) =>
  toolkit.toLayer({
    s: ({ q }) => Effect.sync(() => `s ${q}`),
    a: ({ ms, q }) => Effect.as(Effect.sleep(ms), `a ${q}`),
    stop: () =>
      Effect.sync(() => {
        Effect.runSync(StopSignal.interrupt(signal))
        return "stopped"
      })
  })

const toolRows = (calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) =>
  Effect.gen(function*() {
    const signal = yield* StopSignal.make
    const model = ChatModel.scripted([{ toolCalls: calls }, { text: "ok" }])
    const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, stop: signal })).pipe(
      Effect.provide([model.layer, handlers(signal)])
    )
    return seen.map(row).filter((line) => line.startsWith("ToolCall") || line.startsWith("RunPaused"))
  })

describe("a synchronous handler interrupting the stop signal in a watched run", () => {
  it.effect("the first call interrupts: it is reported finished before the next call starts", () =>
    Effect.gen(function*() {
      const rows = yield* toolRows([{ name: "stop", params: {} }, { name: "s", params: { q: "x" } }, { name: "a", params: { q: "y", ms: 40 } }])
      expect(rows).toEqual([
        "ToolCallStarted stop#call_1_1 {}",
        "ToolCallFinished stop#call_1_1 interrupted (no result) 0ms",
        `ToolCallStarted s#call_1_2 {"q":"x"}`,
        "ToolCallFinished s#call_1_2 interrupted (no result) 0ms",
        `ToolCallStarted a#call_1_3 {"q":"y","ms":40}`,
        "ToolCallFinished a#call_1_3 interrupted (no result) 0ms",
        "RunPaused StopRequested"
      ])
    }))

  it.effect("the second call interrupts after an asynchronous one: the calls are reported finished as they settle", () =>
    Effect.gen(function*() {
      const rows = yield* toolRows([{ name: "a", params: { q: "y", ms: 40 } }, { name: "stop", params: {} }, { name: "s", params: { q: "x" } }])
      expect(rows).toEqual([
        `ToolCallStarted a#call_1_1 {"q":"y","ms":40}`,
        "ToolCallStarted stop#call_1_2 {}",
        "ToolCallFinished a#call_1_1 interrupted (no result) 0ms",
        "ToolCallFinished stop#call_1_2 interrupted (no result) 0ms",
        `ToolCallStarted s#call_1_3 {"q":"x"}`,
        "ToolCallFinished s#call_1_3 interrupted (no result) 0ms",
        "RunPaused StopRequested"
      ])
    }))
})

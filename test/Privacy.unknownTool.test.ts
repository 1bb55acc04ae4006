/**
 * A tool name the model invents is the model's text (helper-33's probe):
 * with `Privacy.omitContent`, a run that fails on an unknown tool says that
 * a tool call failed, not which name the model wrote.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, type RunEvent } from "../src/index.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)

describe("an unknown tool's name under Privacy.omitContent", () => {
  it.effect("a failed run's message does not quote it", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "Jane_Doe_1961-07-14", params: { q: "x" } }] }, { text: "ok" }])
      const events: Array<RunEvent.RunEvent> = []
      yield* Stream.runForEach(
        Chain.stream(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse, onToolFailure: { "unknown-tool": "fail" } }),
        (event) => Effect.sync(() => void events.push(event))
      ).pipe(Effect.ignore, Effect.provide([model.layer, toolkit.toLayer({ lookup: () => Effect.succeed("ok") })]), Privacy.omitContent)
      const failed = events.flatMap((event) => event._tag === "RunFailed" ? [event.message] : [])
      expect(failed).toEqual(["A tool call failed (unknown-tool): details omitted (Privacy.OmitContent)"])
    }))
})

/**
 * A provider's usage is hostile input (helper-32's probe): negative token counts, which a proxy or
 * a hostile OpenAI-compatible server can send (the client's schema accepts any number), reach
 * neither ModelCallFinished events nor gen_ai.usage.* span attributes, where they would offset sums.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, Mode, type RunEvent } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { recording } from "../support/recordingTracer.ts"

describe("hostile usage over the AI SDK bridge", () => {
  it.live("negative token counts are left out of events and spans", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "hi", usage: { input: -1_000_000, output: -5 } }])
      const llm = ChatModel.fromAiSdk(createOpenAI({ baseURL: server.baseURL, apiKey: "test" }).chat("gpt-test"))
      const tracer = recording()
      const events: Array<RunEvent.RunEvent> = []
      yield* Stream.runForEach(Chain.stream(Chain.make({ user: "hi" }), { mode: Mode.whileNeedsResponse }), (e) =>
        Effect.sync(() => void events.push(e))).pipe(Effect.provide([llm, tracer.layer]))
      const finished = events.find((e) => e._tag === "ModelCallFinished") as RunEvent.RunEvent & { usage: Record<string, unknown> }
      const counts = Object.values(finished.usage).filter((n) => typeof n === "number")
      expect(counts.filter((n) => (n as number) < 0)).toEqual([])
      const attributes = tracer.spans.flatMap((s) => [...s.attributes].filter(([k]) => k.startsWith("gen_ai.usage")))
      expect(attributes.filter(([, v]) => typeof v === "number" && v < 0)).toEqual([])
    }))
})

/**
 * The response's id, model and time through the AI SDK bridge
 * (src/ai-sdk/internal/fromProvider.ts): the provider result's `response`
 * (whole responses) and its `response-metadata` stream part become effect/ai's
 * `response-metadata` part, from which a traced run's `chat` span takes
 * `gen_ai.response.id` and `gen_ai.response.model`.
 * - over HTTP to the local OpenAI-compatible server (test/support/openaiServer.ts),
 *   with the real `@ai-sdk/openai` 2.x (spec v2), 3.x (v3) and 4.x (v4)
 *   clients, Chat Completions and Responses, whole and streamed: the part the
 *   ChatModel answers with;
 * - end to end, for each version: the `chat` span effect's OTLP exporter sends
 *   to a local collector (test/telemetry/collector.ts), through `Chain.run`
 *   and `Chain.stream`;
 * - hostile values from a provider: a huge id and a model id holding a
 *   credential are bounded and redacted; values that are not strings or not
 *   valid dates are left out; a response reporting nothing adds no part.
 */
import { createOpenAI as createV4 } from "@ai-sdk/openai"
import { createOpenAI as createV2 } from "@ai-sdk/openai-v2"
import { createOpenAI as createV3 } from "@ai-sdk/openai-v3"
import type { LanguageModelV4ResponseMetadata } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Stream } from "effect"
import type { Response } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, Mode } from "../../src/index.ts"
import { fake, request, serviceOf, stop, usage } from "../support/aiSdk.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import * as Collector from "../telemetry/collector.ts"

type Api = "chat" | "responses"

const clients = {
  v2: createV2,
  v3: createV3,
  v4: createV4
} as const
type Version = keyof typeof clients
const versions: ReadonlyArray<Version> = ["v2", "v3", "v4"]

/** The real client of `version` for `api`, pointed at `server`. */
const modelOf = (version: Version, server: OpenAiServer.OpenAiServer, api: Api): AiSdkModel.LanguageModel => {
  const provider = clients[version]({ baseURL: server.baseURL, apiKey: "test" })
  return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
}

/** The `response-metadata` parts of a reply, as plain data. */
const metadataOf = (parts: Iterable<Response.AnyPart>) =>
  [...parts].flatMap((part) =>
    part.type === "response-metadata"
      ? [{
        id: part.id,
        modelId: part.modelId,
        timestamp: part.timestamp === undefined ? undefined : DateTime.toEpochMillis(part.timestamp)
      }]
      : []
  )

/** What the local server reports for its first answer (`created` is fixed at 1 700 000 000 s). */
const reported = (api: Api) => ({
  id: api === "chat" ? "chatcmpl-1" : "resp_1",
  modelId: "gpt-test",
  timestamp: 1_700_000_000_000
})

describe("over HTTP: the ChatModel's reply carries the response's id, model and time", () => {
  for (const version of versions) {
    for (const api of ["chat", "responses"] as const) {
      for (const how of ["generate", "stream"] as const) {
        it.live(`${version}, ${api}, ${how}`, () =>
          Effect.gen(function*() {
            const server = yield* OpenAiServer.make([{ text: "Hello there." }])
            const model = yield* AiSdkModel.make(modelOf(version, server, api))
            const parts = how === "generate"
              ? yield* model.generate(request("Hi"))
              : yield* Stream.runCollect(model.stream(request("Hi")))
            expect(metadataOf(parts)).toEqual([reported(api)])
          }).pipe(Effect.scoped))
      }
    }
  }
})

// -----------------------------------------------------------------------------
// The chat span, exported
// -----------------------------------------------------------------------------

/** The chat spans the collector received for a run of `how` on `version`'s Chat Completions model. */
const chatSpans = (version: Version, how: "run" | "stream") =>
  Effect.gen(function*() {
    const server = yield* OpenAiServer.make([{ text: "Hello there." }])
    const collector = yield* Collector.make
    const layer = ChatModel.fromAiSdk(modelOf(version, server, "chat"))
    const chain = Chain.make({ user: "Hi" })
    const options = { mode: Mode.whileNeedsResponse }
    const run = how === "run" ? Effect.asVoid(Chain.run(chain, options)) : Stream.runDrain(Chain.stream(chain, options))
    yield* Effect.andThen(run, Collector.exported).pipe(
      Effect.provide(layer),
      Effect.provide(Collector.layer(collector))
    )
    return collector.spans.filter((span) => span.name === "chat gpt-test")
  }).pipe(Effect.scoped)

describe("end to end: the chat span of a fromAiSdk model has gen_ai.response.id and gen_ai.response.model", () => {
  for (const version of versions) {
    for (const how of ["run", "stream"] as const) {
      it.live(`${version}, Chain.${how}`, () =>
        Effect.gen(function*() {
          const spans = yield* chatSpans(version, how)
          expect(spans.map((span) => span.attributes)).toMatchObject([{
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-test",
            "gen_ai.response.id": "chatcmpl-1",
            "gen_ai.response.model": "gpt-test",
            "gen_ai.response.finish_reasons": ["stop"]
          }])
        }))
    }
  }
})

// -----------------------------------------------------------------------------
// Hostile values
// -----------------------------------------------------------------------------

const secret = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"
const hostile = {
  id: "r".repeat(100_000),
  modelId: `gpt-test ${secret}`,
  timestamp: new Date(Number.NaN)
}

const checkBounded = (parts: ReadonlyArray<Response.AnyPart>) => {
  const [metadata] = metadataOf(parts)
  expect(metadata?.id?.length).toBeLessThanOrEqual(257)
  expect(metadata?.id?.startsWith("r".repeat(256))).toBe(true)
  expect(metadata?.modelId).not.toContain(secret)
  expect(metadata?.modelId).toContain("[REDACTED]")
  expect(metadata?.timestamp).toBeUndefined()
}

describe("hostile values from the provider", () => {
  it("whole responses: a huge id is cut to 256 characters, a credential in the model id redacted, an invalid date left out", () => {
    checkBounded(AiSdkModel.fromProviderContent([], stop, usage, hostile))
  })

  it("whole responses: no part when the response reports nothing usable (absent, empty, not strings, not a Date)", () => {
    const nothing = { id: "", modelId: 42, timestamp: "2024-01-01" } as unknown as LanguageModelV4ResponseMetadata
    for (const response of [undefined, {}, nothing]) {
      expect(AiSdkModel.fromProviderContent([], stop, usage, response).map((part) => part.type)).toEqual(["finish"])
    }
  })

  it.effect("streams: the response-metadata part is bounded the same way", () =>
    Effect.gen(function*() {
      const model = fake([{
        stream: [
          { type: "response-metadata", ...hostile },
          { type: "finish", finishReason: stop, usage }
        ]
      }])
      checkBounded(yield* Stream.runCollect((yield* serviceOf(model)).stream(request("Hi"))))
    }))
})

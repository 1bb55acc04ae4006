/**
 * `ChatModel.fromAiSdk` with the three provider specifications, end to end
 * over HTTP to the local OpenAI-compatible server: the real `@ai-sdk/openai`
 * 2.x (spec v2, `ai` 5), 3.x (v3, `ai` 6) and 4.x (v4, `ai` 7) clients,
 * installed side by side under npm aliases. For each version and API
 * (Chat Completions, Responses): a two-round tool loop through `Chain.run`
 * and `Chain.stream` ends in the same chain as with v4; the tool results sent
 * back are the same; usage and the finish reason of a response are the same;
 * a 429 is the same `ModelCallFailed`. And the type check: the three
 * versions' models are accepted (their own nested `@ai-sdk/provider` types
 * included), anything else is not.
 */
import { createOpenAI as createV4 } from "@ai-sdk/openai"
import { createOpenAI as createV2 } from "@ai-sdk/openai-v2"
import { createOpenAI as createV3 } from "@ai-sdk/openai-v3"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode } from "../../src/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"

const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number })
})
const toolkit = Toolkit.make(GetWeather)
const handlers = toolkit.toLayer({ get_weather: ({ city }) => Effect.succeed({ city, celsius: city === "Paris" ? 21 : 15 }) })

type Version = "v2" | "v3" | "v4"
type Api = "chat" | "responses"
const create = { v2: createV2, v3: createV3, v4: createV4 } as const

const modelOf = (version: Version, api: Api, server: OpenAiServer.OpenAiServer) => {
  const provider = create[version]({ baseURL: server.baseURL, apiKey: "test" })
  return api === "chat" ? provider.chat("gpt-test") : provider.responses("gpt-test")
}

const script: ReadonlyArray<OpenAiServer.ServerTurn> = [
  { toolCalls: [{ id: "c1", name: "get_weather", arguments: { city: "Paris" } }], usage: { input: 12, output: 7 } },
  { toolCalls: [{ id: "c2", name: "get_weather", arguments: { city: "Lyon" } }] },
  { text: "Paris 21, Lyon 15.", usage: { input: 30, output: 9 } }
]

/** A loop of two tool rounds and an answer, with `run` or `stream`: the chain's messages as JSON and the tool results the server got. */
const loop = (version: Version, api: Api, how: "run" | "stream") =>
  Effect.gen(function*() {
    const server = yield* OpenAiServer.make(script)
    const layer = ChatModel.fromAiSdk(modelOf(version, api, server))
    const chain = Chain.make({ user: "Weather in Paris and Lyon?", toolkit })
    const options = { mode: Mode.whileNeedsResponse }
    const final = how === "run"
      ? (yield* Chain.run(chain, options).pipe(Effect.provide([layer, handlers]))).chain
      : yield* Chain.stream(chain, options).pipe(
        Stream.runCollect,
        Effect.flatMap((events) => {
          const last = events.at(-1)
          return last?._tag === "RunFinished" ? Chain.decode(last.chain, { toolkit }) : Effect.die(new Error("no RunFinished"))
        }),
        Effect.provide([layer, handlers])
      )
    const sentResults = server.requests.map((request) => JSON.stringify(request.body).match(/celsius[^,}]*\d+/g))
    return { messages: JSON.parse(JSON.stringify(Prompt.fromMessages(final.messages))) as unknown, text: Chain.text(final), sentResults }
  })

const versions: ReadonlyArray<Version> = ["v2", "v3", "v4"]
const apis: ReadonlyArray<Api> = ["chat", "responses"]

describe("fromAiSdk accepts provider specifications v2, v3 and v4", () => {
  for (const api of apis) {
    it.live(`${api}: run and stream end in the same chain, with the same tool results sent, for every version`, () =>
      Effect.gen(function*() {
        const reference = yield* loop("v4", api, "run")
        expect(reference.text).toBe("Paris 21, Lyon 15.")
        expect(reference.sentResults.slice(1).every((found) => found !== null)).toBe(true)
        for (const version of versions) {
          for (const how of ["run", "stream"] as const) {
            expect({ version, how, ...(yield* loop(version, api, how)) }).toEqual({ version, how, ...reference })
          }
        }
      }))

    it.live(`${api}: usage and finish reason of a response are the same for every version`, () =>
      Effect.gen(function*() {
        const finishes = []
        for (const version of versions) {
          const server = yield* OpenAiServer.make([script[0]!, script[2]!])
          const model = yield* AiSdkModel.make(modelOf(version, api, server))
          const request = { prompt: Prompt.make("Hi"), tools: [GetWeather], toolChoice: "auto" as const }
          for (const parts of [yield* model.generate(request), yield* Stream.runCollect(model.stream(request))]) {
            const finish = parts.find((part) => part.type === "finish")
            finishes.push({
              version,
              reason: finish?.type === "finish" ? finish.reason : undefined,
              input: finish?.type === "finish" ? finish.usage.inputTokens.total : undefined,
              output: finish?.type === "finish" ? finish.usage.outputTokens.total : undefined,
              usage: finish?.type === "finish" ? { ...finish.usage.inputTokens, ...finish.usage.outputTokens } : undefined
            })
          }
        }
        expect(finishes.map(({ usage: _, ...rest }) => rest)).toEqual(versions.flatMap((version) => [
          { version, reason: "tool-calls", input: 12, output: 7 },
          { version, reason: "stop", input: 30, output: 9 }
        ]))
        // The whole usage (cache and reasoning counts included) is v4's for every version.
        const v4 = finishes.filter((finish) => finish.version === "v4").map((finish) => finish.usage)
        for (const version of versions) {
          expect(finishes.filter((finish) => finish.version === version).map((finish) => finish.usage)).toEqual(v4)
        }
      }))

    it.live(`${api}: a 429 is the same ModelCallFailed for every version`, () =>
      Effect.gen(function*() {
        for (const version of versions) {
          const server = yield* OpenAiServer.make([{ status: 429, headers: { "retry-after-ms": "60" } }])
          const exit = yield* Effect.exit(
            Chain.run(Chain.make({ user: "Hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
              Effect.provide([ChatModel.fromAiSdk(modelOf(version, api, server)), handlers])
            )
          )
          const failure = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          const reason = failure?._tag === "Fail" && failure.error._tag === "RunError" ? failure.error.reason : undefined
          expect(reason).toBeInstanceOf(LoopError.ModelCallFailed)
          const failed = reason as LoopError.ModelCallFailed
          expect({ version, status: failed.status, retryable: failed.retryable, after: failed.retryAfterMillis })
            .toEqual({ version, status: 429, retryable: true, after: 60 })
        }
      }))
  }

  it.effect("anything else is refused with InvalidInput naming the versions", () =>
    Effect.gen(function*() {
      for (const model of [{ specificationVersion: "v1" }, {}, null, "gpt-4"]) {
        const error = yield* Effect.flip(AiSdkModel.make(model as never))
        expect(error._tag).toBe("InvalidInput")
        expect(error.message).toContain("v2, v3 or v4")
      }
    }))

  it("types: the three versions' models are accepted, others are not", () => {
    const v2 = createV2({ apiKey: "x" }).chat("m")
    const v3 = createV3({ apiKey: "x" }).chat("m")
    const v4 = createV4({ apiKey: "x" }).chat("m")
    const accepted = [ChatModel.fromAiSdk(v2), ChatModel.fromAiSdk(v3), ChatModel.fromAiSdk(v4)]
    expect(accepted).toHaveLength(3)
    // @ts-expect-error: not a language model of an accepted specification
    expect(() => ChatModel.fromAiSdk({ specificationVersion: "v1", provider: "p", modelId: "m" })).not.toThrow()
    // @ts-expect-error: a plain object is not a language model
    expect(() => ChatModel.fromAiSdk({})).not.toThrow()
  })
})

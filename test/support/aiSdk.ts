/**
 * Fixtures of the AI SDK bridge tests (test/ai-sdk/): a hand-written fake `LanguageModelV4` that
 * records its calls and answers from a script (whole responses or stream parts), tools, and views of
 * the provider prompt it received. No HTTP; every timing on `TestClock`.
 */
import { APICallError } from "@ai-sdk/provider"
import type {
LanguageModelV4,
LanguageModelV4CallOptions,
LanguageModelV4Content,
LanguageModelV4FinishReason,
LanguageModelV4GenerateResult,LanguageModelV4StreamPart,
LanguageModelV4StreamResult,
LanguageModelV4Usage
} from "@ai-sdk/provider"
import { Effect, Exit, Fiber, Schema } from "effect"
import { Prompt, Response, Tool, Toolkit } from "effect/ai"
import { AiSdkModel, ChatModel } from "../../src/ai-sdk/index.ts"
import { LoopError } from "../../src/index.ts"

// -----------------------------------------------------------------------------
// The fake model
// -----------------------------------------------------------------------------

/** One scripted provider call. */
export type FakeTurn =
  /** `doGenerate` resolves with this content (finish "stop" and `usage` by default). */
  | {
    readonly content: ReadonlyArray<LanguageModelV4Content>
    readonly finishReason?: LanguageModelV4FinishReason
    readonly usage?: LanguageModelV4Usage
  }
  /** `doGenerate` / `doStream` rejects with this. */
  | { readonly throws: unknown }
  /**
   * `doStream` resolves with a stream of these parts, which then closes (or errors with `error`);
   * with `pace`, each part is sent once the promise it returns resolves.
   */
  | {
    readonly stream: ReadonlyArray<LanguageModelV4StreamPart>
    readonly error?: unknown
    readonly pace?: () => Promise<void>
  }
  /** Never answers; rejects when the call's AbortSignal fires. */
  | { readonly hang: true }

export interface FakeModel extends LanguageModelV4 {
  /** The options of every call, in order (AbortSignal included). */
  readonly calls: ReadonlyArray<LanguageModelV4CallOptions>
}

export const usage: LanguageModelV4Usage = {
  inputTokens: { total: 12, noCache: 8, cacheRead: 4, cacheWrite: 0 },
  outputTokens: { total: 7, text: 5, reasoning: 2 }
}
export const stop: LanguageModelV4FinishReason = { unified: "stop", raw: "stop" }

/** A v4 model answering `turns` in order; a call past the script rejects (a test bug, not a bridge behaviour). */
export const fake = (turns: ReadonlyArray<FakeTurn>): FakeModel => {
  const calls: Array<LanguageModelV4CallOptions> = []
  const next = (options: LanguageModelV4CallOptions): FakeTurn => {
    calls.push(options)
    const turn = turns[calls.length - 1]
    if (turn === undefined) throw new Error(`fake model: no turn for call #${calls.length}`)
    return turn
  }
  const hang = (options: LanguageModelV4CallOptions) =>
    new Promise<never>((_, reject) => {
      options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason))
    })
  return {
    specificationVersion: "v4",
    provider: "fake.chat",
    modelId: "fake-1",
    supportedUrls: {},
    calls,
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      const turn = next(options)
      if ("throws" in turn) throw turn.throws
      if ("hang" in turn) return hang(options)
      if ("stream" in turn) throw new Error("fake model: a stream turn in doGenerate")
      return { content: [...turn.content], finishReason: turn.finishReason ?? stop, usage: turn.usage ?? usage, warnings: [] }
    },
    doStream: async (options): Promise<LanguageModelV4StreamResult> => {
      const turn = next(options)
      if ("throws" in turn) throw turn.throws
      if ("hang" in turn) return hang(options)
      if (!("stream" in turn)) throw new Error("fake model: a generate turn in doStream")
      const parts = [...turn.stream]
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async pull(controller) {
            if (turn.pace !== undefined) await turn.pace()
            const part = parts.shift()
            if (part !== undefined) controller.enqueue(part)
            else if (turn.error !== undefined) controller.error(turn.error)
            else controller.close()
          }
        })
      }
    }
  }
}

/** The bridge's ChatModel service for `model`. */
export const serviceOf = (model: LanguageModelV4, options?: AiSdkModel.Options) => AiSdkModel.make(model, options)

/** A real APICallError, as `@ai-sdk/openai` throws it. */
export const apiError = (statusCode: number, options: { readonly headers?: Record<string, string>; readonly message?: string } = {}) =>
  new APICallError({
    message: options.message ?? `HTTP ${statusCode}`,
    url: "https://api.example.test/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    ...(options.headers === undefined ? {} : { responseHeaders: options.headers }),
    isRetryable: statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500
  })

/** Lets promises (the fake's) and pending fibers settle, in real time but without moving the TestClock. */
export const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1))).pipe(Effect.repeat({ times: 2 }))

export const isDone = <A, E>(fiber: Fiber.Fiber<A, E>): boolean => fiber.pollUnsafe() !== undefined

// -----------------------------------------------------------------------------
// Tools and views
// -----------------------------------------------------------------------------

export const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ celsius: Schema.Number })
})
export const Search = Tool.make("search", {
  description: "Searches the web",
  parameters: Schema.Struct({
    query: Schema.String,
    limit: Schema.optionalKey(Schema.Finite),
    lang: Schema.optionalKey(Schema.Literals(["en", "fr"]))
  }),
  success: Schema.String
})
export const Ping = Tool.make("ping", { success: Schema.String })
export const toolkit = Toolkit.make(GetWeather, Search, Ping)
export const tools: ReadonlyArray<Tool.Any> = Object.values(toolkit.tools)
export const handlers = toolkit.toLayer({
  get_weather: () => Effect.succeed({ celsius: 21 }),
  search: ({ query }) => Effect.succeed(`results for ${query}`),
  ping: () => Effect.succeed("pong")
})

export const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: true
}

/** A response part as plain data (what the loop reads of it). */
export const view = (part: Response.AnyPart): unknown => {
  switch (part.type) {
    case "text":
    case "reasoning":
      return { type: part.type, text: part.text }
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return { type: part.type, id: part.id }
    case "text-delta":
    case "reasoning-delta":
      return { type: part.type, id: part.id, delta: part.delta }
    case "tool-call":
      return { type: "tool-call", id: part.id, name: part.name, params: part.params }
    case "finish":
      return {
        type: "finish",
        reason: part.reason,
        usage: { inputTokens: { ...part.usage.inputTokens }, outputTokens: { ...part.usage.outputTokens } }
      }
    default:
      return { type: part.type }
  }
}

export const mappedUsage = {
  inputTokens: { uncached: 8, total: 12, cacheRead: 4, cacheWrite: 0 },
  outputTokens: { total: 7, text: 5, reasoning: 2 }
}
export const finishView = (reason: Response.FinishReason) => ({ type: "finish", reason, usage: mappedUsage })

export const request = (
  prompt: Prompt.RawInput,
  options: { readonly tools?: ReadonlyArray<Tool.Any>; readonly toolChoice?: ChatModel.ToolChoice } = {}
): ChatModel.GenerateRequest => ({ prompt: Prompt.make(prompt), tools: options.tools ?? [], toolChoice: options.toolChoice ?? "auto" })

/** The options a call was made with, without the AbortSignal. */
export const sent = (options: LanguageModelV4CallOptions | undefined) => {
  if (options === undefined) throw new Error("no call was made")
  const { abortSignal: _signal, ...rest } = options
  return rest
}
/** The ModelCallFailed an exit failed with. */
export function failureIn<A>(exit: Exit.Exit<A, ChatModel.ChatModelError | LoopError.RunError>): LoopError.ModelCallFailed {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure, got a success")
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
  const reason = error?._tag === "RunError" ? error.reason : error
  if (reason?._tag !== "ModelCallFailed") throw new Error(`expected ModelCallFailed, got ${String(reason?._tag)}`)
  return reason as LoopError.ModelCallFailed
}

/**
 * Language models of the AI SDK's provider specifications v2 (`ai` 5, the
 * `@ai-sdk/*` 2.x packages) and v3 (`ai` 6, 3.x) seen as v4 models, so the
 * bridge has one code path. Built once per model in `AiSdkModel.make`; a v4
 * model is used as it is.
 *
 * What differs, and is converted here:
 * - request: a file part's data is the bare value (bytes, base64 text or a
 *   URL) in v2/v3, a tagged `{ type: "data" | "url", … }` in v4;
 * - response (v2 only): the finish reason is a string (`"unknown"` becomes
 *   `"other"`), and usage is flat (`inputTokens`, `outputTokens`,
 *   `reasoningTokens`, `cachedInputTokens`), in whole responses and in the
 *   stream's `finish` part.
 * Everything else the bridge reads (content parts, stream parts, tool
 * definitions, tool results, the JSON response format) has the same shape
 * in the three versions.
 *
 * @internal
 */
import type {
  LanguageModelV2,
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FinishReason,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage
} from "@ai-sdk/provider"

/** @internal a language model of any accepted specification */
export type AnyLanguageModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4

/** The v2/v3 form of a v4 file part's data. */
const bareData = (data: unknown): unknown => {
  if (typeof data !== "object" || data === null) return data
  const tagged = data as { readonly type?: unknown; readonly data?: unknown; readonly url?: unknown }
  return tagged.type === "data" ? tagged.data : tagged.type === "url" ? tagged.url : data
}

const hasFile = (message: LanguageModelV4Message): boolean =>
  typeof message.content !== "string" && message.content.some((part) => part.type === "file")

/** The call options as a v2/v3 model takes them (file data bare); the same object when there is no file. */
const olderOptions = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
  if (!options.prompt.some(hasFile)) return options
  const prompt = options.prompt.map((message) =>
    !hasFile(message) ? message : {
      ...message,
      content: (message.content as ReadonlyArray<{ readonly type: string; readonly data?: unknown }>).map((part) =>
        part.type === "file" ? { ...part, data: bareData(part.data) } : part
      )
    }
  )
  return { ...options, prompt: prompt as LanguageModelV4CallOptions["prompt"] }
}

/** @internal a v2 finish reason as v4 has it */
export const finishReasonV2 = (reason: LanguageModelV2FinishReason): LanguageModelV4FinishReason => ({
  unified: reason === "unknown" ? "other" : reason,
  raw: reason
})

/** @internal v2's flat usage as v4's */
export const usageV2 = (usage: LanguageModelV2Usage): LanguageModelV4Usage => {
  const cached = usage.cachedInputTokens
  const reasoning = usage.reasoningTokens
  return {
    inputTokens: {
      total: usage.inputTokens,
      noCache: usage.inputTokens === undefined || cached === undefined ? undefined : usage.inputTokens - cached,
      cacheRead: cached,
      cacheWrite: undefined
    },
    outputTokens: {
      total: usage.outputTokens,
      text: usage.outputTokens === undefined || reasoning === undefined ? undefined : usage.outputTokens - reasoning,
      reasoning
    }
  }
}

/** A v2 stream part as v4 has it: only `finish` differs. */
const streamPartV2 = (part: LanguageModelV4StreamPart): LanguageModelV4StreamPart => {
  if (part.type !== "finish") return part
  const older = part as unknown as { readonly finishReason: LanguageModelV2FinishReason; readonly usage: LanguageModelV2Usage }
  return { ...part, finishReason: finishReasonV2(older.finishReason), usage: usageV2(older.usage) }
}

/**
 * @internal `model` as a v4 model: itself when it is one; for v2 and v3, a
 * wrapper converting the request and (v2) the response
 */
export const asV4 = (model: AnyLanguageModel): LanguageModelV4 => {
  if (model.specificationVersion === "v4") return model
  const older = model as unknown as LanguageModelV4
  const v2 = model.specificationVersion === "v2"
  return {
    specificationVersion: "v4",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return older.supportedUrls
    },
    doGenerate: async (options) => {
      const result = await older.doGenerate(olderOptions(options))
      if (!v2) return result
      const flat = result as unknown as { readonly finishReason: LanguageModelV2FinishReason; readonly usage: LanguageModelV2Usage }
      return { ...result, finishReason: finishReasonV2(flat.finishReason), usage: usageV2(flat.usage) }
    },
    doStream: async (options) => {
      const result = await older.doStream(olderOptions(options))
      if (!v2) return result
      return {
        ...result,
        stream: result.stream.pipeThrough(
          new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
            transform: (part, controller) => controller.enqueue(streamPartV2(part))
          })
        )
      }
    }
  }
}

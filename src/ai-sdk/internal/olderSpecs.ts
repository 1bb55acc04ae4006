/**
 * Language models of the AI SDK's provider specifications v2 (`ai` 5, the
 * `@ai-sdk/*` 2.x packages) and v3 (`ai` 6, 3.x) seen as v4 models, so the
 * bridge has one code path. `asV4` runs once per model in `AiSdkModel.make`;
 * a v4 model is used as it is (nothing is wrapped, nothing is allocated per
 * call).
 *
 * What differs between the specifications in what the bridge sends and
 * reads, and what is done about it (checked against the `@ai-sdk/provider`
 * 2.0, 3.0 and 4.0 type definitions):
 * - a file part's data is the bare value (bytes, base64 text or a URL) in
 *   v2/v3, a tagged `{ type: "data" | "url", … }` in v4: made bare;
 * - a failed tool result (`error-text` / `error-json` output) has the same
 *   form in the three, but the 2.x/3.x OpenAI packages send its value bare,
 *   so the model cannot tell it from a success, where the 4.x packages send
 *   `{ "error": value }`. An older model is given the failure as the JSON
 *   `{ error: value }` (`error-json`), so every version sends what 4.x sends;
 * - v2's finish reason is a string (`"unknown"` becomes `"other"`; v2 has no
 *   raw reason) and its usage is flat (`inputTokens`, `outputTokens`,
 *   `reasoningTokens`, `cachedInputTokens`), in whole responses and in the
 *   stream's `finish` part: converted to v4's `{ unified, raw }` and nested
 *   usage (uncached input = input − cached, text output = output −
 *   reasoning, when both are known);
 * - a file in a response is bare in v2/v3: the bridge reads no file content,
 *   so it is left as it is.
 * The same in the three versions, so passed as they are: the other prompt
 * parts, the text/json tool-result outputs, function tool definitions
 * (`inputSchema`; provider tools, named differently, are never sent), the
 * tool choice, the JSON response format, the content parts and the stream
 * parts the bridge reads (text, reasoning, tool calls, error). v4's
 * `reasoning` call option has no v2/v3 counterpart: an older model ignores it.
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
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage
} from "@ai-sdk/provider"

/** @internal a language model of any accepted specification */
export type AnyLanguageModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4

type Part = Exclude<LanguageModelV4Message["content"], string>[number]

/** `items` with `f` applied to each, or `items` itself when `f` changed none. */
const mapChanged = <A>(items: ReadonlyArray<A>, f: (item: A) => A): ReadonlyArray<A> => {
  let changed: Array<A> | undefined
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const next = f(item)
    if (changed === undefined && next !== item) changed = items.slice(0, i)
    changed?.push(next)
  }
  return changed ?? items
}

/** The v2/v3 form of a v4 file part's data (kinds v2/v3 lack go as they are, as `ai` 7 does). */
const bareData = (data: unknown): unknown => {
  if (typeof data !== "object" || data === null) return data
  const tagged = data as { readonly type?: unknown; readonly data?: unknown; readonly url?: unknown }
  return tagged.type === "data" ? tagged.data : tagged.type === "url" ? tagged.url : data
}

/** @internal a tool result's output as an older model is given it: a failure as the JSON `{ error: value }` */
export const olderOutput = (output: LanguageModelV4ToolResultOutput): LanguageModelV4ToolResultOutput =>
  output.type === "error-text" || output.type === "error-json"
    ? { type: "error-json", value: { error: output.value } }
    : output

const olderPart = (part: Part): Part => {
  switch (part.type) {
    case "file":
      return { ...part, data: bareData(part.data) } as Part
    case "tool-result": {
      const output = olderOutput(part.output)
      return output === part.output ? part : { ...part, output }
    }
    default:
      return part
  }
}

const olderMessage = (message: LanguageModelV4Message): LanguageModelV4Message => {
  if (typeof message.content === "string") return message
  const content = mapChanged<Part>(message.content, olderPart)
  return content === message.content ? message : { ...message, content } as LanguageModelV4Message
}

/** @internal the call options as a v2/v3 model takes them; the same object when nothing differs */
export const olderOptions = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
  const prompt = mapChanged(options.prompt, olderMessage)
  return prompt === options.prompt ? options : { ...options, prompt: prompt as LanguageModelV4CallOptions["prompt"] }
}

/**
 * @internal v2 options for `options`: a v2 tool has no `strict` mark, and
 * `@ai-sdk/openai` 2.x marks each tool with its own `strictJsonSchema`
 * provider option (default false). Tools marked strict (`strictTools`) set
 * it, unless the caller (or a run's output format) already did.
 */
export const v2Options = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
  const older = olderOptions(options)
  const strict = options.tools?.some((tool) => tool.type === "function" && tool.strict === true) === true
  const openai: unknown = options.providerOptions?.openai
  // From JavaScript `openai` may be anything: only an object can hold the caller's own choice.
  const given = typeof openai === "object" && openai !== null
  if (!strict || (given && Object.hasOwn(openai, "strictJsonSchema"))) return older
  return { ...older, providerOptions: { ...options.providerOptions, openai: { ...(given ? openai : {}), strictJsonSchema: true } } }
}

/** @internal a v2 finish reason as v4 has it (v2 reports no raw reason) */
export const finishReasonV2 = (reason: LanguageModelV2FinishReason): LanguageModelV4FinishReason => ({
  unified: reason === "unknown" ? "other" : reason,
  raw: undefined
})

/**
 * Providers whose v2 totals include the cache reads (input) and the
 * reasoning (output), as OpenAI's API counts them. Others (Anthropic's
 * input excludes cache reads) get no uncached or text count, as ai 7 gives
 * none for any v2 model: the difference would be wrong or negative.
 */
const inclusiveTotals = /^(?:openai|azure)(?:\.|$)/

/** @internal whether a v2 model of `provider` reports totals that include cache reads and reasoning */
export const includesParts = (provider: unknown): boolean => typeof provider === "string" && inclusiveTotals.test(provider)

/** `total − part` when the provider's totals include the part and both are known; else unknown */
const rest = (total: number | undefined, part: number | undefined, inclusive: boolean): number | undefined =>
  inclusive && total !== undefined && part !== undefined && total >= part ? total - part : undefined

/** @internal v2's flat usage as v4's (`inclusive`: the totals include cache reads and reasoning) */
export const usageV2 = (usage: LanguageModelV2Usage, inclusive: boolean): LanguageModelV4Usage => ({
  inputTokens: {
    total: usage.inputTokens,
    noCache: rest(usage.inputTokens, usage.cachedInputTokens, inclusive),
    cacheRead: usage.cachedInputTokens,
    cacheWrite: undefined
  },
  outputTokens: { total: usage.outputTokens, text: rest(usage.outputTokens, usage.reasoningTokens, inclusive), reasoning: usage.reasoningTokens }
})

/** What v2 has in place of v4's finish reason and usage (whole responses and `finish` parts). */
interface FlatFinish {
  readonly finishReason: LanguageModelV2FinishReason
  readonly usage: LanguageModelV2Usage
}

/** @internal a v2 stream part as v4 has it: only `finish` differs */
export const streamPartV2 = (part: LanguageModelV4StreamPart, inclusive: boolean): LanguageModelV4StreamPart => {
  if (part.type !== "finish") return part
  const flat = part as unknown as FlatFinish
  return { ...part, finishReason: finishReasonV2(flat.finishReason), usage: usageV2(flat.usage, inclusive) }
}

const toV4Stream = (inclusive: boolean) =>
  new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
    transform: (part, controller) => controller.enqueue(streamPartV2(part, inclusive))
  })

/**
 * @internal `model` as a v4 model: itself when it is one; for v2 and v3, a
 * wrapper converting the request and (v2) the response
 */
export const asV4 = (model: AnyLanguageModel): LanguageModelV4 => {
  if (model.specificationVersion === "v4") return model
  // Called with options converted back to the model's own forms, and (v2) its answers converted up.
  const older = model as unknown as LanguageModelV4
  const v2 = model.specificationVersion === "v2"
  const inclusive = includesParts(model.provider)
  return {
    specificationVersion: "v4",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return older.supportedUrls
    },
    doGenerate: v2
      ? async (options) => {
        const result = await older.doGenerate(v2Options(options))
        const flat = result as unknown as FlatFinish
        return { ...result, finishReason: finishReasonV2(flat.finishReason), usage: usageV2(flat.usage, inclusive) }
      }
      : (options) => older.doGenerate(olderOptions(options)),
    doStream: v2
      ? async (options) => {
        const result = await older.doStream(v2Options(options))
        return { ...result, stream: result.stream.pipeThrough(toV4Stream(inclusive)) }
      }
      : (options) => older.doStream(olderOptions(options))
  }
}

/**
 * v2/v3 models seen as v4 (`olderSpecs.ts`), on fake models typed with
 * `@ai-sdk/provider`'s own `LanguageModelV2` / `LanguageModelV3`:
 * - a v4 model is used as it is (the same object: nothing per call);
 * - request: file data goes bare (bytes, base64 text, URL), a failed tool
 *   result goes as the JSON `{ error: value }`, everything else is passed as
 *   the same objects, and a prompt with nothing to convert is the same
 *   options object;
 * - response: a v3 answer is passed as it is; v2's string finish reasons
 *   and flat usage come back in v4's shape, in whole responses and in the
 *   stream's `finish` part (other stream parts pass as they are).
 */
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2FinishReason,
  LanguageModelV2StreamPart,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { asV4, finishReasonV2, olderOptions, olderOutput, usageV2 } from "../../../src/ai-sdk/internal/olderSpecs.ts"

const v2Usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4, reasoningTokens: 2 }
const v4Usage = {
  inputTokens: { total: 10, noCache: 6, cacheRead: 4, cacheWrite: undefined },
  outputTokens: { total: 5, text: 3, reasoning: 2 }
}

const streamOf = <A>(parts: ReadonlyArray<A>) =>
  new ReadableStream<A>({
    start: (controller) => {
      for (const part of parts) controller.enqueue(part)
      controller.close()
    }
  })

const collect = async <A>(stream: ReadableStream<A>): Promise<Array<A>> => {
  const parts: Array<A> = []
  for await (const part of stream) parts.push(part)
  return parts
}

const v2Parts: ReadonlyArray<LanguageModelV2StreamPart> = [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Hi" },
  { type: "text-end", id: "t" },
  { type: "tool-call", toolCallId: "c1", toolName: "search", input: "{}" },
  { type: "finish", finishReason: "tool-calls", usage: v2Usage }
]

const fakeV2 = (
  seen: Array<LanguageModelV2CallOptions>,
  finishReason: LanguageModelV2FinishReason = "unknown",
  provider = "openai.chat"
): LanguageModelV2 => ({
  specificationVersion: "v2",
  provider,
  modelId: "m2",
  supportedUrls: { "image/*": [/^https:/] },
  doGenerate: (options) => {
    seen.push(options)
    return Promise.resolve({ content: [{ type: "text", text: "Hi" }], finishReason, usage: v2Usage, warnings: [] })
  },
  doStream: (options) => {
    seen.push(options)
    return Promise.resolve({ stream: streamOf(v2Parts) })
  }
})

const v3Result = {
  content: [{ type: "text" as const, text: "Hi" }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage: v4Usage,
  warnings: []
}
const v3Stream = { stream: streamOf<LanguageModelV3StreamPart>([]) }

const fakeV3 = (seen: Array<LanguageModelV3CallOptions>): LanguageModelV3 => ({
  specificationVersion: "v3",
  provider: "fake.responses",
  modelId: "m3",
  supportedUrls: {},
  doGenerate: (options) => {
    seen.push(options)
    return Promise.resolve(v3Result)
  },
  doStream: (options) => {
    seen.push(options)
    return Promise.resolve(v3Stream)
  }
})

const bytes = new Uint8Array([1, 2, 3])
const url = new URL("https://example.com/a.png")
const withFilesAndFailures: LanguageModelV4CallOptions = {
  prompt: [
    { role: "system", content: "Be brief." },
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: bytes } },
        { type: "file", mediaType: "image/png", data: { type: "url", url } },
        { type: "file", mediaType: "text/plain", data: { type: "data", data: "aGk=" }, filename: "hi.txt" }
      ]
    },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "book", input: { hotel: "Ritz" } }] },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "book", output: { type: "json", value: { ok: true } } },
        { type: "tool-result", toolCallId: "c2", toolName: "book", output: { type: "text", value: "done" } },
        { type: "tool-result", toolCallId: "c3", toolName: "book", output: { type: "error-json", value: { reason: "full" } } },
        { type: "tool-result", toolCallId: "c4", toolName: "book", output: { type: "error-text", value: "no such booking" } }
      ]
    }
  ],
  temperature: 0
}
const plain: LanguageModelV4CallOptions = {
  prompt: [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "t", output: { type: "text", value: "ok" } }] }
  ]
}

describe("older specifications seen as v4", () => {
  it("a v4 model is used as it is", () => {
    const model: LanguageModelV4 = { ...fakeV3([]), specificationVersion: "v4" } as unknown as LanguageModelV4
    expect(asV4(model)).toBe(model)
  })

  for (const [version, make] of [["v2", fakeV2], ["v3", fakeV3]] as const) {
    it(`${version}: the wrapper is a v4 model with the model's provider, id and URLs`, () => {
      const model = make([])
      const seen = asV4(model)
      expect([seen.specificationVersion, seen.provider, seen.modelId, seen.supportedUrls])
        .toEqual(["v4", model.provider, model.modelId, model.supportedUrls])
    })

    it(`${version}: file data goes bare, failures as { error }, the rest as the same objects`, async () => {
      const seen: Array<{ readonly prompt: ReadonlyArray<{ readonly content: unknown }> }> = []
      const model = asV4(make(seen as never))
      await model.doGenerate(withFilesAndFailures)
      await model.doStream(withFilesAndFailures)
      for (const sent of seen) {
        const [system, user, assistant, tool] = sent.prompt
        const original = withFilesAndFailures.prompt
        expect([system, assistant]).toEqual([original[0], original[2]])
        expect(system).toBe(original[0])
        expect(assistant).toBe(original[2])
        const files = user!.content as ReadonlyArray<{ readonly type: string; readonly data?: unknown }>
        expect(files.map((part) => part.data)).toEqual([undefined, bytes, url, "aGk="])
        expect(files[0]).toBe((original[1]!.content as ReadonlyArray<unknown>)[0])
        expect(files[3]).toMatchObject({ filename: "hi.txt", mediaType: "text/plain" })
        const results = tool!.content as ReadonlyArray<{ readonly output: unknown }>
        expect(results.map((part) => part.output)).toEqual([
          { type: "json", value: { ok: true } },
          { type: "text", value: "done" },
          { type: "error-json", value: { error: { reason: "full" } } },
          { type: "error-json", value: { error: "no such booking" } }
        ])
        expect(results[0]).toBe((original[3]!.content as ReadonlyArray<unknown>)[0])
      }
      // The caller's options are not changed.
      expect((withFilesAndFailures.prompt[1]!.content[1] as { readonly data: unknown }).data).toEqual({ type: "data", data: bytes })
    })

    it(`${version}: a prompt with nothing to convert is passed as the same options object`, async () => {
      const seen: Array<unknown> = []
      const model = asV4(make(seen as never))
      await model.doGenerate(plain)
      await model.doStream(plain)
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(plain)
      expect(seen[1]).toBe(plain)
    })
  }

  it("olderOptions, olderOutput: the same values when there is nothing to convert", () => {
    expect(olderOptions(plain)).toBe(plain)
    const json = { type: "json" as const, value: [1] }
    expect(olderOutput(json)).toBe(json)
    expect(olderOutput({ type: "error-text", value: "x" })).toEqual({ type: "error-json", value: { error: "x" } })
  })

  it("v3: answers are passed as they are", async () => {
    const model = asV4(fakeV3([]))
    expect(await model.doGenerate(plain)).toBe(v3Result)
    expect(await model.doStream(plain)).toBe(v3Stream)
  })

  it("v2: the finish reason and flat usage of a whole response come back as v4's", async () => {
    const result = await asV4(fakeV2([])).doGenerate(plain)
    expect(result.finishReason).toEqual({ unified: "other", raw: undefined })
    expect(result.usage).toEqual(v4Usage)
    expect(result.content).toEqual([{ type: "text", text: "Hi" }])
  })

  it("v2: the stream's finish part comes back as v4's; the other parts as they are", async () => {
    const { stream } = await asV4(fakeV2([])).doStream(plain)
    const parts: ReadonlyArray<LanguageModelV4StreamPart> = await collect(stream)
    expect(parts.slice(0, -1)).toEqual(v2Parts.slice(0, -1))
    parts.slice(0, -1).forEach((part, i) => expect(part).toBe(v2Parts[i]))
    expect(parts.at(-1)).toEqual({ type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage: v4Usage })
  })

  it("v2 finish reasons: each as v4's unified reason, unknown as other", () => {
    const reasons: ReadonlyArray<LanguageModelV2FinishReason> = ["stop", "length", "content-filter", "tool-calls", "error", "other", "unknown"]
    expect(reasons.map((reason) => finishReasonV2(reason).unified))
      .toEqual(["stop", "length", "content-filter", "tool-calls", "error", "other", "other"])
  })

  it("v2 usage: counts the provider did not report stay unknown", () => {
    expect(usageV2({ inputTokens: 10, outputTokens: 5, totalTokens: 15 }, true)).toEqual({
      inputTokens: { total: 10, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: undefined, reasoning: undefined }
    })
    expect(usageV2({ inputTokens: undefined, outputTokens: undefined, totalTokens: undefined, cachedInputTokens: 3, reasoningTokens: 1 }, true))
      .toEqual({
        inputTokens: { total: undefined, noCache: undefined, cacheRead: 3, cacheWrite: undefined },
        outputTokens: { total: undefined, text: undefined, reasoning: 1 }
      })
    expect(usageV2({ inputTokens: 8, outputTokens: 4, totalTokens: 12, cachedInputTokens: 0, reasoningTokens: 0 }, true)).toEqual({
      inputTokens: { total: 8, noCache: 8, cacheRead: 0, cacheWrite: undefined },
      outputTokens: { total: 4, text: 4, reasoning: 0 }
    })
  })

  // Anthropic's v2 input count leaves cache reads out, and some providers count reasoning apart from
  // the output: a difference would be wrong, even negative, so only OpenAI-style totals are split.
  it.each([
    { provider: "openai.chat", inclusive: true },
    { provider: "openai.responses", inclusive: true },
    { provider: "azure.chat", inclusive: true },
    { provider: "anthropic.messages", inclusive: false },
    { provider: "google.generative-ai", inclusive: false },
    { provider: "openaiish", inclusive: false },
    { provider: "__proto__", inclusive: false },
    { provider: "", inclusive: false }
  ])("v2 usage of $provider: split into uncached and text only when the totals include them ($inclusive)", async ({ inclusive, provider }) => {
    const anthropicShaped = { inputTokens: 12, outputTokens: 30, totalTokens: 42, cachedInputTokens: 2000, reasoningTokens: 260 }
    const shaped: LanguageModelV2 = {
      ...fakeV2([], "stop", provider),
      doGenerate: () => Promise.resolve({ content: [], finishReason: "stop", usage: anthropicShaped, warnings: [] })
    }
    const model = asV4(shaped)
    const { usage } = await model.doGenerate(plain)
    // Never negative: a total below its part is not split, whoever reports it.
    expect(usage.inputTokens.noCache).toBeUndefined()
    expect(usage.outputTokens.text).toBeUndefined()
    const consistent = asV4({ ...fakeV2([], "stop", provider) })
    const split = (await consistent.doGenerate(plain)).usage
    expect(split).toEqual(inclusive ? v4Usage : {
      inputTokens: { ...v4Usage.inputTokens, noCache: undefined },
      outputTokens: { ...v4Usage.outputTokens, text: undefined }
    })
  })
})

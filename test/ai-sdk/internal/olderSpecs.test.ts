/**
 * v2/v3 models seen as v4 (`olderSpecs.ts`): a file part's data goes to the
 * older model bare (bytes, or the URL), a prompt without files goes as it is
 * (the same object), and v2's string finish reasons and flat usage come back
 * in v4's shape.
 */
import { describe, expect, it } from "@effect/vitest"
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { asV4, finishReasonV2, usageV2 } from "../../../src/ai-sdk/internal/olderSpecs.ts"

const fake = (version: "v2" | "v3", seen: Array<LanguageModelV4CallOptions>) =>
  ({
    specificationVersion: version,
    provider: "fake.chat",
    modelId: "m",
    supportedUrls: {},
    doGenerate: (options: LanguageModelV4CallOptions) => {
      seen.push(options)
      return Promise.resolve({
        content: [],
        finishReason: version === "v2" ? "unknown" : { unified: "stop", raw: "stop" },
        usage: version === "v2"
          ? { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4, reasoningTokens: 2 }
          : { inputTokens: { total: 10, noCache: 6, cacheRead: 4, cacheWrite: undefined }, outputTokens: { total: 5, text: 3, reasoning: 2 } },
        warnings: []
      })
    },
    doStream: () => Promise.reject(new Error("not used"))
  }) as never

const bytes = new Uint8Array([1, 2, 3])
const withFiles: LanguageModelV4CallOptions = {
  prompt: [{
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "file", mediaType: "image/png", data: { type: "data", data: bytes } },
      { type: "file", mediaType: "image/png", data: { type: "url", url: new URL("https://example.com/a.png") } }
    ]
  }]
}

describe("older specifications seen as v4", () => {
  for (const version of ["v2", "v3"] as const) {
    it(`${version}: file data goes bare; a prompt without files is passed as it is`, async () => {
      const seen: Array<LanguageModelV4CallOptions> = []
      const model = asV4(fake(version, seen))
      expect(model.specificationVersion).toBe("v4")
      await model.doGenerate(withFiles)
      const content = seen[0]!.prompt[0]!.content as ReadonlyArray<{ readonly type: string; readonly data?: unknown }>
      expect(content.map((part) => part.data)).toEqual([undefined, bytes, new URL("https://example.com/a.png")])
      const plain: LanguageModelV4CallOptions = { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }
      await model.doGenerate(plain)
      expect(seen[1]).toBe(plain)
    })
  }

  it("v2: the finish reason and flat usage come back as v4's", async () => {
    const result = await asV4(fake("v2", [])).doGenerate({ prompt: [] })
    expect(result.finishReason).toEqual({ unified: "other", raw: "unknown" })
    expect(result.usage).toEqual({
      inputTokens: { total: 10, noCache: 6, cacheRead: 4, cacheWrite: undefined },
      outputTokens: { total: 5, text: 3, reasoning: 2 }
    })
    expect(finishReasonV2("tool-calls")).toEqual({ unified: "tool-calls", raw: "tool-calls" })
    expect(usageV2({ inputTokens: undefined, outputTokens: 1, totalTokens: 1 }).inputTokens.noCache).toBeUndefined()
  })
})

/**
 * `gen_ai.provider.name` from a `ChatModel`'s `info.provider`: the AI SDK's
 * provider ids and `Model.make` names become the well-known values of the
 * OpenTelemetry GenAI conventions; an unknown provider keeps its id up to
 * the first dot; hostile names are redacted and bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { modelName, providerName } from "../../src/internal/telemetry/providerName.ts"

const table: ReadonlyArray<readonly [given: unknown, expected: string]> = [
  // the AI SDK's provider ids
  ["openai.chat", "openai"],
  ["openai.responses", "openai"],
  ["anthropic.messages", "anthropic"],
  ["google.generative-ai", "gcp.gemini"],
  ["google.vertex.chat", "gcp.vertex_ai"],
  ["vertex.anthropic.messages", "gcp.vertex_ai"],
  ["amazon-bedrock", "aws.bedrock"],
  ["azure.chat", "azure.ai.openai"],
  ["azure.responses", "azure.ai.openai"],
  ["mistral.chat", "mistral_ai"],
  ["groq.chat", "groq"],
  ["deepseek.chat", "deepseek"],
  ["xai.chat", "x_ai"],
  ["cohere.chat", "cohere"],
  ["perplexity", "perplexity"],
  ["moonshotai.chat", "moonshot_ai"],
  // Model.make names, and values that already are well-known ones
  ["openai", "openai"],
  ["google", "gcp.gemini"],
  ["aws.bedrock", "aws.bedrock"],
  ["azure.ai.openai", "azure.ai.openai"],
  ["gcp.vertex_ai", "gcp.vertex_ai"],
  ["Anthropic.Messages", "anthropic"],
  // unknown providers: the id up to its first dot
  ["togetherai.chat", "togetherai"],
  ["my-gateway", "my-gateway"],
  ["MyGateway.chat", "MyGateway"],
  ["loopwork", "loopwork"],
  // nothing to go by
  ["", "unknown"],
  [undefined, "unknown"],
  [42, "unknown"]
]

describe("providerName", () => {
  it.each(table)("%s → %s", (given, expected) => {
    expect(providerName(given)).toBe(expected)
  })

  it("a hostile provider id: credentials redacted, at most 256 characters (and an ellipsis)", () => {
    const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    expect(providerName(`Bearer ${key}`)).toBe("Bearer [REDACTED]")
    expect(providerName("AKIAIOSFODNN7EXAMPLE.chat")).not.toContain("IOSFODNN7EXAMPLE")
    expect(providerName("a".repeat(10_000))).toBe(`${"a".repeat(256)}…`)
    expect(modelName(`gpt ${key}`)).toBe("gpt sk-[REDACTED]")
    expect(modelName("")).toBe("unknown")
  })
})

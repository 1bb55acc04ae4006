/**
 * `gen_ai.provider.name` from what a `ChatModel` says its provider is: the
 * AI SDK's provider ids (`openai.chat`, `anthropic.messages`,
 * `google.generative-ai`, `amazon-bedrock`, …) and `Model.make` names
 * (`openai`, `google`, …) become the well-known values of the OpenTelemetry
 * GenAI conventions (`openai`, `anthropic`, `gcp.gemini`, `aws.bedrock`, …);
 * a provider the conventions do not know keeps its id up to the first dot
 * (`togetherai.chat` → `togetherai`). Model names (span names, attributes)
 * are bounded the same way.
 *
 * @internal
 */
import { spanText } from "../tracing.ts"

/** The well-known values of `gen_ai.provider.name`: a provider that already says one keeps it. */
const wellKnown: ReadonlySet<string> = new Set([
  "anthropic",
  "aws.bedrock",
  "azure.ai.inference",
  "azure.ai.openai",
  "cohere",
  "deepseek",
  "gcp.gemini",
  "gcp.gen_ai",
  "gcp.vertex_ai",
  "groq",
  "ibm.watsonx.ai",
  "mistral_ai",
  "moonshot_ai",
  "openai",
  "perplexity",
  "x_ai"
])

/** By the id's first two dot-separated segments: Google's Vertex ids start like AI Studio's. */
const byTwoSegments: ReadonlyMap<string, string> = new Map([
  ["google.vertex", "gcp.vertex_ai"],
  ["azure.ai", "azure.ai.inference"]
])

/** By the id up to its first dot (the AI SDK's provider ids) or the whole name (`Model.make`'s). */
const byPrefix: ReadonlyMap<string, string> = new Map([
  ["openai", "openai"],
  ["anthropic", "anthropic"],
  ["google", "gcp.gemini"],
  ["gemini", "gcp.gemini"],
  ["vertex", "gcp.vertex_ai"],
  ["amazon-bedrock", "aws.bedrock"],
  ["bedrock", "aws.bedrock"],
  ["azure", "azure.ai.openai"],
  ["azure-openai", "azure.ai.openai"],
  ["mistral", "mistral_ai"],
  ["groq", "groq"],
  ["deepseek", "deepseek"],
  ["xai", "x_ai"],
  ["cohere", "cohere"],
  ["perplexity", "perplexity"],
  ["moonshotai", "moonshot_ai"],
  ["watsonx", "ibm.watsonx.ai"]
])

/** The provider name for `id` (not cached). */
const nameOf = (id: string): string => {
  const trimmed = id.trim()
  const lower = trimmed.toLowerCase()
  if (wellKnown.has(lower)) return lower
  const first = lower.indexOf(".")
  const second = first === -1 ? -1 : lower.indexOf(".", first + 1)
  const two = byTwoSegments.get(second === -1 ? lower : lower.slice(0, second))
  if (two !== undefined) return two
  const known = byPrefix.get(first === -1 ? lower : lower.slice(0, first))
  if (known !== undefined) return known
  // As given (redaction needs the original case: `AKIA…`).
  const prefix = first === -1 ? trimmed : trimmed.slice(0, first)
  return prefix.length === 0 ? "unknown" : spanText(prefix)
}

/** A small memo for the names seen (a process calls few providers and models); cleared when it fills. */
const memo = <A>(compute: (text: string) => A) => {
  const seen = new Map<string, A>()
  return (text: string): A => {
    let value = seen.get(text)
    if (value === undefined) {
      if (seen.size >= 256) seen.clear()
      value = compute(text)
      seen.set(text, value)
    }
    return value
  }
}

const memoProvider = memo(nameOf)

/**
 * `gen_ai.provider.name` for a `ChatModel`'s `info.provider`; `"unknown"`
 * when it has none (or not a string).
 *
 * @internal
 */
export const providerName = (provider: unknown): string =>
  typeof provider === "string" ? memoProvider(provider) : "unknown"

const memoModel = memo((model: string) => model.length === 0 ? "unknown" : spanText(model))

/**
 * A model name as a span name or attribute may carry it (bounded, credentials
 * redacted); `"unknown"` when there is none.
 *
 * @internal
 */
export const modelName = (model: unknown): string => typeof model === "string" ? memoModel(model) : "unknown"

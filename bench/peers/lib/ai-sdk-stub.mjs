// The provider-level stub shared by the `ai-sdk` and `loopwork-ai-sdk` rows: a
// plain object of the AI SDK's language model specification v4, whose
// `doGenerate` answers as a provider package does. Tool-call arguments are a
// JSON string, the finish reason and usage are v4's objects, and every answer
// is a new object. Both rows call this very object, so the gap between them is
// the cost of the two loops alone.

import { sleep } from "./script.mjs"

const usage = () => ({
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
})

/** The call ids of the tool results ending a v4 prompt (its last message, when that is a tool message). */
const lastResultIds = (prompt) => {
  const last = prompt[prompt.length - 1]
  if (last?.role !== "tool") return []
  return last.content.filter((part) => part.type === "tool-result").map((part) => part.toolCallId)
}

/**
 * A LanguageModelV4 answering from `script`, after `spec.modelMs` (setTimeout).
 * @returns {import("@ai-sdk/provider").LanguageModelV4}
 */
export const makeAiSdkModel = ({ spec, script }) => ({
  specificationVersion: "v4",
  provider: "bench.stub",
  modelId: "scripted",
  supportedUrls: {},
  async doGenerate(options) {
    if (spec.modelMs > 0) await sleep(spec.modelMs)
    const answer = script.respondAfter(lastResultIds(options.prompt))
    if (answer.type === "text") {
      return {
        content: [{ type: "text", text: answer.text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(),
        warnings: []
      }
    }
    return {
      content: answer.calls.map((call) => ({
        type: "tool-call",
        toolCallId: call.id,
        toolName: call.name,
        input: JSON.stringify(call.input)
      })),
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: usage(),
      warnings: []
    }
  },
  async doStream() {
    throw new Error("the benchmark does not stream")
  }
})

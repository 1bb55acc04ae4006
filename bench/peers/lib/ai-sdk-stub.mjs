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

/** Tool results in a v4 prompt (the messages a loop sends the provider). */
const toolResultsIn = (prompt) => {
  let count = 0
  for (const message of prompt) {
    if (message.role !== "tool") continue
    for (const part of message.content) if (part.type === "tool-result") count++
  }
  return count
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
    const answer = script.respond(toolResultsIn(options.prompt))
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

// The OpenAI Agents SDK's runtime (@openai/agents-core): an Agent and run(),
// with a Model of our own and tracing turned off. The model answers with
// Responses-style items (function_call items whose arguments are a JSON
// string), the provider-level form, so the closest loopwork row is
// `loopwork-ai-sdk`.

import { Agent, Usage, run, setTracingDisabled, tool } from "@openai/agents-core"
import { z } from "zod"
import { sleep } from "../lib/script.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "openai-agents",
  label: "OpenAI Agents SDK run(), tracing off",
  stub: "Model.getResponse (Responses-style items)",
  baseline: "loopwork-ai-sdk",
  sameStub: false,
  packages: ["@openai/agents-core", "zod"],
  notes: "setTracingDisabled(true) (by default agents-core prints every span to the console); " +
    "zod tool parameters; maxTurns rounds + 5",

  async setup({ spec, script }) {
    setTracingDisabled(true)
    const model = {
      async getResponse(request) {
        if (spec.modelMs > 0) await sleep(spec.modelMs)
        // The function results ending the input (one item per call, at most a round's worth).
        const lastIds = []
        const input = Array.isArray(request.input) ? request.input : []
        for (let i = input.length - 1; i >= 0 && input[i].type === "function_call_result" && lastIds.length < spec.calls; i--) {
          lastIds.push(input[i].callId)
        }
        const answer = script.respondAfter(lastIds)
        const output = answer.type === "text"
          ? [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: answer.text }] }]
          : answer.calls.map((call) => ({
            type: "function_call",
            callId: call.id,
            name: call.name,
            arguments: JSON.stringify(call.input),
            status: "completed"
          }))
        return { usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }), output }
      },
      getStreamedResponse() {
        throw new Error("the benchmark does not stream")
      }
    }
    const echo = tool({
      name: "echo",
      description: "Returns its input",
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => {
        script.toolStart()
        if (spec.toolMs > 0) await sleep(spec.toolMs)
        script.toolEnd()
        return text
      }
    })
    const agent = new Agent({ name: "bench", instructions: "Call echo when asked.", model, tools: [echo] })
    const options = { maxTurns: spec.rounds + 5 }
    return {
      async runChain() {
        return (await run(agent, "go", options)).finalOutput
      }
    }
  }
}

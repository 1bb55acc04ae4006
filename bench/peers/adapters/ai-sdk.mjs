// The Vercel AI SDK: generateText with an `echo` tool and a step limit, over
// the v4 stub of lib/ai-sdk-stub.mjs, the same one `loopwork-ai-sdk` calls.

import { generateText, stepCountIs, tool } from "ai"
import { z } from "zod"
import { makeAiSdkModel } from "../lib/ai-sdk-stub.mjs"
import { sleep } from "../lib/script.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "ai-sdk",
  label: "Vercel AI SDK generateText",
  stub: "LanguageModelV4 doGenerate (lib/ai-sdk-stub.mjs)",
  baseline: "loopwork-ai-sdk",
  sameStub: true,
  packages: ["ai", "@ai-sdk/provider", "zod"],
  notes: "one plain v4 model object for all chains (it keeps nothing); zod input schema; " +
    "stopWhen: stepCountIs(rounds + 2); default tool-call concurrency",

  async setup({ spec, script }) {
    const model = makeAiSdkModel({ spec, script })
    const tools = {
      echo: tool({
        description: "Returns its input",
        inputSchema: z.object({ text: z.string() }),
        execute: async ({ text }) => {
          script.toolStart()
          if (spec.toolMs > 0) await sleep(spec.toolMs)
          script.toolEnd()
          return text
        }
      })
    }
    const stopWhen = stepCountIs(spec.rounds + 2)
    return {
      async runChain() {
        const result = await generateText({ model, tools, prompt: "go", stopWhen })
        if (result.steps.length !== spec.rounds + 1) {
          throw new Error(`ai-sdk: ${result.steps.length} steps, expected ${spec.rounds + 1}`)
        }
        return result.text
      }
    }
  }
}

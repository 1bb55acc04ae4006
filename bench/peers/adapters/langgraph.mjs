// LangGraph's prebuilt ReAct agent, createReactAgent (deprecated in favour of
// langchain's createAgent, the `langchain` row, but still shipped and used).

import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { StubChatModel, echoTool, lastText, recursionLimit } from "../lib/langchain-stub.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "langgraph",
  label: "LangGraph createReactAgent",
  stub: "BaseChatModel subclass (lib/langchain-stub.mjs)",
  baseline: "loopwork-scripted",
  sameStub: false,
  packages: ["@langchain/langgraph", "@langchain/core", "zod"],
  notes: "createReactAgent with its defaults (version v1), no checkpointer; zod tool schema; " +
    "recursionLimit 2 × rounds + 10 (the default 25 is too few for 10 rounds)",

  async setup({ spec, script }) {
    const agent = createReactAgent({ llm: new StubChatModel({ spec, script }), tools: [echoTool({ spec, script })] })
    const config = { recursionLimit: recursionLimit(spec) }
    return {
      async runChain() {
        return lastText("langgraph", spec, await agent.invoke({ messages: [{ role: "user", content: "go" }] }, config))
      }
    }
  }
}

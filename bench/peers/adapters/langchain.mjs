// LangChain 1's createAgent, the current way to build a tool-calling agent in
// LangChain (a LangGraph graph underneath).

import { createAgent } from "langchain"
import { StubChatModel, echoTool, lastText, recursionLimit } from "../lib/langchain-stub.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "langchain",
  label: "LangChain createAgent",
  stub: "BaseChatModel subclass (lib/langchain-stub.mjs)",
  baseline: "loopwork-scripted",
  sameStub: false,
  packages: ["langchain", "@langchain/langgraph", "@langchain/core", "zod"],
  notes: "createAgent without middleware, no checkpointer; zod tool schema; recursionLimit 2 × rounds + 10",

  async setup({ spec, script }) {
    const agent = createAgent({ model: new StubChatModel({ spec, script }), tools: [echoTool({ spec, script })] })
    const config = { recursionLimit: recursionLimit(spec) }
    return {
      async runChain() {
        return lastText("langchain", spec, await agent.invoke({ messages: [{ role: "user", content: "go" }] }, config))
      }
    }
  }
}

// What the `langgraph` and `langchain` rows share: a chat model stub and the
// `echo` tool (zod schema).
//
// The stub is a small BaseChatModel subclass. The fakes of
// `@langchain/core/testing` keep every call they get, which would grow over
// thousands of chains; this one keeps nothing. Its answers are AIMessages whose
// tool calls carry decoded arguments, the form a LangChain provider package
// hands the agent, so the closest loopwork row is `loopwork-scripted`.

import { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { z } from "zod"
import { sleep } from "./script.mjs"

export class StubChatModel extends BaseChatModel {
  constructor({ spec, script }) {
    super({})
    this.benchSpec = spec
    this.benchScript = script
  }

  _llmType() {
    return "bench-stub"
  }

  // A provider's bindTools hands the tools to every call as options; the stub does not need them.
  bindTools(tools, options) {
    return this.withConfig({ ...options, tools })
  }

  async _generate(messages) {
    if (this.benchSpec.modelMs > 0) await sleep(this.benchSpec.modelMs)
    // The tool messages ending the conversation (one per call, at most a round's worth).
    const lastIds = []
    for (let i = messages.length - 1; i >= 0 && messages[i].type === "tool" && lastIds.length < this.benchSpec.calls; i--) {
      lastIds.push(messages[i].tool_call_id)
    }
    const answer = this.benchScript.respondAfter(lastIds)
    const message = answer.type === "text"
      ? new AIMessage({ content: answer.text })
      : new AIMessage({
        content: "",
        tool_calls: answer.calls.map((call) => ({ type: "tool_call", id: call.id, name: call.name, args: { ...call.input } }))
      })
    return { generations: [{ text: answer.type === "text" ? answer.text : "", message }] }
  }
}

export const echoTool = ({ spec, script }) =>
  tool(
    async ({ text }) => {
      script.toolStart()
      if (spec.toolMs > 0) await sleep(spec.toolMs)
      script.toolEnd()
      return text
    },
    { name: "echo", description: "Returns its input", schema: z.object({ text: z.string() }) }
  )

/** The final text of an agent's result, after checking it holds every message of the chain. */
export const lastText = (name, spec, result) => {
  const expected = 1 + spec.rounds * (1 + spec.calls) + 1
  if (result.messages.length !== expected) {
    throw new Error(`${name}: ${result.messages.length} messages in the result, expected ${expected}`)
  }
  const last = result.messages[result.messages.length - 1]
  return typeof last.content === "string" ? last.content : last.text
}

/** Supersteps a chain needs, with room to spare (LangGraph's default limit is 25). */
export const recursionLimit = (spec) => 2 * spec.rounds + 10

// LangGraph's durable counterpart of bench/durable.ts, on the same
// PostgreSQL and the same workload: createReactAgent with the Postgres
// checkpointer (a checkpoint at every superstep), a scripted model with no
// latency that asks for one echo call per round for 5 rounds, then answers.
// `durability` is LangGraph's own option: "async" (its default) writes each
// checkpoint while the next step already runs; "sync" finishes writing it
// before the next step starts, as a loopwork durable step records its
// result before the run goes on.
//
// Warm-up and measurement as bench/durable.ts's: runs for at least <warm-ms>
// (at least 3), then runs for at least <measure-ms> and at least <runs>.
//
//   LANGGRAPH_DATABASE_URL=<postgres url> node bench/durable-langgraph.mjs <runs> [async|sync] [warm-ms] [measure-ms]   prints RESULT <json>
import { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { z } from "zod"

const url = process.env.LANGGRAPH_DATABASE_URL
const [runsArg, durabilityArg = "async", warmArg = "1000", measureArg = "2000"] = process.argv.slice(2)
const runs = Number(runsArg)
const warmMs = Number(warmArg)
const measureMs = Number(measureArg)
if (durabilityArg !== "async" && durabilityArg !== "sync") throw new Error(`durability: "async" or "sync", not ${durabilityArg}`)
const durability = durabilityArg
const ROUNDS = 5

class Scripted extends BaseChatModel {
  _llmType() {
    return "scripted"
  }
  bindTools(tools, kwargs) {
    return this.withConfig({ tools, ...kwargs })
  }
  async _generate(messages) {
    const seen = messages.filter((m) => m.type === "tool").length
    const message = seen < ROUNDS
      ? new AIMessage({ content: "", tool_calls: [{ id: `c${seen + 1}`, name: "echo", args: { text: "hi" }, type: "tool_call" }] })
      : new AIMessage({ content: "done" })
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] }
  }
}

const echo = tool(async ({ text }) => text, { name: "echo", description: "Returns its input", schema: z.object({ text: z.string() }) })
const checkpointer = PostgresSaver.fromConnString(url)
await checkpointer.setup()
const agent = createReactAgent({ llm: new Scripted({}), tools: [echo], checkpointer })
const once = async (id) => {
  const result = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { configurable: { thread_id: id }, recursionLimit: 100, durability })
  const last = result.messages[result.messages.length - 1]
  if (last.content !== "done" || result.messages.filter((m) => m.getType() === "tool").length !== ROUNDS) throw new Error("wrong run")
}
/** Runs one after another for at least `ms` and at least `min` runs; how many ran and for how long. */
const runsFor = async (prefix, ms, min) => {
  const start = performance.now()
  let count = 0
  while (count < min || performance.now() - start < ms) await once(`${prefix}-${count++}`)
  return { count, ms: performance.now() - start }
}
await runsFor("warm-up", warmMs, 3)
const measured = await runsFor("long", measureMs, runs)
const msPerRun = measured.ms / measured.count
await checkpointer.end()
console.log(`RESULT ${JSON.stringify({ msPerRun: Number(msPerRun.toFixed(2)), msPerCall: Number((msPerRun / (2 * ROUNDS + 1)).toFixed(3)) })}`)

// The floor: the loop written by hand with no library. It does what every row
// has to do (ask the model, run the calls it asked for, append the assistant
// turn and the results, repeat until text) and nothing more.

import { sleep } from "../lib/script.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "floor",
  label: "plain async loop (no library)",
  stub: "the script's answers, as they are",
  baseline: "loopwork-scripted",
  sameStub: false,
  packages: [],
  notes: "the calls of one answer run with Promise.all; the conversation is a plain array",

  async setup({ spec, script }) {
    const ask = async (messages) => {
      if (spec.modelMs > 0) await sleep(spec.modelMs)
      const lastIds = []
      for (let i = messages.length - 1; i >= 0 && messages[i].role === "tool" && lastIds.length < spec.calls; i--) lastIds.push(messages[i].id)
      return script.respondAfter(lastIds)
    }
    const echo = async ({ text }) => {
      script.toolStart()
      if (spec.toolMs > 0) await sleep(spec.toolMs)
      script.toolEnd()
      return text
    }
    return {
      async runChain() {
        const messages = [{ role: "user", content: "go" }]
        for (;;) {
          const answer = await ask(messages)
          if (answer.type === "text") {
            if (messages.length !== 1 + spec.rounds * (1 + spec.calls)) throw new Error(`floor: ${messages.length} messages, expected ${1 + spec.rounds * (1 + spec.calls)}`)
            return answer.text
          }
          messages.push({ role: "assistant", calls: answer.calls })
          const outputs = await Promise.all(answer.calls.map((call) => echo(call.input)))
          outputs.forEach((output, i) => messages.push({ role: "tool", id: answer.calls[i].id, content: output }))
        }
      }
    }
  }
}

// loopwork on its scripted model (ScriptedModel from loopwork/testing), which
// hands the loop decoded answers: the library's own floor.

import { ScriptedModel } from "loopwork/testing"
import { loopworkNotes, loopworkRunner } from "../lib/loopwork-run.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "loopwork-scripted",
  label: "loopwork Chain.run, ScriptedModel",
  stub: "ScriptedModel.make (loopwork/testing)",
  baseline: "loopwork-scripted",
  sameStub: true,
  packages: ["loopwork", "effect"],
  notes: `ScriptedModel.make([turn], { repeat: true, record: 0 }), the turn a function of the request; ${loopworkNotes}`,

  async setup({ spec, script }) {
    const turn = (request) => {
      const content = request.prompt.content
      const last = content[content.length - 1]
      const lastIds = last?.role === "tool" ? last.content.filter((part) => part.type === "tool-result").map((part) => part.id) : []
      const answer = script.respondAfter(lastIds)
      return answer.type === "text"
        ? { text: answer.text }
        : { toolCalls: answer.calls.map((call) => ({ id: call.id, name: call.name, params: call.input })) }
    }
    const model = ScriptedModel.make([turn], { repeat: true, record: 0, ...(spec.modelMs > 0 ? { latency: spec.modelMs } : {}) })
    return loopworkRunner({ spec, script }, model.layer)
  }
}

/**
 * A durable HIERARCHICAL body stores when each delegation that did not
 * succeed ended, under the tool call that asked for it: the activity is
 * `v<version>/delegation/<call id>/<n>/ended`. Named after the call (not
 * after the order its handler started in, which a waiting event sink can
 * change on a replay), a replayed delegation reads its own stored time,
 * never another's. Golden list on one SQLite database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble, DurableSqlite } from "../../src/durable/index.ts"

/** The manager asks for two agents that do not exist (both blocked at once), then answers. */
const model = ChatModel.scripted([
  (request) => {
    const results = request.prompt.content.filter((message) => message.role === "tool").length
    if (results > 0) return { text: "Manager done" }
    return {
      toolCalls: [
        { id: "b1", name: "delegateTask", params: { agentRole: "Nobody", taskDescription: "Idle" } },
        { id: "b2", name: "delegateTask", params: { agentRole: "Ghost", taskDescription: "Haunt" } }
      ]
    }
  }
], { repeat: true })

describe("DurableEnsemble: the stored end of a delegation that did not succeed", () => {
  it.live("is named after its tool call", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const ensemble = yield* Ensemble.make({
        agents: [writer],
        tasks: [yield* Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })],
        workflow: "HIERARCHICAL"
      })
      const W = DurableEnsemble.workflow("Ended", ensemble)
      const live = DurableEnsemble.layer(W).pipe(
        Layer.provideMerge(DurableSqlite.runner({ filename: ":memory:", pollInterval: "10 millis" })),
        Layer.provide(model.layer)
      )
      const names = yield* Effect.gen(function*() {
        const output = yield* W.execute({ id: "e1", inputs: {} })
        expect(output.delegations.map((r) => `${r.request.agentRole}:${r.response.status}`)).toEqual(["Nobody:FAILURE", "Ghost:FAILURE"])
        const sql = yield* SqlClient
        const rows = yield* sql<{ payload: string }>`SELECT payload FROM cluster_messages WHERE tag = 'activity' ORDER BY rowid`
        return rows.map((row) => (JSON.parse(row.payload) as { name: string }).name)
      }).pipe(Effect.provide(live))
      expect(names.filter((name) => name.includes("/delegation/"))).toEqual(["v1/delegation/b1/1/ended", "v1/delegation/b2/1/ended"])
    }))
})

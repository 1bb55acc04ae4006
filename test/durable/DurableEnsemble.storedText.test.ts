/**
 * (helper-66's probe) model text that a store may change (NUL, a lone surrogate, a
 * huge answer), in a durable HIERARCHICAL run on SQLite. The durable
 * output must be Ensemble.run's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble, DurableSqlite } from "../../src/durable/index.ts"

const odd = `before\u0000after \uD800 lone \uDFFF ${"€".repeat(10)} ${"y".repeat(200_000)}`

const model = () =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      if (text.includes("You are Manager.")) {
        return request.prompt.content.some((m) => m.role === "tool")
          ? { text: `Manager: ${odd.slice(0, 40)}` }
          : { toolCalls: [{ id: "d1\u0000x", name: "delegateTask", params: { agentRole: "Writer", taskDescription: `Write ${odd.slice(0, 30)}`, taskNumber: 1 } }] }
      }
      return { text: odd }
    }
  ], { repeat: true })

describe("text a store may change", () => {
  it.live("NUL, lone surrogates and a large answer round-trip through SQLite as Ensemble.run gives them", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task], workflow: "HIERARCHICAL" })
      const plain = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(model().layer))
      const dir = mkdtempSync(join(tmpdir(), "probe-text-"))
      const W = DurableEnsemble.workflow("OddText", ensemble)
      const live = DurableEnsemble.layer(W).pipe(Layer.provide(model().layer), Layer.provideMerge(DurableSqlite.runner({ filename: join(dir, "runs.db") })))
      const durable = yield* Effect.provide(W.execute({ id: "o1", inputs: {} }), live).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      expect(durable.raw).toBe(plain.raw)
      expect(durable.taskOutputs.map((o) => o.raw)).toEqual(plain.taskOutputs.map((o) => o.raw))
      expect(durable.delegations.map((d) => [d.request.taskDescription, d.response.rawOutput])).toEqual(plain.delegations.map((d) => [d.request.taskDescription, d.response.rawOutput]))
    }), 60_000)
})

/**
 * (helper-66's probe) a hostile manager answer (duplicated call ids, an id in the loop's
 * own renaming scheme, unknown and prototype roles, the same delegation
 * repeated) in a durable HIERARCHICAL run whose parent replays (a worker's
 * child suspends once, then is resumed). The durable run must end as
 * Ensemble.run does, and no child may start twice.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"
import { pausingHandlers, pauses } from "../support/durableEnsemble.ts"

const hostileCalls = [
  { id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research tides", taskNumber: 1 } },
  { id: "d1", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write A", taskNumber: 2 } },
  { id: "loopwork_1_2", name: "delegateTask", params: { agentRole: "writer ", taskDescription: "Write B", taskNumber: 2 } },
  { id: "d2", name: "delegateTask", params: { agentRole: "constructor", taskDescription: "x" } },
  { id: "d3", name: "delegateTask", params: { agentRole: "__proto__", taskDescription: "x", taskNumber: 1 } },
  { id: "d4", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write A", taskNumber: 2 } }
]

const model = (calls: Map<string, number>) =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      calls.set(role, (calls.get(role) ?? 0) + 1)
      const results = request.prompt.content.filter((m) => m.role === "tool").length
      if (role === "Manager") return results === 0 ? { toolCalls: hostileCalls } : { text: `Manager saw ${(text.match(/(Researcher|Writer) done/g) ?? []).length} outputs` }
      if (role === "Researcher" && results === 0) return { toolCalls: [{ id: "p1", name: "pause", params: {} }] }
      return { text: `${role} done` }
    }
  ], { repeat: true })

const rec = (r: Delegation.DelegationRecord) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}:${r.response.errors.join("|")}`

describe("hostile manager answer, durable with a replay", () => {
  it.effect("ends as Ensemble.run; each approved child starts once; unknown roles start none", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit: pauses })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const research = yield* Task.make({ description: "Research tides", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Essay", agent: writer, context: [research] })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write], workflow: "HIERARCHICAL" })

      const plainCalls = new Map<string, number>()
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model(plainCalls).layer, pausingHandlers(false))))

      const calls = new Map<string, number>()
      const W = DurableEnsemble.workflow("HostileReplay", ensemble)
      const live = DurableEnsemble.layer(W).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide([model(calls).layer, pausingHandlers(true)])
      )
      const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }
      const output = yield* Effect.provide(
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(W.execute({ id: "r1", inputs: {} }))
          const parent = yield* W.executionId({ id: "r1", inputs: {} })
          const child = childWorkflows("HostileReplay").delegation
          const id = yield* child.executionId({ parent, key: "d1/1", inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
          let suspended = false
          for (let i = 0; i < 10_000; i++) {
            const polled = yield* child.poll(id)
            if (Option.isSome(polled) && polled.value._tag === "Suspended") {
              suspended = true
              break
            }
            yield* Effect.yieldNow
          }
          expect(suspended).toBe(true)
          yield* child.resume(id)
          return yield* Fiber.join(fiber)
        }),
        live
      ).pipe(Effect.timeout("20 seconds"))

      expect(output.raw).toBe(expected.raw)
      expect(output.delegations.map(rec)).toEqual(expected.delegations.map(rec))
      expect(output.taskOutputs.map((o) => o.raw)).toEqual(expected.taskOutputs.map((o) => o.raw))
      // The manager's two turns are recorded; workers: Researcher 2 turns, Writer 1 per approved delegation (3).
      expect(Object.fromEntries(calls)).toEqual(Object.fromEntries(plainCalls))
      expect(expected.delegations.filter((d) => d.response.status === "SUCCESS").length).toBe(4)
    }), 30_000)
})

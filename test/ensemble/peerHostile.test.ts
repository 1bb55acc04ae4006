/**
 * (helper-66's probe) an agent's peer `delegate` calls with hostile roles, in a PARALLEL
 * and a SEQUENTIAL ensemble, plain and durable (each task a child). Refused
 * as the tool's result; no worker for an unknown role; durable ends as plain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"

const roles = [...Object.getOwnPropertyNames(Object.prototype), "prototype", "", " ", "Clerk", "clerk", "R\u0435viewer", "Reviewer", "x".repeat(300_000)]
const calls = roles.map((agentRole, i) => ({ id: `p${i}`, name: "delegate", params: { agentRole, taskDescription: `sub ${i}` } }))

const model = () => {
  const workers: Array<string> = []
  const scripted = ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      const results = request.prompt.content.filter((m) => m.role === "tool").length
      if (role === "Clerk") return results === 0 ? { toolCalls: calls } : { text: `Clerk got ${results}` }
      workers.push(role)
      return { text: `${role} done` }
    }
  ], { repeat: true })
  return { scripted, workers }
}

const rec = (r: Delegation.DelegationRecord) => `${r.delegatingRole}>${r.request.agentRole.slice(0, 30)}:${r.response.status}:${r.response.errors.join("|").slice(0, 100)}`

let n = 0
describe("hostile peer delegations", () => {
  for (const workflow of ["SEQUENTIAL", "PARALLEL"] as const) {
    it.effect(`${workflow}: refused or run once, durable as plain`, () =>
      Effect.gen(function*() {
        const clerk = yield* Agent.make({ role: "Clerk", goal: "Help", allowDelegation: true })
        const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review" })
        const t1 = yield* Task.make({ description: "Handle it", expectedOutput: "Done", agent: clerk })
        const t2 = yield* Task.make({ description: "Review it", expectedOutput: "Done", agent: reviewer })
        const ensemble = yield* Ensemble.make({ agents: [clerk, reviewer], tasks: [t1, t2], workflow })
        const p = model()
        const plain = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(p.scripted.layer))
        const d = model()
        const events: Array<EnsembleEvent.EnsembleEvent> = []
        const W = DurableEnsemble.workflow(`Peer${++n}`, ensemble)
        const live = DurableEnsemble.layer(W).pipe(
          Layer.provideMerge(WorkflowEngine.layerMemory),
          Layer.provide([d.scripted.layer, Layer.succeed(EnsembleEvent.Sink, { publish: (e) => Effect.sync(() => void events.push(e)) })])
        )
        const exit = yield* Effect.exit(W.execute({ id: "x", inputs: {} }).pipe(Effect.provide(live)))
        if (Exit.isFailure(exit)) return expect.fail(Cause.pretty(exit.cause))
        const durable = exit.value
        expect(durable.raw).toBe(plain.raw)
        expect(durable.delegations.map(rec)).toEqual(plain.delegations.map(rec))
        // Only the Reviewer is reached: by its own task and the one peer delegation that names it exactly.
        expect(p.workers.sort()).toEqual(["Reviewer", "Reviewer"])
        expect(d.workers.sort()).toEqual(p.workers.sort())
        expect(durable.delegations.filter((r) => r.response.status === "SUCCESS").map((r) => r.request.agentRole)).toEqual(["Reviewer"])
        // every event encodes
        expect(() => events.map((e) => Schema.encodeSync(EnsembleEvent.EnsembleEvent)(e))).not.toThrow()
      }), 60_000)
  }
})

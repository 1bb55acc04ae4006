/**
 * A durable ensemble whose event sink makes a delegation's start wait: the
 * handlers of one manager answer must still take the delegation budget in
 * call order, so a replay (the parent woken again, its children's results
 * from storage) decides as the first run did and starts no child twice.
 *
 * The manager asks for three delegations at once with `maxDelegations: 2`;
 * in the first run only, the sink holds the report of the first call's
 * start for a few turns of the runtime. Beta's child pauses once, which
 * makes the parent replay.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"
import { pauses, pausingHandlers } from "../support/durableEnsemble.ts"

/** The manager asks for Alpha, Beta and Checker at once, then answers; Beta pauses once first. */
const model = (calls: Map<string, number>) =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      calls.set(role, (calls.get(role) ?? 0) + 1)
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      if (role === "Manager") {
        if (results > 0) return { text: "Manager done" }
        return {
          toolCalls: [
            { id: "d1", name: "delegateTask", params: { agentRole: "Alpha", taskDescription: "First" } },
            { id: "d2", name: "delegateTask", params: { agentRole: "Beta", taskDescription: "Second" } },
            { id: "d3", name: "delegateTask", params: { agentRole: "Checker", taskDescription: "Third" } }
          ]
        }
      }
      if (role === "Beta" && results === 0) return { toolCalls: [{ id: "p1", name: "pause", params: {} }] }
      return { text: `${role} done` }
    }
  ], { repeat: true })

const team = Effect.gen(function*() {
  const alpha = yield* Agent.make({ role: "Alpha", goal: "Do the first part" })
  const beta = yield* Agent.make({ role: "Beta", goal: "Do the second part", toolkit: pauses })
  const checker = yield* Agent.make({ role: "Checker", goal: "Check" })
  const task = yield* Task.make({ description: "Do it all", expectedOutput: "Done", agent: alpha })
  return yield* Ensemble.make({ agents: [alpha, beta, checker], tasks: [task], workflow: "HIERARCHICAL", maxDelegations: 2 })
})

/** A sink that, the first time it sees the manager's call `d1` start, holds it for a few turns of the runtime. */
const holdingSink = () => {
  let held = false
  return Layer.succeed(EnsembleEvent.Sink, {
    publish: (event) => {
      if (held || event._tag !== "AgentRun" || event.event._tag !== "ToolCallStarted" || event.event.id !== "d1") return Effect.void
      held = true
      return Effect.repeat(Effect.yieldNow, { times: 20 })
    }
  })
}

const records = (delegations: ReadonlyArray<Delegation.DelegationRecord>) =>
  delegations.map((r) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}`).sort()

const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

describe("DurableEnsemble with an event sink that makes a start wait", () => {
  it.effect("the delegation budget goes to the calls in call order, the first run and its replay alike: no child starts twice", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      const plain = new Map<string, number>()
      const expected = yield* Ensemble.run(ensemble, {}).pipe(
        Effect.flip,
        Effect.provide(Layer.mergeAll(model(plain).layer, pausingHandlers(false), holdingSink()))
      )

      const calls = new Map<string, number>()
      const W = DurableEnsemble.workflow("Held", ensemble)
      const live = DurableEnsemble.layer(W).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide([model(calls).layer, pausingHandlers(true), holdingSink()])
      )
      const output = yield* Effect.provide(
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(W.execute({ id: "h1", inputs: {} }))
          const parent = yield* W.executionId({ id: "h1", inputs: {} })
          const child = childWorkflows("Held").delegation
          const beta = yield* child.executionId({ parent, key: "d2/1", inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
          while (true) {
            const polled = yield* child.poll(beta)
            if (Option.isSome(polled) && polled.value._tag === "Suspended") break
            yield* Effect.yieldNow
          }
          yield* child.resume(beta)
          return yield* Effect.flip(Fiber.join(fiber))
        }),
        live
      )
      // The third delegation finds the budget used up, which ends the run (BudgetExceededError) once the others are done.
      expect(expected._tag).toBe("BudgetExceededError")
      expect(output._tag).toBe("BudgetExceededError")
      const delegations = (error: typeof output) => "delegations" in error ? error.delegations : []
      expect(records(delegations(expected))).toEqual(["Manager>Alpha:SUCCESS", "Manager>Beta:SUCCESS", "Manager>Checker:FAILURE"])
      expect(records(delegations(output))).toEqual(records(delegations(expected)))
      // Each approved worker's model was asked once per turn, in one child: none started twice, the refused one never.
      expect(calls.get("Alpha")).toBe(1)
      expect(calls.get("Beta")).toBe(2)
      expect(calls.get("Checker")).toBe(undefined)
    }), 30_000)
})

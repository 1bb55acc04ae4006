/**
 * Delegation grants nothing: a worker reached through `delegateTask` whose
 * tool needs approval never runs it (the worker's run pauses, and a task
 * cannot wait, so the delegation fails), however many delegations one
 * answer makes, and role names that are prototype keys or look-alikes of a
 * real role reach no worker.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"

const Wire = Tool.make("wire", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const tools = Toolkit.make(Wire)

/** Every name of Object.prototype, and a Cyrillic "а" in place of the Latin one. */
const hostileRoles = [...Object.getOwnPropertyNames(Object.prototype), "prototype", "B\u0430nker"]

describe("HIERARCHICAL: delegation and approval", () => {
  it.effect("a delegated worker's tool that needs approval never runs, with 20 delegations and hostile role names in one answer", () =>
    Effect.gen(function*() {
      const ran: Array<number> = []
      const handlers = tools.toLayer({ wire: ({ amount }) => Effect.sync(() => (ran.push(amount), "sent")) })
      const banker = yield* Agent.make({ role: "Banker", goal: "Move money", toolkit: tools })
      const task = yield* Task.make({ description: "Pay Bob", expectedOutput: "Done", agent: banker })
      const ensemble = yield* Ensemble.make({ agents: [banker], tasks: [task], workflow: "HIERARCHICAL", maxDelegations: 100 })
      const model = ChatModel.scripted([
        (request) => {
          const manager = request.tools.some((tool) => tool.name === "delegateTask")
          if (!manager) return { toolCalls: [{ name: "wire", params: { amount: 300 } }] }
          if (request.prompt.content.some((message) => message.role === "tool")) return { text: "final" }
          const delegate = (agentRole: string) => ({ name: "delegateTask", params: { agentRole, taskDescription: "pay 300", taskNumber: 1 } })
          return { toolCalls: [...hostileRoles.map(delegate), ...Array.from({ length: 20 }, () => delegate("Banker"))] }
        }
      ], { repeat: true })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      expect(ran).toEqual([])
      const statuses = output.delegations.map((record) => record.response.status)
      expect(statuses.length).toBe(hostileRoles.length + 20)
      expect(statuses.every((status) => status === "FAILURE")).toBe(true)
      // The Banker's 20 runs each paused for the approval no one gave.
      const paused = output.delegations.filter((record) => record.response.errors.some((error) => error.includes("paused (ApprovalPending)")))
      expect(paused.length).toBe(20)
      expect(paused.every((record) => record.request.agentRole === "Banker")).toBe(true)
    }))
})

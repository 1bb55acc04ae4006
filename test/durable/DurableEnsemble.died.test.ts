/**
 * A delegation whose child workflow dies — its body with a defect it did not
 * catch, or the parent's start of it with a defect that is not the engine's
 * — fails as a failing worker does: a FAILURE record whose error says what
 * happened (credentials redacted), and the manager gets the tool's failure
 * and goes on, its records, constraints and budgets as they were. An error
 * of the engine or its storage (effect's cluster, SQL and RPC errors) when
 * the parent starts the child is not the child's answer: the parent dies
 * with it, as on any engine error, and no recorded turn answers a failure a
 * replay would not see. On the memory engine, wrapped to die where a real
 * engine or its storage could.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { ClusterError } from "effect/cluster"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"

const secret = "hunter2"

/** What dies: a connection string with its password in it, as a storage error could say. */
const defect = () => new Error(`lost the connection to postgres://runner:${secret}@db:5432/runs (password=${secret})`)

/** A delegation payload's worker, whatever else it holds. */
const roleOf = (payload: unknown): unknown =>
  typeof payload === "object" && payload !== null && "role" in payload ? payload.role : undefined

/**
 * The memory engine, except that the researcher's delegation dies: in its
 * child's body (`"body"`), or when the parent starts it, with a plain
 * defect (`"start"`) or with the engine's storage error (`"engine"`).
 * Bodies run with this engine, so their children start through it.
 */
const dying = (name: string, where: "body" | "start" | "engine") =>
  Layer.effect(WorkflowEngine.WorkflowEngine)(Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    const doomed = (workflow: { readonly _tag: string }, payload: unknown) =>
      workflow._tag === `${name}/delegation` && roleOf(payload) === "Researcher"
    const register: typeof engine.register = (workflow, execute) =>
      engine.register(workflow, (payload, id) =>
        where === "body" && doomed(workflow, payload)
          ? Effect.die(defect())
          : Effect.provideService(execute(payload, id), WorkflowEngine.WorkflowEngine, wrapped))
    const execute = ((workflow, options) =>
      where !== "body" && doomed(workflow, options.payload)
        ? Effect.die(where === "start" ? defect() : new ClusterError.PersistenceError({ cause: defect() }))
        : engine.execute(workflow, options)) as typeof engine.execute
    const wrapped = WorkflowEngine.WorkflowEngine.of({ ...engine, register, execute })
    return wrapped
  })).pipe(Layer.provide(WorkflowEngine.layerMemory))

/** The manager delegates to the researcher, then to the writer, then answers with what the tools told it. */
const model = () =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      const results = request.prompt.content.flatMap((message) =>
        message.role === "tool" ? message.content.flatMap((part) => part.type === "tool-result" ? [JSON.stringify(part.result)] : []) : []
      )
      if (role !== "Manager") return { text: `${role} done` }
      if (results.length === 0) return { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } }] }
      if (results.length === 1) return { toolCalls: [{ id: "d2", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } }] }
      return { text: `Manager saw: ${results.join(" | ")}` }
    }
  ], { repeat: true })

const records = (delegations: ReadonlyArray<Delegation.DelegationRecord>) =>
  delegations.map((r) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}`)

describe("DurableEnsemble: a delegation whose child dies", () => {
  it.effect.each(["body", "start"] as const)("in its %s: a FAILURE record with a redacted reason, and the manager goes on", (where) =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts" })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const tasks = yield* Effect.all([
        Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
        Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })
      ])
      // Required workers count completed delegations: the writer's must still count after the researcher's died.
      const ensemble = yield* Ensemble.make({
        agents: [researcher, writer],
        tasks,
        workflow: "HIERARCHICAL",
        maxDelegations: 2,
        constraints: { requiredWorkers: ["Writer"] }
      })
      const name = `Died${where}`
      const W = DurableEnsemble.workflow(name, ensemble)
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const sink = Layer.succeed(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => void events.push(event)) })
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(dying(name, where)), Layer.provide([model().layer, sink]))
      const output = yield* Effect.provide(W.execute({ id: "x1", inputs: {} }), live)

      expect(records(output.delegations)).toEqual(["Manager>Researcher:FAILURE", "Manager>Writer:SUCCESS"])
      const failed = output.delegations[0].response
      expect(failed.workerRole).toBe("Researcher")
      expect(failed.rawOutput).toBeNull()
      expect(failed.errors).toHaveLength(1)
      expect(failed.errors[0]).toMatch(new RegExp(`^its child workflow '${name}/delegation' died: lost the connection to postgres://`))
      expect(failed.errors[0]).toContain("[REDACTED]")
      expect(failed.errors[0]).toMatch(/not an answer of the agent: fix the defect or the engine's storage$/)
      expect(JSON.stringify(output)).not.toContain(secret)
      // The manager got the worker's failure as the tool's, as from any failing worker, and went on.
      expect(output.raw).toContain(`Worker 'Researcher' failed: its child workflow '${name}/delegation' died`)
      expect(output.raw).toContain("Writer done")
      expect(output.raw).not.toContain("failed unexpectedly")
      const announced = events.filter((event) => event._tag === "DelegationFailed")
      expect(announced).toHaveLength(1)
      expect(announced[0]).toMatchObject({ _tag: "DelegationFailed", workerRole: "Researcher", delegatingRole: "Manager" })
      expect(JSON.stringify(events)).not.toContain(secret)
    }))

  it.effect("an engine error when the parent starts it: not the worker's answer; the manager's task fails with it, recorded nowhere", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts" })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const tasks = yield* Effect.all([
        Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
        Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })
      ])
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks, workflow: "HIERARCHICAL", maxDelegations: 2 })
      const name = "DiedEngine"
      const W = DurableEnsemble.workflow(name, ensemble)
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const sink = Layer.succeed(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => void events.push(event)) })
      const scripted = model()
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(dying(name, "engine")), Layer.provide([scripted.layer, sink]))
      const exit = yield* Effect.provide(Effect.exit(W.execute({ id: "x1", inputs: {} })), live)

      if (Exit.isSuccess(exit)) throw new Error(`the run succeeded: ${JSON.stringify(exit.value.delegations)}`)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error._tag).toBe("TaskExecutionError")
      expect(error.message).toContain("unexpected error: ~effect/cluster/ClusterError/PersistenceError: lost the connection to postgres://")
      expect(JSON.stringify(error)).not.toContain(secret)
      // The manager was never answered with a worker's failure: one model call, its own, and no failure recorded.
      expect(scripted.calls).toBe(1)
      expect(events.filter((event) => event._tag === "DelegationFailed")).toEqual([])
    }))
})

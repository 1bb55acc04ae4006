/**
 * DurableEnsemble on the memory engine: SEQUENTIAL and PARALLEL ensembles
 * as a parent workflow whose tasks are child workflows end with the output
 * `Ensemble.run` gives, and so do HIERARCHICAL ones, whose delegations are
 * child workflows keyed by the tool call that asked for them; each tool
 * call runs once, also when the same execution is asked for again; failures
 * are the ensemble's own errors.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, Task, type TaskOutput } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import type { NotDurableChain } from "../../src/durable/DurableError.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

/** Replay-safe: each reply is chosen from the request (the agent's role, the tool results so far). */
const model = () =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      const topic = /about (\w+)/.exec(text)?.[1] ?? "?"
      const looked = request.prompt.content.some((message) => message.role === "tool")
      if (role === "Researcher" && !looked) return { toolCalls: [{ name: "lookup", params: { query: topic } }] }
      return { text: `${role} on ${topic}${role === "Writer" ? ` using ${(text.match(/Researcher on \w+/g) ?? []).length} findings` : ""}` }
    }
  ], { repeat: true })

const team = (workflow: "SEQUENTIAL" | "PARALLEL") =>
  Effect.gen(function*() {
    const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
    const tides = yield* Task.make({ description: "Research about tides", expectedOutput: "Facts", agent: researcher })
    const moons = yield* Task.make({ description: "Research about {topic}", expectedOutput: "Facts", agent: researcher })
    const essay = yield* Task.make({ description: "Write about tides", expectedOutput: "An essay", agent: writer, context: [tides, moons] })
    return yield* Ensemble.make({ agents: [researcher, writer], tasks: [tides, moons, essay], workflow })
  })

/** Only the idempotency key (parent and position or call) names a child execution; the rest of a payload does not. */
const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

const summary = (output: TaskOutput.TaskOutput) => ({ raw: output.raw, task: output.taskDescription, role: output.agentRole, tools: output.toolCallCount })

describe("DurableEnsemble", () => {
  it.effect.each(["SEQUENTIAL", "PARALLEL"] as const)("%s: the durable output is Ensemble.run's; each tool call ran once, also when asked for again", (workflow) =>
    Effect.gen(function*() {
      const ensemble = yield* team(workflow)
      const plain = makeHandlers()
      const expected = yield* Ensemble.run(ensemble, { topic: "moons" }).pipe(Effect.provide(Layer.merge(model().layer, plain.layer)))
      const durable = makeHandlers()
      const Report = DurableEnsemble.workflow(`Report${workflow}`, ensemble)
      const live = DurableEnsemble.layer(Report).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide([model().layer, durable.layer])
      )
      const payload = { id: "r1", inputs: { topic: "moons" } }
      const [first, again, children] = yield* Effect.provide(
        Effect.gen(function*() {
          const first = yield* Report.execute(payload)
          const again = yield* Report.execute(payload)
          // Each task ran as a child workflow of the execution, keyed by its position.
          const parent = yield* Report.executionId(payload)
          const child = childWorkflows(`Report${workflow}`).task
          const children = yield* Effect.forEach([0, 1, 2], (index) =>
            Effect.flatMap(child.executionId({ parent, index, inputs: {}, context: [], usage: unused }), (id) =>
              Effect.map(child.poll(id), (polled) => Option.isSome(polled) ? polled.value._tag : "not started")))
          return [first, again, children] as const
        }),
        live
      )
      expect(children).toEqual(["Complete", "Complete", "Complete"])
      expect(first.raw).toBe(expected.raw)
      expect(first.raw).toBe("Writer on tides using 2 findings")
      const order = (outputs: ReadonlyArray<TaskOutput.TaskOutput>) => outputs.map(summary).sort((a, b) => a.task.localeCompare(b.task))
      expect(order(first.taskOutputs)).toEqual(order(expected.taskOutputs))
      expect(first.totalToolCalls).toBe(expected.totalToolCalls)
      expect(again.raw).toBe(first.raw)
      expect([...durable.queries].sort()).toEqual([...plain.queries].sort())
      expect(durable.queries).toHaveLength(2)
    }))

  it.effect("a task that fails fails the execution with the ensemble's TaskExecutionError, the outputs so far kept", () =>
    Effect.gen(function*() {
      const ensemble = yield* team("SEQUENTIAL")
      const failing = ChatModel.scripted([
        (request) => JSON.stringify(request.prompt.content).includes("You are Writer.")
          ? Effect.fail(new (class extends Error {})("the provider is down")) as never
          : { text: "facts" }
      ], { repeat: true })
      const Report = DurableEnsemble.workflow("ReportFailing", ensemble)
      const live = DurableEnsemble.layer(Report).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide([failing.layer, makeHandlers().layer])
      )
      const error = yield* Effect.flip(Effect.provide(Report.execute({ id: "r2", inputs: { topic: "moons" } }), live))
      expect(error._tag).toBe("TaskExecutionError")
      if (error._tag !== "TaskExecutionError") return
      expect(error.agentRole).toBe("Writer")
      expect(error.completedOutputs.map((output) => output.raw)).toEqual(["facts", "facts"])
    }))

  it.effect("HIERARCHICAL: the durable output and delegation records are Ensemble.run's; each delegation is a child keyed by its call", () =>
    Effect.gen(function*() {
      const managed = ChatModel.scripted([
        (request) => {
          const text = JSON.stringify(request.prompt.content)
          const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
          const results = request.prompt.content.filter((message) => message.role === "tool").length
          if (role === "Manager") {
            if (results === 0) return { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research about tides", taskNumber: 1 } }] }
            if (results === 1) return { toolCalls: [{ id: "d2", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write about tides", taskNumber: 2 } }] }
            return { text: `Manager: ${(text.match(/Writer on \w+ with \d+ findings?/g) ?? []).join(", ")}` }
          }
          const topic = /about (\w+)/.exec(text)?.[1] ?? "?"
          if (role === "Researcher") return results === 0 ? { toolCalls: [{ id: "r1", name: "lookup", params: { query: topic } }] } : { text: `Researcher on ${topic}` }
          // The writer asks a peer first: a delegation from inside a delegated worker.
          if (results === 0) return { toolCalls: [{ id: "p1", name: "delegate", params: { agentRole: "Researcher", taskDescription: "Research about moons" } }] }
          return { text: `Writer on ${topic} with ${(text.match(/Researcher on \w+/g) ?? []).length} findings` }
        }
      ], { repeat: true })
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly", allowDelegation: true })
      const tides = yield* Task.make({ description: "Research about tides", expectedOutput: "Facts", agent: researcher })
      const essay = yield* Task.make({ description: "Write about tides", expectedOutput: "An essay", agent: writer, context: [tides] })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [tides, essay], workflow: "HIERARCHICAL" })
      const plain = makeHandlers()
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(managed.layer, plain.layer)))
      const durable = makeHandlers()
      const Managed = DurableEnsemble.workflow("Managed", ensemble)
      const live = DurableEnsemble.layer(Managed).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide([managed.layer, durable.layer])
      )
      const [first, again, children] = yield* Effect.provide(
        Effect.gen(function*() {
          const first = yield* Managed.execute({ id: "m1", inputs: {} })
          const again = yield* Managed.execute({ id: "m1", inputs: {} })
          const parent = yield* Managed.executionId({ id: "m1", inputs: {} })
          const child = childWorkflows("Managed").delegation
          const idOf = (parent: string, key: string) =>
            child.executionId({ parent, key, inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
          const status = (id: string) => Effect.map(child.poll(id), (polled) => Option.isSome(polled) ? polled.value._tag : "not started")
          const d2 = yield* idOf(parent, "d2/1")
          // The manager's delegations are children of the parent; the writer's peer delegation, a child of its own.
          const children = yield* Effect.forEach([idOf(parent, "d1/1"), Effect.succeed(d2), idOf(d2, "p1/1"), idOf(parent, "d3/1")], (id) => Effect.flatMap(id, status))
          return [first, again, children] as const
        }),
        live
      )
      expect(children).toEqual(["Complete", "Complete", "Complete", "not started"])
      expect(first.raw).toBe("Manager: Writer on tides with 2 findings")
      expect(first.raw).toBe(expected.raw)
      expect(first.taskOutputs.map(summary)).toEqual(expected.taskOutputs.map(summary))
      expect(first.totalToolCalls).toBe(expected.totalToolCalls)
      const record = (r: Delegation.DelegationRecord) =>
        ({ kind: r.kind, by: r.delegatingRole, depth: r.depth, to: r.response.workerRole, status: r.response.status, raw: r.response.rawOutput })
      expect(first.delegations.map(record)).toEqual(expected.delegations.map(record))
      expect(first.delegations.map(record).map((r) => `${r.by}>${r.to}`)).toEqual(["Manager>Researcher", "Writer>Researcher", "Manager>Writer"])
      expect(again.raw).toBe(first.raw)
      expect(durable.queries).toEqual(plain.queries)
      expect(durable.queries).toEqual(["tides", "moons"])
    }))

  it.effect("a version that is not a whole number, something not an ensemble and a foreign workflow are refused", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })
      const plain = yield* Ensemble.make({ agents: [writer], tasks: [task] })
      expect(() => DurableEnsemble.workflow("Versioned", plain, { version: 0 })).toThrow(/Invalid version/)
      expect(() => DurableEnsemble.workflow("NotAnEnsemble", { workflow: "ROUND_ROBIN" } as never)).toThrow(/an ensemble made by Ensemble.make/)
      const foreign = DurableEnsemble.layer({ _tag: "Foreign" } as never) as Layer.Layer<never, NotDurableChain>
      const error = yield* Effect.flip(Layer.build(foreign).pipe(Effect.scoped))
      expect(error._tag).toBe("NotDurableChain")
      expect(error.message).toContain("DurableEnsemble.workflow")
    }))
})

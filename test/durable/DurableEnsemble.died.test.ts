/**
 * A delegation whose child workflow dies — its body with a defect it did not
 * catch, or the parent's start of it with a plain defect or the engine's
 * storage error — fails the delegating agent's task as a defect does: no
 * FAILURE record, and the manager's model is not told (a recorded turn
 * answering the failure could be contradicted by a replay that finds the
 * child's result after all). A SEQUENTIAL or PARALLEL task whose child
 * dies fails as before, with `TaskExecutionError` and the outputs completed
 * before it. On the memory engine, wrapped to die where a real engine or its
 * storage could; the reason is redacted everywhere.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { ClusterError } from "effect/cluster"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { recording } from "../support/recordingTracer.ts"

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

const team = Effect.gen(function*() {
  const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts" })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  const tasks = yield* Effect.all([
    Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
    Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })
  ])
  return { agents: [researcher, writer], tasks }
})

describe("DurableEnsemble: a delegation whose child dies", () => {
  it.effect.each([
    { where: "body", says: "lost the connection to postgres://[REDACTED]@db:5432/runs" },
    { where: "start", says: "lost the connection to postgres://[REDACTED]@db:5432/runs" },
    { where: "engine", says: "~effect/cluster/ClusterError/PersistenceError: lost the connection to postgres://[REDACTED]@db:5432/runs" }
  ] as const)("in its $where: the manager's task fails with it, no FAILURE record, the manager not told", ({ says, where }) =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks, workflow: "HIERARCHICAL", maxDelegations: 2 })
      const name = `Died${where}`
      const W = DurableEnsemble.workflow(name, ensemble)
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const sink = Layer.succeed(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => void events.push(event)) })
      const scripted = model()
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(dying(name, where)), Layer.provide([scripted.layer, sink]))
      const exit = yield* Effect.provide(Effect.exit(W.execute({ id: "x1", inputs: {} })), live)

      if (Exit.isSuccess(exit)) throw new Error(`the run succeeded: ${JSON.stringify(exit.value.delegations)}`)
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error._tag).toBe("TaskExecutionError")
      expect(error.message).toContain(`unexpected error: its child workflow '${name}/delegation' died: ${says}`)
      expect(JSON.stringify(error)).not.toContain(secret)
      expect(JSON.stringify(events)).not.toContain(secret)
      // The manager made its one call and was never answered with a worker's failure; nothing recorded one.
      expect(scripted.calls).toBe(1)
      expect(events.filter((event) => event._tag === "DelegationFailed")).toEqual([])
    }))
})

describe("DurableEnsemble: the spans of a delegation whose child dies", () => {
  it.effect("loopwork's failed spans, as an exporter writes them, carry no credential", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks, workflow: "HIERARCHICAL", maxDelegations: 2 })
      const name = "DiedSpans"
      const W = DurableEnsemble.workflow(name, ensemble)
      const traced = recording()
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(dying(name, "body")), Layer.provide([model().layer, traced.layer]))
      const exit = yield* Effect.provide(Effect.exit(W.execute({ id: "x1", inputs: {} })), [live, traced.layer])
      expect(Exit.isFailure(exit)).toBe(true)
      // effect/workflow's own `<workflow>.execute` span is effect's, not loopwork's.
      const written = traced.spans.filter((span) => !span.name.endsWith(".execute")).flatMap((span) =>
        span.status._tag === "Ended" && Exit.isFailure(span.status.exit)
          ? Cause.prettyErrors(span.status.exit.cause, { includeCauseInStack: true }).map((error) =>
            `${span.name}: ${[error.name, error.message, error.stack].join("\n")}`
          )
          : []
      )
      expect(written.length).toBeGreaterThan(0)
      expect(written.filter((text) => text.includes(secret)).map((text) => text.split("\n")[0])).toEqual([])
    }))
})

/** The memory engine, except that starting the task child at `doomed` dies with the engine's storage error. */
const failingTaskStart = (name: string, doomed: number) =>
  Layer.effect(WorkflowEngine.WorkflowEngine)(Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    const indexOf = (payload: unknown): unknown => typeof payload === "object" && payload !== null && "index" in payload ? payload.index : undefined
    const register: typeof engine.register = (workflow, execute) =>
      engine.register(workflow, (payload, id) => Effect.provideService(execute(payload, id), WorkflowEngine.WorkflowEngine, wrapped))
    const execute = ((workflow, options) =>
      workflow._tag === `${name}/task` && indexOf(options.payload) === doomed
        ? Effect.die(new ClusterError.PersistenceError({ cause: defect() }))
        : engine.execute(workflow, options)) as typeof engine.execute
    const wrapped = WorkflowEngine.WorkflowEngine.of({ ...engine, register, execute })
    return wrapped
  })).pipe(Layer.provide(WorkflowEngine.layerMemory))

describe("DurableEnsemble: a task whose child dies", () => {
  it.effect.each(["SEQUENTIAL", "PARALLEL"] as const)("%s: TaskExecutionError with the outputs completed before it", (workflow) =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks, workflow })
      const name = `TaskDied${workflow}`
      const W = DurableEnsemble.workflow(name, ensemble)
      const live = DurableEnsemble.layer(W).pipe(
        Layer.provideMerge(failingTaskStart(name, 1)),
        Layer.provide(ChatModel.scripted([{ text: "done" }], { repeat: true }).layer)
      )
      const exit = yield* Effect.provide(Effect.exit(W.execute({ id: "x1", inputs: {} })), live)

      if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
      const error = Option.getOrThrow(Exit.findErrorOption(exit))
      expect(error._tag).toBe("TaskExecutionError")
      expect(error.message).toContain(`its child workflow '${name}/task' died: ~effect/cluster/ClusterError/PersistenceError: lost the connection`)
      expect(error.message).not.toContain(secret)
      if ("completedOutputs" in error) expect(error.completedOutputs.map((output) => output.raw)).toEqual(["done"])
    }))
})

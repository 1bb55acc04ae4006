/**
 * What a durable ensemble keeps across its workflows and across replays, on
 * the memory engine (and one SQLite file, where results are stored as JSON):
 *
 * - a replay (the parent woken again while a delegation's child waits, as
 *   after a crash) counts the recorded model calls against the budget, so
 *   the same execution ends the same way, as `Ensemble.run` does;
 * - a replay draws the same delegation ids;
 * - a worker's peer delegation inside its child meets the run's constraints
 *   as they stood (caps used, stages done), as in `Ensemble.run`;
 * - a structured output whose value is not JSON is given as its
 *   `outputType`'s JSON encoding, its delegation recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Workflow, WorkflowEngine } from "effect/workflow"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, type HierarchicalConstraints, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble, DurableSqlite } from "../../src/durable/index.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ query: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)

/** Handlers whose first lookup inside a workflow suspends it once (`suspend`), as a wait would. */
const handlers = (suspend: boolean) => {
  let waited = !suspend
  return toolkit.toLayer({
    lookup: ({ query }) =>
      Effect.gen(function*() {
        const instance = yield* Effect.serviceOption(WorkflowEngine.WorkflowInstance)
        if (!waited && Option.isSome(instance)) {
          waited = true
          return yield* Workflow.suspend(instance.value)
        }
        return `found ${query}`
      })
  })
}

/** The manager delegates task 1 (whose researcher looks something up), then task 2, then answers. */
const model = () =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      if (role === "Manager") {
        if (results === 0) return { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } }] }
        if (results === 1) return { toolCalls: [{ id: "d2", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } }] }
        return { text: "Manager done" }
      }
      if (role === "Researcher" && results === 0) return { toolCalls: [{ id: "r1", name: "lookup", params: { query: "tides" } }] }
      if (role === "Writer" && results === 0) return { toolCalls: [{ id: "p1", name: "delegate", params: { agentRole: "Editor", taskDescription: "Edit" } }] }
      return { text: `${role} done` }
    }
  ], { repeat: true })

const team = (options: { readonly maxModelCalls?: number; readonly constraints?: HierarchicalConstraints.HierarchicalConstraints }) =>
  Effect.gen(function*() {
    const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write", allowDelegation: true })
    const editor = yield* Agent.make({ role: "Editor", goal: "Edit" })
    const tasks = yield* Effect.all([
      Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
      Task.make({ description: "Write", expectedOutput: "Essay", agent: writer }),
      Task.make({ description: "Edit", expectedOutput: "Edited", agent: editor })
    ])
    return yield* Ensemble.make({ agents: [researcher, writer, editor], tasks, workflow: "HIERARCHICAL", ...options })
  })

const records = (delegations: ReadonlyArray<Delegation.DelegationRecord>) =>
  delegations.map((r) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}${r.response.errors.length > 0 ? ` ${r.response.errors[0]}` : ""}`)

const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

/** An execution's end, the parent replayed once (`replay`): the first delegation's child waits, then is resumed. */
const durableEnd = <R>(ensemble: Ensemble.Ensemble<R>, name: string, replay: boolean) => {
  const W = DurableEnsemble.workflow(name, ensemble)
  const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide([model().layer, handlers(replay)]))
  return Effect.provide(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.result(W.execute({ id: "e1", inputs: {} })))
      if (replay) {
        const parent = yield* W.executionId({ id: "e1", inputs: {} })
        const child = childWorkflows(name).delegation
        const id = yield* child.executionId({ parent, key: "d1/1", inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
        while (true) {
          const polled = yield* child.poll(id)
          if (Option.isSome(polled) && polled.value._tag === "Suspended") break
          yield* Effect.yieldNow
        }
        yield* child.resume(id)
      }
      return yield* Fiber.join(fiber)
    }),
    live
  )
}

describe("DurableEnsemble across workflows and replays", () => {
  it.effect("a replay counts the recorded model calls: the same execution ends with BudgetExceededError either way, as Ensemble.run", () =>
    Effect.gen(function*() {
      // The run needs 8 model calls (manager 3, researcher 2, writer 2, editor 1); the manager's 8th is refused.
      // Uncounted on replay, the manager's first call would leave room for it.
      const ensemble = yield* team({ maxModelCalls: 7 })
      const expected = yield* Effect.flip(Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model().layer, handlers(false)))))
      const straight = yield* durableEnd(ensemble, "BudgetStraight", false)
      const replayed = yield* durableEnd(ensemble, "BudgetReplayed", true)
      expect(expected._tag).toBe("BudgetExceededError")
      for (const end of [straight, replayed]) {
        expect(end._tag).toBe("Failure")
        if (end._tag === "Failure") expect(end.failure._tag).toBe(expected._tag)
      }
    }))

  it.effect("a replay counts each recorded model call once: a budget the run fits exactly is enough either way, as Ensemble.run", () =>
    Effect.gen(function*() {
      // The run needs exactly 8 model calls. Counted twice on replay (made, then replayed), the manager's last would be refused.
      const ensemble = yield* team({ maxModelCalls: 8 })
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model().layer, handlers(false))))
      const straight = yield* durableEnd(ensemble, "BudgetExactStraight", false)
      const replayed = yield* durableEnd(ensemble, "BudgetExactReplayed", true)
      for (const end of [straight, replayed]) {
        if (end._tag !== "Success") return expect.unreachable(`the execution succeeds: ${String(end.failure)}`)
        expect(end.success.raw).toBe(expected.raw)
      }
    }))

  it.effect("a replay draws the same delegation ids and ends with the same records", () =>
    Effect.gen(function*() {
      const ensemble = yield* team({})
      // The same workflow on two engines: the same execution id, once straight, once replayed.
      const straight = yield* durableEnd(ensemble, "Ids", false)
      const replayed = yield* durableEnd(ensemble, "Ids", true)
      if (straight._tag !== "Success" || replayed._tag !== "Success") return expect.unreachable("both executions succeed")
      expect(replayed.success.delegations.map((r) => r.request.taskId)).toEqual(straight.success.delegations.map((r) => r.request.taskId))
      expect(records(replayed.success.delegations)).toEqual(records(straight.success.delegations))
    }))

  it.effect.each([
    { name: "stages", constraints: { requiredStages: [["Researcher"], ["Editor"]] }, editor: "SUCCESS" },
    { name: "global cap", constraints: { globalMaxDelegations: 2 }, editor: "FAILURE" }
  ])("$name: a worker's peer delegation in its child meets the run's constraints as Ensemble.run does ($editor)", ({ constraints, editor, name }) =>
    Effect.gen(function*() {
      const ensemble = yield* team({ constraints })
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model().layer, handlers(false))))
      const end = yield* durableEnd(ensemble, `Guard${name.replace(/ /g, "")}`, false)
      if (end._tag !== "Success") return expect.unreachable("the execution succeeds")
      expect(records(end.success.delegations)).toEqual(records(expected.delegations))
      expect(records(end.success.delegations)[1]).toMatch(new RegExp(`^Writer>Editor:${editor}`))
    }))

  it.live("a structured output that is not JSON is given as its outputType's JSON encoding, its delegation recorded (SQLite)", () =>
    Effect.gen(function*() {
      const counting = ChatModel.scripted([
        (request) =>
          JSON.stringify(request.prompt.content).includes("You are Manager.")
            ? request.prompt.content.some((message) => message.role === "tool")
              ? { text: "Manager done" }
              : { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Counter", taskDescription: "Count", taskNumber: 1 } }] }
            : { text: `{"n":"12345678901234567890"}` }
      ], { repeat: true })
      const counter = yield* Agent.make({ role: "Counter", goal: "Count" })
      const count = yield* Task.make({ description: "Count", expectedOutput: "A number", agent: counter, outputType: Schema.Struct({ n: Schema.BigIntFromString }) })
      const ensemble = yield* Ensemble.make({ agents: [counter], tasks: [count], workflow: "HIERARCHICAL" })
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(counting.layer))
      expect(expected.taskOutputs[0]?.parsedOutput).toEqual({ n: 12345678901234567890n })
      const dir = mkdtempSync(join(tmpdir(), "loopwork-parsed-"))
      const W = DurableEnsemble.workflow("Parsed", ensemble)
      const live = DurableEnsemble.layer(W).pipe(Layer.provide(counting.layer), Layer.provideMerge(DurableSqlite.runner({ filename: join(dir, "runs.db") })))
      const got = yield* Effect.provide(W.execute({ id: "p1", inputs: {} }), live).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      expect(got.raw).toBe(expected.raw)
      expect(got.taskOutputs[0]?.parsedOutput).toEqual({ n: "12345678901234567890" })
      expect(records(got.delegations)).toEqual(["Manager>Counter:SUCCESS"])
      expect(got.delegations[0]?.response.parsedOutput).toEqual({ n: "12345678901234567890" })
    }), 30_000)
})

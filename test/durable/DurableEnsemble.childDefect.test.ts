/**
 * A defect inside a child's agent run — here a storage error of one of its
 * recorded steps, which effect's engine turns into a defect — fails the
 * child's task as any defect fails a task (`unexpected error: …`,
 * credentials redacted), and the failure keeps what the agent used: the
 * child's stored result is a `TaskFailed` with its usage, and the
 * ensemble's budget still counts the model calls the child made.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"
import { lookups, pausingHandlers } from "../support/durableEnsemble.ts"

const secret = "hunter2"

/** The memory engine, except that a delegation child's recorded tool step dies as a lost connection would. */
const failingToolSteps = (name: string) =>
  Layer.effect(WorkflowEngine.WorkflowEngine)(Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    const activityExecute: typeof engine.activityExecute = (activity, attempt) =>
      Effect.flatMap(Effect.serviceOption(WorkflowEngine.WorkflowInstance), (instance) =>
        Option.isSome(instance) && instance.value.workflow._tag === `${name}/delegation` && activity.name.includes("/tool/")
          ? Effect.die(new Error(`lost the connection to postgres://runner:${secret}@db/runs`))
          : engine.activityExecute(activity, attempt))
    const register: typeof engine.register = (workflow, execute) =>
      engine.register(workflow, (payload, id) => Effect.provideService(execute(payload, id), WorkflowEngine.WorkflowEngine, wrapped))
    const wrapped = WorkflowEngine.WorkflowEngine.of({ ...engine, register, activityExecute })
    return wrapped
  })).pipe(Layer.provide(WorkflowEngine.layerMemory))

/** The manager delegates to the researcher (who looks something up first), then to the writer, then answers. */
const model = () =>
  ChatModel.scripted([
    (request) => {
      const role = /You are (\w+)\./.exec(JSON.stringify(request.prompt.content))?.[1] ?? "?"
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      if (role === "Manager") {
        if (results === 0) return { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } }] }
        if (results === 1) return { toolCalls: [{ id: "d2", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } }] }
        return { text: "Manager done" }
      }
      if (role === "Researcher") return results === 0 ? { toolCalls: [{ id: "r1", name: "lookup", params: { query: "tides" } }] } : { text: "Researcher done" }
      return { text: `${role} done` }
    }
  ], { repeat: true })

const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

const team = (maxModelCalls: number) =>
  Effect.gen(function*() {
    const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit: lookups })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const tasks = yield* Effect.all([
      Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
      Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })
    ])
    return yield* Ensemble.make({ agents: [researcher, writer], tasks, workflow: "HIERARCHICAL", maxModelCalls })
  })

describe("DurableEnsemble: a defect inside a child's agent run", () => {
  // Model calls: the manager's 3, the researcher's 1 (its step then dies), the writer's 1.
  it.effect.each([
    { maxModelCalls: 5, ends: "Success" },
    { maxModelCalls: 4, ends: "Failure" }
  ] as const)("fails the child keeping what it used (maxModelCalls $maxModelCalls: $ends)", ({ maxModelCalls, ends }) =>
    Effect.gen(function*() {
      const name = `ChildDefect${maxModelCalls}`
      const W = DurableEnsemble.workflow(name, yield* team(maxModelCalls))
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(failingToolSteps(name)), Layer.provide([model().layer, pausingHandlers(false)]))
      const payload = { id: "c1", inputs: {} }
      const { exit, stored } = yield* Effect.provide(
        Effect.gen(function*() {
          const exit = yield* Effect.exit(W.execute(payload))
          const parent = yield* W.executionId(payload)
          const children = childWorkflows(name)
          const researcher = yield* children.delegation.executionId({
            parent,
            key: "d1/1",
            inputs: {},
            role: "",
            description: "",
            expectedOutput: "",
            context: [],
            depth: 0,
            usage: unused
          })
          return { exit, stored: yield* children.delegation.poll(researcher) }
        }),
        live
      )

      // The child stored a failure with what it used, not a bare defect.
      expect(Option.isSome(stored) && stored.value._tag === "Complete").toBe(true)
      const result = Option.getOrThrow(stored)
      if (result._tag !== "Complete" || !Exit.isFailure(result.exit)) throw new Error(`the researcher's child did not fail: ${JSON.stringify(result)}`)
      const failure = Option.getOrThrow(Exit.findErrorOption(result.exit))
      expect(failure._tag).toBe("TaskFailed")
      expect(failure.usage?.modelCalls).toBe(1)
      expect(failure.reason).toBe("unexpected error: lost the connection to postgres://[REDACTED]@db/runs")

      // The ensemble's budget counts the researcher's call: with 4, the manager's last call is refused.
      expect(exit._tag).toBe(ends)
      if (Exit.isSuccess(exit)) {
        expect(exit.value.raw).toBe("Manager done")
        expect(exit.value.delegations.map((r) => `${r.request.agentRole}:${r.response.status}`)).toEqual(["Researcher:FAILURE", "Writer:SUCCESS"])
      } else {
        const error = Option.getOrThrow(Exit.findErrorOption(exit))
        expect(error).toMatchObject({ _tag: "BudgetExceededError", budget: "maxModelCalls", limit: 4 })
      }
    }))
})

/**
 * Run-wide budgets: every `Ensemble.run` may make at most `maxModelCalls`
 * model calls (default 500; every agent, the manager, structured-output
 * retries, delegated workers, agents' own models) and `maxDelegations`
 * approved delegations (default 50; manager and peer, at any depth). Used
 * up, the run stops with `BudgetExceededError` carrying the outputs so far.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { roleOf } from "../support/transcript.ts"

const asBudgetError = (error: EnsembleError.EnsembleError): EnsembleError.BudgetExceededError => {
  if (error._tag !== "BudgetExceededError") throw new Error(`expected BudgetExceededError, got ${error._tag}: ${error.message}`)
  return error
}

const lastIsToolResult = (request: ChatModel.GenerateRequest) => request.prompt.content.at(-1)?.role === "tool"

describe("defaults and validation", () => {
  it.effect("defaults: 500 model calls and 50 delegations per run", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task] })
      expect([Ensemble.defaults.maxModelCalls, Ensemble.defaults.maxDelegations]).toEqual([500, 50])
      expect([ensemble.maxModelCalls, ensemble.maxDelegations]).toEqual([500, 50])
    }))

  const rows = [
    { config: { maxModelCalls: 0 }, message: "Ensemble maxModelCalls must be > 0, got: 0" },
    { config: { maxDelegations: -1 }, message: "Ensemble maxDelegations must be > 0, got: -1" },
    { config: { maxDelegations: 2.5 }, message: "Ensemble maxDelegations must be > 0, got: 2.5" }
  ] as const
  for (const row of rows) {
    it.effect(`${JSON.stringify(row.config)} -> ValidationError`, () =>
      Effect.gen(function*() {
        const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
        const task = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
        const error = yield* Effect.flip(Ensemble.make({ agents: [writer], tasks: [task], ...row.config }))
        expect(error.message).toBe(row.message)
      }))
  }
})

describe("maxDelegations", () => {
  it.effect("peer fan-out (20 delegate calls per response) stops at the default budget instead of running away", () =>
    Effect.gen(function*() {
      const a = yield* Agent.make({ role: "Alpha", goal: "Work", allowDelegation: true })
      const b = yield* Agent.make({ role: "Beta", goal: "Work", allowDelegation: true })
      const task = yield* Task.make({ description: "Do everything", expectedOutput: "Done", agent: a })
      const ensemble = yield* Ensemble.make({ agents: [a, b], tasks: [task] })
      const model = ChatModel.scripted([(request) => {
        if (lastIsToolResult(request)) return { text: "done" }
        const other = roleOf(request) === "Alpha" ? "Beta" : "Alpha"
        return {
          toolCalls: Array.from({ length: 20 }, (_, i) => ({
            name: "delegate",
            params: { agentRole: other, taskDescription: `part ${i}` }
          }))
        }
      }], { repeat: true, record: 0 })
      const error = asBudgetError(yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(model.layer))))

      expect(error.budget).toBe("maxDelegations")
      expect(error.limit).toBe(50)
      expect(error.completedOutputs).toEqual([])
      expect(error.message).toBe(
        "The run used up its budget of 50 delegations (maxDelegations) and was stopped after 0 completed output(s). " +
          "If the work needs more, raise maxDelegations in Ensemble.make; if not, look for an agent that delegates in a loop."
      )
      // at most two model calls per approved delegation (delegate, then answer) plus the root task's;
      // without the budget this script makes 16,842
      expect(model.calls).toBeLessThanOrEqual(1 + 2 * 50)
      const refused = error.delegations.filter((record) => record.response.errors[0]?.startsWith("Delegation refused:"))
      expect(refused.length).toBeGreaterThan(0)
      expect(refused[0].response.errors).toEqual([
        "Delegation refused: the run's budget maxDelegations (50) is used up; the run stops"
      ])
    }))

  it.effect("HIERARCHICAL: the manager's second delegation is refused; the error carries the first worker's output", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review" })
      const write = yield* Task.make({ description: "Write it", expectedOutput: "Prose", agent: writer })
      const review = yield* Task.make({ description: "Review it", expectedOutput: "Verdict", agent: reviewer })
      const ensemble = yield* Ensemble.make({
        agents: [writer, reviewer],
        tasks: [write, review],
        workflow: "HIERARCHICAL",
        maxDelegations: 1
      })
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write it", taskNumber: 1 } }] },
        { text: "A paragraph." },
        { toolCalls: [{ name: "delegateTask", params: { agentRole: "Reviewer", taskDescription: "Review it", taskNumber: 2 } }] },
        { text: "never: the run stops before this turn" }
      ])
      const error = asBudgetError(yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(model.layer))))

      expect(model.calls).toBe(3)
      expect(error.budget).toBe("maxDelegations")
      expect(error.completedOutputs.map((output) => [output.agentRole, output.raw])).toEqual([["Writer", "A paragraph."]])
      expect(error.delegations.map((record) => [record.request.agentRole, record.response.status])).toEqual([
        ["Writer", "SUCCESS"],
        ["Reviewer", "FAILURE"]
      ])
    }))
})

describe("maxModelCalls", () => {
  it.effect("SEQUENTIAL: stops after the budget; the error carries the outputs completed so far", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const tasks: Array<Task.Task> = []
      for (let i = 0; i < 5; i++) tasks.push(yield* Task.make({ description: `Part ${i}`, expectedOutput: "Prose", agent: writer }))
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks, maxModelCalls: 3 })
      const model = ChatModel.scripted([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }, { text: "five" }])
      const error = asBudgetError(yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(model.layer))))

      expect(model.calls).toBe(3)
      expect(error.budget).toBe("maxModelCalls")
      expect(error.limit).toBe(3)
      expect(error.completedOutputs.map((output) => output.raw)).toEqual(["one", "two", "three"])
    }))

  it.effect("an agent's own model counts toward the same budget", () =>
    Effect.gen(function*() {
      const own = ChatModel.scripted([{ text: "from my own model" }])
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Research", llm: own.layer })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write], maxModelCalls: 1 })
      const shared = ChatModel.scripted([{ text: "never" }])
      const error = asBudgetError(yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(shared.layer))))

      expect([own.calls, shared.calls]).toEqual([1, 0])
      expect(error.completedOutputs.map((output) => output.raw)).toEqual(["from my own model"])
    }))

  it.effect("each run has its own budget: two runs of 2 calls fit a budget of 2, a run of 3 does not", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const tasks: Array<Task.Task> = []
      for (let i = 0; i < 3; i++) tasks.push(yield* Task.make({ description: `Part ${i}`, expectedOutput: "x", agent: writer }))
      const model = ChatModel.scripted([{ text: "a" }], { repeat: true })
      const two = yield* Ensemble.make({ agents: [writer], tasks: tasks.slice(0, 2), maxModelCalls: 2 })
      const first = yield* Ensemble.run(two).pipe(Effect.provide(model.layer))
      const second = yield* Ensemble.run(two).pipe(Effect.provide(model.layer))
      expect([first.taskOutputs.length, second.taskOutputs.length]).toEqual([2, 2])
      const three = yield* Ensemble.make({ agents: [writer], tasks, maxModelCalls: 2 })
      const error = yield* Effect.flip(Ensemble.run(three).pipe(Effect.provide(model.layer)))
      expect(error._tag).toBe("BudgetExceededError")
    }))
})

/**
 * Ensemble properties over random task graphs (each task may depend on
 * earlier ones) with failures at random tasks, 1000 cases each:
 * - SEQUENTIAL: the run fails at the first failing task in list order, and
 *   its error carries exactly the outputs of the tasks before it.
 * - PARALLEL "continue": the failures are exactly the failing tasks, the
 *   skipped tasks are exactly their transitive dependents, and every other
 *   task completes.
 * - PARALLEL "fail-fast": the error names a failing task, and every output it
 *   carries is of a task that does not fail and whose dependencies completed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { textOf } from "../support/transcript.ts"

const Graph = Schema.Struct({
  tasks: Schema.Array(Schema.Struct({ deps: Schema.Array(Schema.Int), fails: Schema.Boolean }))
})
type Graph = typeof Graph.Type

/** At most 6 tasks; a task depends only on earlier ones (a DAG). */
const normalize = (graph: Graph) => {
  const tasks = graph.tasks.slice(0, 6)
  return tasks.length === 0 ? [{ deps: [], fails: false }] : tasks.map((task, i) => ({
    deps: [...new Set(task.deps.map((d) => Math.abs(d) % Math.max(i, 1)).filter((d) => d < i))],
    fails: task.fails
  }))
}

const build = (spec: ReturnType<typeof normalize>, workflow: "SEQUENTIAL" | "PARALLEL", onError: "fail-fast" | "continue") =>
  Effect.gen(function*() {
    const agent = yield* Agent.make({ role: "Worker", goal: "Work" })
    const tasks: Array<Task.Task> = []
    for (const [i, node] of spec.entries()) {
      tasks.push(yield* Task.make({ description: `T${i}`, expectedOutput: "x", agent, context: node.deps.map((d) => tasks[d]) }))
    }
    const ensemble = yield* Ensemble.make({ agents: [agent], tasks, workflow, onError })
    const model = ChatModel.scripted([(request) => {
      const index = Number(/## Task\nT(\d+)/.exec(textOf(request.prompt.content.at(-1)))![1])
      return spec[index].fails ? { fail: `T${index} broke` } : { text: `out ${index}` }
    }], { repeat: true, record: 0 })
    return yield* Effect.result(Ensemble.run(ensemble).pipe(Effect.provide(model.layer)))
  })

/** The tasks that depend, directly or not, on a failing task. */
const blockedBy = (spec: ReturnType<typeof normalize>): Set<number> => {
  const blocked = new Set<number>()
  for (const [i, node] of spec.entries()) {
    if (node.deps.some((d) => spec[d].fails || blocked.has(d))) blocked.add(i)
  }
  return blocked
}

const runs = 1000

describe("ensemble properties", () => {
  it.effect.prop("SEQUENTIAL: fails at the first failing task with exactly the outputs before it", { graph: Graph }, ({ graph }) =>
    Effect.gen(function*() {
      const spec = normalize(graph)
      const result = yield* build(spec, "SEQUENTIAL", "fail-fast")
      const first = spec.findIndex((node) => node.fails)
      if (first < 0) {
        expect(result._tag).toBe("Success")
        if (result._tag === "Success") expect(result.success.taskOutputs.map((o) => o.raw)).toEqual(spec.map((_, i) => `out ${i}`))
        return
      }
      expect(result._tag).toBe("Failure")
      if (result._tag !== "Failure") return
      const error = result.failure
      expect(error._tag).toBe("TaskExecutionError")
      if (error._tag !== "TaskExecutionError") return
      expect(error.taskDescription).toBe(`T${first}`)
      expect(error.completedOutputs.map((o) => o.taskDescription)).toEqual(spec.slice(0, first).map((_, i) => `T${i}`))
    }), { arbitrary: { runs } })

  it.effect.prop("PARALLEL continue: failures and skipped tasks are exactly the failing tasks and their dependents", { graph: Graph }, ({ graph }) =>
    Effect.gen(function*() {
      const spec = normalize(graph)
      const result = yield* build(spec, "PARALLEL", "continue")
      const failing = spec.flatMap((node, i) => (node.fails && !blockedBy(spec).has(i) ? [`T${i}`] : []))
      const skipped = [...blockedBy(spec)].map((i) => `T${i}`)
      const completed = spec.flatMap((node, i) => (!node.fails && !blockedBy(spec).has(i) ? [`T${i}`] : []))
      if (failing.length === 0) {
        expect(result._tag).toBe("Success")
        if (result._tag === "Success") expect(result.success.taskOutputs.map((o) => o.taskDescription).sort()).toEqual(completed.sort())
        return
      }
      expect(result._tag).toBe("Failure")
      if (result._tag !== "Failure" || result.failure._tag !== "ParallelExecutionError") {
        throw new Error(`expected ParallelExecutionError, got ${result._tag === "Failure" ? result.failure._tag : "success"}`)
      }
      const error = result.failure
      expect(error.failures.map((f) => f.taskDescription).sort()).toEqual([...failing].sort())
      expect([...error.skipped].sort()).toEqual([...skipped].sort())
      expect(error.completedOutputs.map((o) => o.taskDescription).sort()).toEqual([...completed].sort())
    }), { arbitrary: { runs } })

  it.effect.prop("PARALLEL fail-fast: the error names a failing task; every output it carries is of a task that could complete", { graph: Graph }, ({ graph }) =>
    Effect.gen(function*() {
      const spec = normalize(graph)
      const result = yield* build(spec, "PARALLEL", "fail-fast")
      if (!spec.some((node) => node.fails)) {
        expect(result._tag).toBe("Success")
        return
      }
      expect(result._tag).toBe("Failure")
      if (result._tag !== "Failure" || result.failure._tag !== "TaskExecutionError") {
        throw new Error(`expected TaskExecutionError, got ${result._tag === "Failure" ? result.failure._tag : "success"}`)
      }
      const error = result.failure
      const index = Number(error.taskDescription.slice(1))
      expect(spec[index].fails).toBe(true)
      const done = new Set(error.completedOutputs.map((o) => Number(o.taskDescription.slice(1))))
      for (const i of done) {
        expect(spec[i].fails).toBe(false)
        for (const d of spec[i].deps) expect(done.has(d)).toBe(true)
      }
    }), { arbitrary: { runs } })
})

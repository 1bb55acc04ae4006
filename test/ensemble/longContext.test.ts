/**
 * A chain of thousands of context dependencies (helper-66's probe): the
 * check for cycles follows it with a stack of its own, so a long chain is
 * checked like a short one, whatever order its tasks are listed in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"

/** `length` tasks, each with the one before it as its context. */
const chainOf = (length: number) =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const tasks: Array<Task.Task> = []
    for (let i = 0; i < length; i++) {
      tasks.push(yield* Task.make({ description: `Step ${i}`, expectedOutput: "Done", agent: writer, context: i === 0 ? [] : [tasks[i - 1]] }))
    }
    return { writer, tasks }
  })

describe("a long chain of context dependencies", () => {
  it.effect("PARALLEL, listed first to last and last to first: accepted", () =>
    Effect.gen(function*() {
      const { tasks, writer } = yield* chainOf(20_000)
      yield* Ensemble.make({ agents: [writer], tasks, workflow: "PARALLEL" })
      // Last to first, the check starts at the chain's end and follows it to its start.
      yield* Ensemble.make({ agents: [writer], tasks: [...tasks].reverse(), workflow: "PARALLEL" })
    }), 60_000)

  it.effect("SEQUENTIAL, last to first: refused because a context task comes later", () =>
    Effect.gen(function*() {
      const { tasks, writer } = yield* chainOf(20_000)
      const exit = yield* Effect.exit(Ensemble.make({ agents: [writer], tasks: [...tasks].reverse() }))
      if (Exit.isSuccess(exit)) return expect.unreachable("it is refused")
      expect(Cause.squash(exit.cause)).toMatchObject({
        _tag: "ValidationError",
        message: "Task 'Step 19999' references context task 'Step 19998' which appears later in the task list"
      })
    }), 60_000)

  it.effect("a cycle through a long chain is still found", () =>
    Effect.gen(function*() {
      const { tasks, writer } = yield* chainOf(5_000)
      // Copies whose contexts are the copies before them, and the first's the last: every task is on the cycle.
      const copies: Array<{ context: ReadonlyArray<unknown> }> = tasks.map((task) => ({ ...task }))
      copies.forEach((copy, i) => (copy.context = [copies[i === 0 ? copies.length - 1 : i - 1]]))
      const exit = yield* Effect.exit(Ensemble.make({ agents: [writer], tasks: copies as never, workflow: "PARALLEL" }))
      if (Exit.isSuccess(exit)) return expect.unreachable("it is refused")
      expect((Cause.squash(exit.cause) as Error).message).toMatch(/^Circular context dependency detected involving task: 'Step \d+'$/)
    }), 60_000)
})

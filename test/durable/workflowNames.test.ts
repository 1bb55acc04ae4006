/**
 * The names a durable workflow may take (helper-65's and helper-66's
 * probes). A durable ensemble named `A` registers child workflows `A/task`
 * and `A/delegation`: a workflow a caller named `A/task` was the same
 * workflow as A's tasks, and which body ran depended on the order of the
 * layers (an execution of `A` ran another ensemble's agent, then died). A
 * name that is not a string, or is too long for the engine's column, failed
 * later with a TypeError. All are refused when the workflow is made.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { supportWorkflow } from "../support/durable.ts"

const toolkit = Toolkit.make(Tool.make("lookup"))

/** What making each kind of workflow named `name` throws, by its `_tag` and rule; "made" when it is made. */
const outcomes = (name: unknown) =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })] })
    const made = (make: () => unknown) => {
      try {
        make()
        return "made"
      } catch (error) {
        return `${(error as { readonly _tag: string })._tag}: ${(error as { readonly field: string }).field}`
      }
    }
    return [made(() => supportWorkflow(name as string, toolkit)), made(() => DurableEnsemble.workflow(name as string, ensemble))]
  })

const refused = ["InvalidInput: name", "InvalidInput: name"]
const rows: ReadonlyArray<readonly [string, unknown, ReadonlyArray<string>]> = [
  ["a name", "Report", ["made", "made"]],
  ["a name with slashes", "team/report/v2", ["made", "made"]],
  ["a name ending like a child but longer", "A/tasks", ["made", "made"]],
  ["128 characters", "n".repeat(128), ["made", "made"]],
  ["a durable ensemble's task child", "A/task", refused],
  ["a durable ensemble's delegation child", "A/delegation", refused],
  ["effect's durable clock", "-/DurableClock", refused],
  ["empty", "", refused],
  ["129 characters", "n".repeat(129), refused],
  ["a megabyte", "n".repeat(2 ** 20), refused],
  ["null", null, refused],
  ["a number", 42, refused],
  ["an object", { toString: () => "Report" }, refused]
]

describe("durable workflow names", () => {
  it.effect.each(rows)("%s", ([_row, name, expected]) =>
    Effect.gen(function*() {
      expect(yield* outcomes(name)).toEqual(expected)
    }))

  it("the rule says what a name must be", () => {
    try {
      supportWorkflow("Report/task", toolkit)
      expect.unreachable("refused")
    } catch (error) {
      expect((error as Error).message).toBe(
        `Invalid name: must be 1 to 128 characters, not ending with /task or /delegation (the names of a durable ensemble's child workflows) and not -/DurableClock (got "Report/task")`
      )
    }
  })
})

/**
 * The names a durable workflow may take (helper-65's and helper-66's
 * probes, helper-67's review). A durable ensemble named `A` registers child
 * workflows `A/task` and `A/delegation`: a workflow named `A/task` was the
 * same workflow as A's tasks, and which body ran depended on the order of
 * the layers (an execution of `A` ran another ensemble's agent, then died).
 * The names made in a process are kept, and a name that is a child of
 * another, or whose children are another's, is refused; a name made again
 * is not, nor `A/task` while no ensemble `A` exists (a run stored under it
 * stays reachable). A name that is not a string, or is too long to key the
 * waiting calls, failed later with a TypeError or an odd message.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { supportWorkflow } from "../support/durable.ts"

const toolkit = Toolkit.make(Tool.make("lookup"))

const team = Effect.gen(function*() {
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  return yield* Ensemble.make({ agents: [writer], tasks: [yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })] })
})

/** What making a workflow throws, as `_tag: rule`; "made" when it is made. */
const outcome = (make: () => unknown): string => {
  try {
    make()
    return "made"
  } catch (error) {
    return `${(error as { readonly _tag: string })._tag}: ${(error as { readonly rule: string }).rule}`
  }
}

const chain = (name: unknown) => () => supportWorkflow(name as string, toolkit)

const tooLong = "InvalidInput: must be a string of 1 to 222 characters"
const rows: ReadonlyArray<readonly [string, unknown, string]> = [
  ["a name", "Report", "made"],
  ["a name with slashes", "team/report/v2", "made"],
  ["a name ending like a child while no ensemble has it", "Billing/task", "made"],
  ["222 characters", "n".repeat(222), "made"],
  ["223 characters", "n".repeat(223), tooLong],
  ["a megabyte", "n".repeat(2 ** 20), tooLong],
  ["empty", "", tooLong],
  ["null", null, tooLong],
  ["a number", 42, tooLong],
  ["an object", { toString: () => "Report" }, tooLong],
  ["effect's durable clock", "-/DurableClock", "InvalidInput: must not be -/DurableClock, the workflow of effect's durable clock"]
]

describe("durable workflow names", () => {
  it.each(rows)("a durable chain named with %s", (_row, name, expected) => {
    expect(outcome(chain(name))).toBe(expected)
  })

  it.effect("an ensemble's child's name, made before or after the ensemble, is refused; names made again are not", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      expect([
        outcome(() => DurableEnsemble.workflow("Names1", ensemble)),
        outcome(chain("Names1/task")),
        outcome(chain("Names1/delegation")),
        outcome(() => DurableEnsemble.workflow("Names1/task", ensemble)),
        outcome(chain("Names2/delegation")),
        outcome(() => DurableEnsemble.workflow("Names2", ensemble)),
        outcome(() => DurableEnsemble.workflow("Names1", ensemble)),
        outcome(chain("Names3")),
        outcome(chain("Names3"))
      ]).toEqual([
        "made",
        "InvalidInput: is the name of a child workflow of the durable ensemble 'Names1'",
        "InvalidInput: is the name of a child workflow of the durable ensemble 'Names1'",
        "InvalidInput: is the name of a child workflow of the durable ensemble 'Names1'",
        "made",
        "InvalidInput: would give the durable ensemble a child workflow 'Names2/delegation', the name of another workflow",
        "made",
        "made",
        "made"
      ])
    }))

  it.effect("a name is kept only once its workflow is made: an ensemble refused for its version leaves the name free", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      expect(outcome(() => DurableEnsemble.workflow("Names4", ensemble, { version: 0 }))).toBe("InvalidInput: a whole number from 1")
      expect(outcome(chain("Names4/task"))).toBe("made")
    }))
})

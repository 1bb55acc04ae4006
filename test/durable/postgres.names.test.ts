/**
 * Workflow names on PostgreSQL (helper-68's probe): effect's engine stores
 * `Workflow/<name>` in a column of 150 characters there, so a longer name
 * made every execution die when the engine stored its first message. The
 * layer of such a workflow now fails with an `InvalidInput` when it is
 * built on PostgreSQL; a name that fits runs (a durable ensemble's longest
 * child, `<name>/delegation`, must fit too).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { PgClient } from "@effect/sql-pg"
import { WorkflowEngine } from "effect/workflow"
import { DurableChain, DurableEnsemble, WaitingCalls } from "../../src/durable/index.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { supportWorkflow } from "../support/durable.ts"

const { database } = usePostgres({ beforeAll, afterAll })
const toolkit = Toolkit.make(Tool.make("lookup"))

/** What building `layer` on the database and running `run` in it gives: "ran", or the failure's tag and field. */
const outcome = <E, R>(layer: (url: string) => Layer.Layer<R, E>, run: Effect.Effect<unknown, unknown, R>) =>
  Effect.gen(function*() {
    const url = yield* Effect.promise(database)
    const exit = yield* Effect.exit(Effect.scoped(Effect.provide(run, layer(url))))
    if (Exit.isSuccess(exit)) return "ran"
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Cause.squash(exit.cause) as { readonly _tag: string; readonly field?: string }
    return `${error._tag}: ${error.field}`
  })

const chainNamed = (name: string) => {
  const Support = supportWorkflow(name, toolkit)
  const layer = (url: string) =>
    DurableChain.layer(Support).pipe(
      Layer.provideMerge(Layer.mergeAll(ScriptedModel.make([{ text: "Done." }]).layer, DurablePostgres.single({ url: Redacted.make(url) })))
    )
  return outcome(layer, Support.execute({ ticket: "T" }))
}

const ensembleNamed = (name: string) =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const team = yield* Ensemble.make({ agents: [writer], tasks: [yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })] })
    const Report = DurableEnsemble.workflow(name, team)
    const layer = (url: string) =>
      DurableEnsemble.layer(Report).pipe(
        Layer.provideMerge(DurablePostgres.single({ url: Redacted.make(url) })),
        Layer.provide(ChatModel.scripted([{ text: "Written." }], { repeat: true }).layer)
      )
    return yield* outcome(layer, Report.execute({ id: "r1", inputs: {} }))
  })

describe("workflow names on PostgreSQL", () => {
  it.live("a chain's name: 141 characters run, 142 are refused when the layer is built", () =>
    Effect.gen(function*() {
      expect([yield* chainNamed("a".repeat(141)), yield* chainNamed("b".repeat(142))]).toEqual(["ran", "InvalidInput: name"])
    }), 60_000)

  it.live("names are counted in characters, as PostgreSQL counts them: 100 emoji (200 UTF-16 units) run", () =>
    Effect.gen(function*() {
      expect(yield* chainNamed("\u{1F30A}".repeat(100))).toBe("ran")
    }), 60_000)

  it.live("only the engine's tables count: a long name on the memory engine, beside a PostgreSQL client of the application's, runs", () =>
    Effect.gen(function*() {
      const Support = supportWorkflow("e".repeat(200), toolkit)
      const layer = (link: string) =>
        DurableChain.layer(Support).pipe(
          Layer.provideMerge(Layer.mergeAll(
            ScriptedModel.make([{ text: "Done." }]).layer,
            WaitingCalls.layerMemory,
            WorkflowEngine.layerMemory,
            PgClient.layer({ url: Redacted.make(link) })
          ))
        )
      expect(yield* outcome(layer, Support.execute({ ticket: "T" }))).toBe("ran")
    }), 60_000)

  it.live("an ensemble's name: 130 characters run (its child <name>/delegation is 141), 131 are refused", () =>
    Effect.gen(function*() {
      expect([yield* ensembleNamed("c".repeat(130)), yield* ensembleNamed("d".repeat(131))]).toEqual(["ran", "InvalidInput: name"])
    }), 60_000)
})

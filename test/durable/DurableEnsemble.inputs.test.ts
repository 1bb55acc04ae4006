/**
 * (helper-66's probe) run inputs of a durable ensemble from a hostile user or a
 * JavaScript caller. The durable execution must end as `Ensemble.run` does
 * for the same inputs: same output, or the same typed error before any
 * model call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DurableSqlite } from "../../src/durable/index.ts"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"

const echo = () => {
  const prompts: Array<string> = []
  const scripted = ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      prompts.push(text)
      return { text: `saw ${/Say ([^\\]*)\\n/.exec(text)?.[1] ?? "?"}` }
    }
  ], { repeat: true })
  return { scripted, prompts }
}

let n = 0
const run = (workflow: "SEQUENTIAL" | "PARALLEL" | "HIERARCHICAL", name: string, inputs: unknown, id: unknown = "i1") =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const task = yield* Task.make({ description: `Say {${name}}`, expectedOutput: "It", agent: writer })
    const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task], workflow })
    const plainModel = echo()
    const plain = yield* Effect.exit(Ensemble.run(ensemble, inputs as Record<string, string>).pipe(Effect.provide(plainModel.scripted.layer)))
    const durableModel = echo()
    const W = DurableEnsemble.workflow(`In${++n}`, ensemble)
    const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(durableModel.scripted.layer))
    const durable = yield* Effect.exit(
      Effect.suspend(() => W.execute({ id, inputs } as never)).pipe(Effect.provide(live), Effect.timeout("10 seconds"))
    )
    return { plain, durable, plainCalls: plainModel.scripted.calls, durableCalls: durableModel.scripted.calls }
  })

const show = (exit: Exit.Exit<{ readonly raw: string }, { readonly _tag: string; readonly message: string }>) =>
  Exit.isSuccess(exit)
    ? { ok: exit.value.raw }
    : Cause.hasFails(exit.cause)
    ? { fail: `${Cause.squash(exit.cause) instanceof Error ? (Cause.squash(exit.cause) as Error & { _tag?: string })._tag : "?"}` }
    : { defect: Cause.pretty(exit.cause).split("\n")[0] }

describe("durable run inputs", () => {
  for (const workflow of ["SEQUENTIAL", "HIERARCHICAL"] as const) {
    for (const name of ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty"]) {
      it.effect(`${workflow}: an input named '${name}' fills the template in a durable run as in Ensemble.run`, () =>
        Effect.gen(function*() {
          const inputs = Object.fromEntries([[name, "tides"]])
          const r = yield* run(workflow, name, inputs)
          expect(show(r.durable as never)).toEqual(show(r.plain as never))
          expect(Exit.isSuccess(r.plain)).toBe(true)
        }))
    }
  }

  it.effect("an input missing in a durable run is the same PromptTemplateError; nothing is read from Object.prototype", () =>
    Effect.gen(function*() {
      const r = yield* run("SEQUENTIAL", "constructor", {})
      expect(show(r.durable as never)).toEqual(show(r.plain as never))
      expect(show(r.durable as never)).toEqual({ fail: "PromptTemplateError" })
      expect(r.durableCalls).toBe(0)
    }))

  it.effect("an input value that is not a string: a typed ValidationError (as Ensemble.run), not a defect", () =>
    Effect.gen(function*() {
      const r = yield* run("SEQUENTIAL", "topic", { topic: null })
      expect(show(r.plain as never)).toEqual({ fail: "ValidationError" })
      expect(show(r.durable as never)).toEqual(show(r.plain as never))
      expect(r.durableCalls).toBe(0)
    }))

  it.effect("inputs that are not an object: a typed error (as Ensemble.run), not a defect", () =>
    Effect.gen(function*() {
      const r = yield* run("SEQUENTIAL", "topic", "topic=tides")
      expect(show(r.plain as never)).toEqual({ fail: "ValidationError" })
      expect(show(r.durable as never)).toEqual(show(r.plain as never))
    }))

  it.effect("an execution id that is not a string: a typed error, not a defect", () =>
    Effect.gen(function*() {
      const r = yield* run("SEQUENTIAL", "topic", { topic: "tides" }, null)
      expect(Exit.isFailure(r.durable)).toBe(true)
      if (Exit.isFailure(r.durable)) expect(Cause.hasDies(r.durable.cause)).toBe(false)
    }))

  it.effect("an input whose getter throws: a typed error, not a defect", () =>
    Effect.gen(function*() {
      const inputs = Object.defineProperty({}, "topic", { enumerable: true, get: () => { throw new Error("boom") } })
      const r = yield* run("SEQUENTIAL", "topic", inputs)
      expect(show(r.plain as never)).toEqual({ fail: "ValidationError" })
      expect(show(r.durable as never)).toEqual(show(r.plain as never))
    }))

  it.live("on SQLite: inputs named '__proto__' and 'constructor' reach the task child as in Ensemble.run", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Say {__proto__} and {constructor}", expectedOutput: "It", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task], workflow: "PARALLEL" })
      const inputs = Object.fromEntries([["__proto__", "tides"], ["constructor", "moons"]])
      const plain = yield* Ensemble.run(ensemble, inputs).pipe(Effect.provide(echo().scripted.layer))
      const dir = mkdtempSync(join(tmpdir(), "probe-inputs-"))
      const W = DurableEnsemble.workflow("ProtoSqlite", ensemble)
      const live = DurableEnsemble.layer(W).pipe(Layer.provide(echo().scripted.layer), Layer.provideMerge(DurableSqlite.runner({ filename: join(dir, "runs.db") })))
      const durable = yield* Effect.exit(Effect.provide(W.execute({ id: "s1", inputs }), live)).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      expect(plain.raw).toBe("saw tides and moons")
      expect(Exit.isSuccess(durable) ? durable.value.raw : Cause.pretty(durable.cause).slice(0, 300)).toBe(plain.raw)
    }), 30_000)
})

/**
 * `DurableChain.workflow` and its executions from JavaScript (helper-69's
 * probes): options whose reads throw are an `InvalidInput` from `workflow`
 * (a Proxy `transactional`, a toolkit whose `tools` throws when read again,
 * an `output` Proxy escaped as the raw error); an input that does not match
 * the input schema, or whose idempotency key throws or gives what is not a
 * string, fails `execute` and `executionId` with `DurableRunFailed`
 * (`InvalidInput`), also with `discard` (effect's died); and a `chain`
 * function that throws ends the run with `DurableRunFailed` (`InvalidInput`)
 * (the run died).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)
const handlers = toolkit.toLayer({ lookup: ({ order }) => Effect.succeed(`order ${order}`) })
const boom = (what: string) => (): never => {
  throw new Error(`${what} boom`)
}

let named = 0
const base = () => ({
  input: Schema.Struct({ ticket: Schema.String }),
  idempotencyKey: ({ ticket }: { readonly ticket: string }): unknown => ticket,
  toolkit,
  chain: ({ ticket }: { readonly ticket: string }): unknown => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
  mode: Mode.whileNeedsResponse
})
type Base = ReturnType<typeof base>

/** The workflow of `options` (over `base`), its layer on the memory engine with a scripted one-text model. */
const made = (options: Partial<Record<keyof Base, unknown>>) => {
  const W: DurableChain.DurableWorkflow<string, Base["input"]> = DurableChain.workflow(`JavaScript${++named}`, { ...base(), ...options } as never)
  const live = DurableChain.layer(W).pipe(
    Layer.provideMerge(Layer.mergeAll(ScriptedModel.make([{ text: "Done." }]).layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { W, live }
}

/** What `workflow` throws for `options`, as `_tag: field`. */
const refused = (options: object): string => {
  try {
    DurableChain.workflow(`JavaScript${++named}`, { ...base(), ...options } as never)
    return "made"
  } catch (error) {
    return `${(error as { readonly _tag?: string })._tag ?? `not tagged: ${String(error)}`}: ${(error as { readonly field?: string }).field}`
  }
}

/** The typed failure of `effect` as `reason: description` (a defect fails the test). */
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return expect.unreachable("it fails")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Cause.squash(exit.cause) as { readonly reason: string; readonly description: string }
    return `${error.reason}: ${error.description}`
  })

describe("DurableChain from JavaScript", () => {
  it("options whose reads throw are InvalidInput from workflow()", () => {
    const throwingArray = new Proxy(["lookup"], { get: (target, key) => key === "length" || key === "filter" || key === Symbol.iterator ? boom("array")() : Reflect.get(target, key) })
    let reads = 0
    const toolkitOnce = new Proxy(toolkit, { get: (target, key) => key === "tools" && ++reads > 1 ? boom("tools")() : Reflect.get(target, key) })
    const throwingOutput = new Proxy({}, { get: boom("output"), has: boom("output"), ownKeys: boom("output"), getPrototypeOf: boom("output") })
    expect([
      refused({ transactional: throwingArray }),
      refused({ toolkit: toolkitOnce }),
      refused({ output: throwingOutput })
    ]).toEqual(["InvalidInput: options", "InvalidInput: options", "InvalidInput: options"])
  })

  const keys: ReadonlyArray<readonly [string, (payload: { readonly ticket: string }) => unknown, string]> = [
    ["throws", boom("key"), "Invalid idempotencyKey: it threw (key boom); it must give a string that names the run"],
    ["gives a Symbol", () => Symbol("k"), "Invalid idempotencyKey: it must give a string that names the run, got symbol"],
    ["gives an object whose toString throws", () => ({ toString: boom("toString") }), "Invalid idempotencyKey: it threw (toString boom); it must give a string that names the run"],
    ["gives undefined (every run would have one name)", () => undefined, "Invalid idempotencyKey: it must give a string that names the run, got undefined"]
  ]
  it.effect.each(keys)("an idempotencyKey that %s: execute, a discarded execute and executionId fail InvalidInput", ([_row, idempotencyKey, description]) =>
    Effect.gen(function*() {
      const { W, live } = made({ idempotencyKey })
      const seen = yield* Effect.all([
        failure(W.execute({ ticket: "T" })),
        failure(W.execute({ ticket: "T" }, { discard: true })),
        failure(W.executionId({ ticket: "T" }))
      ]).pipe(Effect.provide(live))
      expect(seen).toEqual([`InvalidInput: ${description}`, `InvalidInput: ${description}`, `InvalidInput: ${description}`])
    }))

  it.effect("an input that does not match the input schema: execute fails InvalidInput, before anything runs", () =>
    Effect.gen(function*() {
      const { W, live } = made({})
      const seen = yield* failure(W.execute({ ticket: 5 } as never)).pipe(Effect.provide(live))
      expect(seen).toMatch(/^InvalidInput: Invalid input: it does not match the workflow's input schema \(/)
    }))

  it.effect("a chain function that throws: the run fails InvalidInput", () =>
    Effect.gen(function*() {
      const { W, live } = made({ chain: boom("chain") })
      const seen = yield* failure(W.execute({ ticket: "T" })).pipe(Effect.provide(live))
      expect(seen).toBe("InvalidInput: Invalid chain: the workflow's chain function threw (chain boom); it must make a chain of the input")
    }))

  it.effect.each([["a number", 42], ["a BigInt", 42n], ["a boolean", true], ["an array", ["a", "b"]]] as const)(
    "a key that gives %s still names the run, as effect writes it",
    ([_row, key]) =>
      Effect.gen(function*() {
        const { W, live } = made({ idempotencyKey: () => key })
        const result = yield* W.execute({ ticket: "T" }).pipe(Effect.provide(live))
        expect(result._tag).toBe("Finished")
      })
  )
})

/**
 * What a durable ensemble is given from JavaScript (helper-66's probe):
 * `DurableEnsemble.workflow`'s arguments whose reads throw are an
 * `InvalidInput` (they threw what the getter threw), and an execution's
 * payload of the wrong shape fails the execution with the `ValidationError`
 * that `Ensemble.run` gives such inputs, before any model call (effect's
 * `execute` threw a defect building the payload).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, type EnsembleError, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"

const boom = (): never => {
  throw new Error("boom")
}

const team = Effect.gen(function*() {
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  const task = yield* Task.make({ description: "Say {topic}", expectedOutput: "It", agent: writer })
  return yield* Ensemble.make({ agents: [writer], tasks: [task] })
})

/** What `make` throws, as `_tag: field`. */
const thrown = (make: () => unknown): string => {
  try {
    make()
    return "made"
  } catch (error) {
    return `${(error as { readonly _tag?: string })._tag ?? "not tagged"}: ${(error as { readonly field?: string }).field}`
  }
}

let named = 0
/** The failure of a durable execution given `payload`, with the model calls made. */
const executed = (payload: unknown) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([{ text: "said" }], { repeat: true })
    const W = DurableEnsemble.workflow(`Args${++named}`, yield* team)
    const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(model.layer))
    const exit = yield* Effect.exit(Effect.suspend(() => W.execute(payload as never)).pipe(Effect.provide(live)))
    if (Exit.isSuccess(exit)) return expect.unreachable("the execution fails")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    return { error: Cause.squash(exit.cause) as { readonly _tag: string; readonly message: string }, calls: model.calls }
  })

describe("DurableEnsemble from JavaScript", () => {
  it.effect("workflow's arguments whose reads throw: InvalidInput", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      expect([
        thrown(() => DurableEnsemble.workflow("A1", ensemble, Object.defineProperty({}, "version", { get: boom }))),
        thrown(() => DurableEnsemble.workflow("A2", Object.defineProperty({}, "workflow", { get: boom }) as never)),
        thrown(() => DurableEnsemble.workflow("A3", ensemble, { version: "2" as never }))
      ]).toEqual(["InvalidInput: options", "InvalidInput: ensemble", "InvalidInput: version"])
    }))

  const payloads: ReadonlyArray<readonly [string, unknown, string]> = [
    ["an input that is not a string", { id: "p1", inputs: { topic: null } }, "DurableEnsemble execution inputs value for 'topic' must be a string, got: null"],
    ["inputs that are not an object", { id: "p2", inputs: "topic=tides" }, "DurableEnsemble execution inputs must be an object of strings by variable name, got: \"topic=tides\""],
    ["an id that is not a string", { id: null, inputs: { topic: "tides" } }, "DurableEnsemble execution id must be a string (the same id is the same execution), got: null"],
    ["no payload", undefined, "DurableEnsemble execution must be given { id, inputs }, got: undefined"],
    ["an input whose getter throws", { id: "p3", inputs: Object.defineProperty({}, "topic", { enumerable: true, get: boom }) }, "DurableEnsemble execution was given a value that cannot be read (boom); give plain strings"]
  ]
  it.effect.each(payloads)("execute with %s: a ValidationError, no model call", ([_row, payload, message]) =>
    Effect.gen(function*() {
      const { calls, error } = yield* executed(payload)
      expect(error).toMatchObject({ _tag: "ValidationError", message })
      expect(calls).toBe(0)
    }))

  it.effect("executionId and a discarded execute check the payload too, and their types say so", () =>
    Effect.gen(function*() {
      const W = DurableEnsemble.workflow(`Args${++named}`, yield* team)
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(ChatModel.scripted([{ text: "said" }]).layer))
      const id: Effect.Effect<string, EnsembleError.ValidationError> = W.executionId({ id: 5 } as never)
      const discarded: Effect.Effect<string, EnsembleError.ValidationError, WorkflowEngine.WorkflowEngine> = W.execute({ id: "d", inputs: { topic: 5 } } as never, { discard: true })
      const errors = yield* Effect.all([Effect.flip(id), Effect.flip(discarded)]).pipe(Effect.provide(live))
      expect(errors.map((error) => error.message)).toEqual([
        "DurableEnsemble execution id must be a string (the same id is the same execution), got: 5",
        "DurableEnsemble execution inputs value for 'topic' must be a string, got: 5"
      ])
      expect(yield* W.executionId({ id: "same", inputs: {} })).toBe(yield* W.executionId({ id: "same", inputs: { topic: "other" } }))
    }))

  it.effect("the payload is read once: a getter that answers differently the second time runs what was checked", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([(request) => ({ text: JSON.stringify(request.prompt.content).includes("Say tides") ? "tides" : "other" })], { repeat: true })
      const W = DurableEnsemble.workflow(`Args${++named}`, yield* team)
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(model.layer))
      let reads = 0
      const inputs = Object.defineProperty({}, "topic", { enumerable: true, get: () => (++reads === 1 ? "tides" : 42) })
      const output = yield* W.execute({ id: "once", inputs } as never).pipe(Effect.provide(live))
      expect([output.raw, reads]).toEqual(["tides", 1])
    }))
})

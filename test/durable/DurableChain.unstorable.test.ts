/**
 * Tool values a durable run cannot store, under every failure policy
 * (helper-70's review): a raised value that is not JSON the store can hold
 * goes through the run's `onToolFailure` policy as in a plain run (`fail`
 * fails the run, `format` formats it, a repair repairs it), and only the
 * value it settles to is written as the plain run writes it; a returned one
 * becomes the plain run's failure whatever the policy. The durable document
 * (memory engine) equals the plain one, and the handler runs as often.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Chain, DirectReturn, Mode, ToolFailurePolicy } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableResult, WaitingCalls } from "../../src/durable/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ v: Schema.Unknown }), success: Schema.Unknown, failure: Schema.Unknown })
const toolkit = Toolkit.make(Echo)
const cyclic: { a: number; self?: unknown } = { a: 1 }
cyclic.self = cyclic

type Handler = (params: { readonly v: unknown }) => Effect.Effect<unknown, unknown>
interface End {
  readonly kind: string
  readonly reason: string
  readonly document: string
  readonly calls: number
}

const script = () => ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "echo", params: { v: 1 } }] }, { text: "Done." }])
/** The handlers of `handler`, counting its runs in `calls`. */
const handlersOf = (handler: Handler, calls: { n: number }) =>
  toolkit.toLayer({ echo: (params) => Effect.suspend(() => (calls.n++, handler(params))) as Effect.Effect<unknown> })

const plainEnd = (handler: Handler, options: object) =>
  Effect.gen(function*() {
    const calls = { n: 0 }
    const runOptions = { mode: Mode.whileNeedsResponse, maxRuns: 6, ...options } as Chain.RunOptions<never>
    const exit = yield* Effect.exit(Chain.run(Chain.make({ user: "Ticket T", toolkit }), runOptions).pipe(Effect.provide([script().layer, handlersOf(handler, calls)])))
    if (Exit.isSuccess(exit)) {
      const outcome = exit.value
      const reason = outcome._tag === "Pause" ? outcome.reason._tag : String(outcome.reason)
      return { kind: outcome._tag === "Ok" ? "Finished" : outcome._tag, reason, document: JSON.stringify(yield* Chain.encode(outcome.chain)), calls: calls.n }
    }
    const error = Cause.squash(exit.cause) as { readonly reason: { readonly _tag: string }; readonly chain: Chain.Chain }
    return { kind: "Failed", reason: error.reason._tag, document: JSON.stringify(yield* Chain.encode(error.chain)), calls: calls.n }
  })

let named = 0
const durableEnd = (handler: Handler, options: object) =>
  Effect.gen(function*() {
    const calls = { n: 0 }
    const W = DurableChain.workflow(`Unstorable${++named}`, {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit,
      chain: () => Chain.make({ user: "Ticket T", toolkit }),
      mode: Mode.whileNeedsResponse,
      maxRuns: 6,
      ...options
    })
    const live = DurableChain.layer(W).pipe(
      Layer.provideMerge(Layer.mergeAll(script().layer, handlersOf(handler, calls), WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
    )
    const exit = yield* Effect.exit(W.execute({ ticket: "T" }).pipe(Effect.provide(live)))
    if (Exit.isSuccess(exit)) return { kind: exit.value._tag, reason: exit.value.reason, document: exit.value.document, calls: calls.n }
    const error = Cause.squash(exit.cause)
    if (!(error instanceof DurableResult.DurableRunFailed)) return expect.unreachable(`a DurableRunFailed: ${String(error)}`)
    return { kind: "Failed", reason: error.reason, document: error.document, calls: calls.n }
  })

const rows: ReadonlyArray<readonly [string, Handler, object]> = [
  ["a raised cycle, default policy", () => Effect.fail(cyclic), {}],
  ["a raised cycle, handler: fail", () => Effect.fail(cyclic), { onToolFailure: { handler: "fail" } }],
  ["a raised cycle, formatted", () => Effect.fail(cyclic), { onToolFailure: { format: (failure: ToolFailurePolicy.ToolFailure) => `formatted: ${failure.kind}` } }],
  ["a raised cycle, repaired with a result", () => Effect.fail(cyclic), { onToolFailure: { handler: () => Effect.succeed(ToolFailurePolicy.succeedWith("repaired")) } }],
  ["a raised BigInt, retried with new arguments", ({ v }) => v === 1 ? Effect.fail(10n) : Effect.succeed("second ok"), {
    onToolFailure: { handler: () => Effect.succeed(ToolFailurePolicy.retryWith({ v: 2 })) }
  }],
  ["a returned BigInt", () => Effect.succeed(10n), {}],
  ["a returned BigInt, handler: fail (a result, not a handler failure)", () => Effect.succeed(10n), { onToolFailure: { handler: "fail" } }],
  ["a BigInt returned directly", () => DirectReturn.final(10n), {}],
  ["a storable value returned directly", () => DirectReturn.final("fine"), {}],
  ["a storable value", () => Effect.succeed({ x: 1 }), {}]
]

describe("tool values a durable run cannot store, under each failure policy", () => {
  it.effect.each(rows)("%s: the durable run ends as the plain run", ([_row, handler, options]) =>
    Effect.gen(function*() {
      const plain: End = yield* plainEnd(handler, options)
      const durable: End = yield* durableEnd(handler, options)
      expect(durable).toEqual(plain)
    }))
})

/**
 * A tool call that needs nothing added to its run's context runs in it as
 * it is (src/internal/tools/handler.ts `runServices`, src/internal/directReturn.ts
 * `Slot`): the run's context holds its handlers' services once, and its
 * direct-return slot passes a mark to the call holding it. Handlers of
 * different layers, and calls side by side, still get contexts of their own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, DirectReturn, Mode } from "../../../src/index.ts"
import type { Cell } from "../../../src/internal/directReturn.ts"
import { Slot } from "../../../src/internal/directReturn.ts"

class Label extends Context.Service<Label, string>()("test/Label") {}

const cell = (): Cell => ({ directReturn: false })

describe("the run's direct-return slot", () => {
  it("passes a mark to the call holding it, and nowhere while none does", () => {
    const slot = new Slot()
    slot.directReturn = true
    const first = cell()
    expect(slot.take(first)).toBe(true)
    expect(slot.directReturn).toBe(false)
    slot.directReturn = true
    expect(first.directReturn).toBe(true)
    slot.release(first)
    slot.directReturn = true
    const second = cell()
    expect(slot.take(second)).toBe(true)
    expect(second.directReturn).toBe(false)
  })

  it("is not taken while held, and only its holder gives it back", () => {
    const slot = new Slot()
    const holder = cell()
    const other = cell()
    expect(slot.take(holder)).toBe(true)
    expect(slot.take(other)).toBe(false)
    slot.release(other)
    slot.directReturn = true
    expect([holder.directReturn, other.directReturn]).toEqual([true, false])
    slot.release(holder)
    expect(slot.take(other)).toBe(true)
  })
})

/** A tool reading `Label`, from a layer of its own giving `label`; it marks its result when asked. */
const labelled = (name: string, label: string) => {
  const tool = Tool.make(name, { parameters: Schema.Struct({ mark: Schema.Boolean }), success: Schema.String, dependencies: [Label] })
  const toolkit = Toolkit.make(tool)
  const handlers = toolkit.toLayer(Effect.succeed({
    [name]: ({ mark }: { readonly mark: boolean }) =>
      Effect.gen(function*() {
        seen.push(Fiber.getCurrent()?.context)
        if (mark) yield* DirectReturn.mark
        return `${name}: ${yield* Label}`
      })
  } as never)).pipe(Layer.provide(Layer.succeed(Label, label)))
  return { toolkit, handlers }
}

/** The contexts the handlers ran in, and the model's. */
let seen: Array<Context.Context<never> | undefined> = []
let modelContexts: Array<Context.Context<never> | undefined> = []

const modelOf = (rounds: ReadonlyArray<ReadonlyArray<{ readonly name: string; readonly mark: boolean }>>) => {
  let turn = 0
  return ChatModel.scripted([() => {
    modelContexts.push(Fiber.getCurrent()?.context)
    const calls = rounds[turn++]
    return calls === undefined ? { text: "done" } : { toolCalls: calls.map(({ mark, name }) => ({ name, params: { mark } })) }
  }], { repeat: true })
}

const results = (chain: Chain.Chain) => chain.messages.flatMap((message) =>
  message.role === "tool" ? message.content.flatMap((part) => part.type === "tool-result" ? [part.result] : []) : []
)

describe("a tool call in its run's context", () => {
  it.effect("with one layer's handlers, every call runs in the run's context itself, with the layer's services", () =>
    Effect.gen(function*() {
      seen = []
      modelContexts = []
      const { handlers, toolkit } = labelled("a", "from a's layer")
      const model = modelOf([[{ name: "a", mark: false }], [{ name: "a", mark: false }]])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(results(outcome.chain)).toEqual(["a: from a's layer", "a: from a's layer"])
      expect(seen).toHaveLength(2)
      expect(seen.every((context) => context !== undefined && context === modelContexts[0])).toBe(true)
    }))

  it.effect.each([1, "unbounded"] as const)(
    "handlers of two layers each see their own layer's service, in a context of their own (concurrency %s)",
    (concurrency) =>
      Effect.gen(function*() {
        seen = []
        modelContexts = []
        const a = labelled("a", "from a's layer")
        const b = labelled("b", "from b's layer")
        const model = modelOf([[{ name: "a", mark: false }, { name: "b", mark: false }, { name: "a", mark: false }]])
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: Toolkit.merge(a.toolkit, b.toolkit) }), {
          mode: Mode.whileNeedsResponse,
          concurrency
        }).pipe(Effect.provide([model.layer, a.handlers, b.handlers]))
        expect(results(outcome.chain)).toEqual(["a: from a's layer", "b: from b's layer", "a: from a's layer"])
        expect(seen.some((context) => context === modelContexts[0])).toBe(false)
      })
  )

  it.effect.each([1, "unbounded"] as const)(
    "a mark reaches only the call that made it, one after another or side by side (concurrency %s)",
    (concurrency) =>
      Effect.gen(function*() {
        const { handlers, toolkit } = labelled("a", "x")
        const model = modelOf([[{ name: "a", mark: false }, { name: "a", mark: true }, { name: "a", mark: false }]])
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, concurrency }).pipe(
          Effect.provide([model.layer, handlers])
        )
        expect(outcome.chain.lastToolResults.map((result) => result.directReturn)).toEqual([undefined, true, undefined])
      })
  )
})

/**
 * A tool call that needs nothing added to its run's context runs in it as
 * it is (src/internal/tools/handlerContext.ts `runServices`, src/internal/directReturn.ts
 * `Slot`): the run's context holds its handlers' services once, and its
 * direct-return slot passes a mark to the call holding it. Handlers of
 * different layers, and calls side by side, still get contexts of their own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, ManagedRuntime, Scheduler, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { WorkflowEngine } from "effect/workflow"
import { DurableChain, WaitingCalls } from "../../../src/durable/index.ts"
import { ScriptedModel } from "../../../src/testing/index.ts"
import { supportWorkflow } from "../../support/durable.ts"
import { countingScheduler } from "../../support/countingScheduler.ts"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, DirectReturn, Mode, Privacy } from "../../../src/index.ts"
import type { Cell } from "../../../src/internal/directReturn.ts"
import { CurrentCall, Slot } from "../../../src/internal/directReturn.ts"
import { type CallCell, type Handler, inRunContext } from "../../../src/internal/tools/handlerContext.ts"

class Label extends Context.Service<Label, string>()("test/Label") {}

const cell = (): CallCell => ({ directReturn: false })

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
  it("handlers of a layer a runtime built on effect's default scheduler: the run adds no scheduler, so its fibers keep their cache", async () => {
    seen = []
    modelContexts = []
    const { handlers, toolkit } = labelled("a", "from a's layer")
    const model = modelOf([[{ name: "a", mark: false }]])
    const runtime = ManagedRuntime.make(Layer.merge(model.layer, handlers))
    const outcome = await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }))
    await runtime.dispose()
    expect(results(outcome.chain)).toEqual(["a: from a's layer"])
    const run = modelContexts[0]
    expect(run).toBeDefined()
    expect(seen).toEqual([run])
    // The runtime's layer holds the scheduler; the run's context does not (it runs on that scheduler already).
    expect(run === undefined ? undefined : Context.getOrUndefined(run, Scheduler.Scheduler)).toBeUndefined()
  })

  // Not it.effect: its test services put a scheduler into the run's context, which then wins.
  it("handlers of a layer with a scheduler of its own run on it", () =>
    Effect.runPromise(Effect.gen(function*() {
      seen = []
      modelContexts = []
      const { own, seen: counted } = countingScheduler()
      const tool = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
      const toolkit = Toolkit.make(tool)
      const handlers = toolkit.toLayer({ nap: () => Effect.as(Effect.yieldNow, "napped") }).pipe(
        Layer.provide(Layer.succeed(Scheduler.Scheduler, own))
      )
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: {} }] }, { text: "done" }])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(results(outcome.chain)).toEqual(["napped"])
      expect(counted.scheduled).toBeGreaterThan(0)
    })))

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

describe("a call built by a fiber of another run", () => {
  const handler: Handler = { handler: () => Effect.void, context: Context.empty() }
  const runContext = () => {
    const slot = new Slot()
    return { slot, context: Context.make(CurrentCall, slot as Cell) as Context.Context<never> }
  }

  /** `effect` on a fiber whose context is `context` itself. */
  const inContext = <A>(effect: Effect.Effect<A>, context: Context.Context<never>): Effect.Effect<A> =>
    Effect.updateContext(effect, (_: Context.Context<never>) => context)

  it.effect("takes its run's slot only when the fiber building it runs in its round's context", () =>
    Effect.gen(function*() {
      const own = runContext()
      const other = runContext()
      const mine = cell()
      // Built on a fiber of another run (with a free slot of its own): neither slot is taken.
      expect(yield* inContext(Effect.sync(() => inRunContext(handler, mine, own.context)), other.context)).toBe(false)
      expect([own.slot.take(cell()), other.slot.take(cell())]).toEqual([true, true])
      const fresh = runContext()
      const taken = yield* inContext(Effect.sync(() => inRunContext(handler, mine, fresh.context)), fresh.context)
      expect(taken).toBe(true)
      expect(mine.held).toBe(fresh.slot)
    }))
})

// Whether the later call is built on the other run's fiber depends on how effect resumes it; the
// unit test above pins the rule for a call built on a fiber of another run.
describe("a call started after another ends, in a bounded round", () => {
  it.effect("in a bounded round, a call started after an earlier one ends (here on another run's wake-up) marks its own result", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const Wait = Tool.make("wait", { parameters: Schema.Struct({}), success: Schema.String })
      const Nap = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
      const Mark = Tool.make("mark", { parameters: Schema.Struct({}), success: Schema.String })
      const toolkit = Toolkit.make(Wait, Nap, Mark)
      const handlers = toolkit.toLayer({
        wait: () => Effect.as(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(gate)), "waited"),
        nap: () => Effect.as(Effect.sleep("1 second"), "napped"),
        mark: () => DirectReturn.final("marked")
      })
      const first = ChatModel.scripted([{ toolCalls: [{ name: "wait", params: {} }, { name: "nap", params: {} }, { name: "mark", params: {} }] }, { text: "not direct" }])
      // The other run's model call opens the gate: the waiting call ends on that run's wake-up.
      const other = ChatModel.scripted([() => Effect.as(Deferred.succeed(gate, undefined), { text: "opened" })])
      const fiber = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, concurrency: 2 }).pipe(
        Effect.provide([first.layer, handlers]),
        Effect.forkChild
      )
      yield* Deferred.await(started)
      const opened = yield* Chain.run(Chain.make({ user: "open" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(other.layer))
      expect(Chain.text(opened.chain)).toBe("opened")
      yield* TestClock.adjust("1 second")
      const outcome = yield* Fiber.join(fiber)
      expect(outcome._tag === "Ok" ? outcome.reason : outcome._tag).toBe("direct-return")
      expect(outcome.chain.lastToolResults.map((result) => [result.name, result.directReturn])).toEqual([
        ["wait", undefined],
        ["nap", undefined],
        ["mark", true]
      ])
    }))
})

describe("the handlers' own services in their run", () => {
  it.effect("loopwork's settings of the handlers' layer stay the handlers': the run's own events keep their content", () =>
    Effect.gen(function*() {
      const Peek = Tool.make("peek", { parameters: Schema.Struct({}), success: Schema.Boolean })
      const toolkit = Toolkit.make(Peek)
      // The handlers' layer is built with OmitContent on; the run is not.
      const handlers = toolkit.toLayer({ peek: () => Effect.service(Privacy.OmitContent) }).pipe(Layer.provide(Layer.succeed(Privacy.OmitContent, true)))
      const model = ChatModel.scripted([{ toolCalls: [{ name: "peek", params: {} }] }, { text: "the answer" }])
      const events = yield* Stream.runCollect(Chain.stream(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse })).pipe(
        Effect.provide([model.layer, handlers])
      )
      const finished = Array.from(events).flatMap((event) => event._tag === "ModelCallFinished" ? [event.text] : [])
      expect(finished).toEqual(["", "the answer"])
      const last = Array.from(events).at(-1)
      expect(last?._tag === "RunFinished" ? last.text : last?._tag).toBe("the answer")
      // and the handler still runs with its layer's setting
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([ChatModel.scripted([{ toolCalls: [{ name: "peek", params: {} }] }, { text: "again" }]).layer, handlers])
      )
      expect(results(outcome.chain)).toEqual([true])
    }))
})

describe("marks across nested and durable runs", () => {
  const Inner = Tool.make("inner", { parameters: Schema.Struct({}), success: Schema.String })
  const inner = Toolkit.make(Inner)
  const innerHandlers = inner.toLayer({ inner: () => DirectReturn.final("inner answer") })
  const Outer = Tool.make("outer", { parameters: Schema.Struct({ mark: Schema.Boolean }), success: Schema.String })
  const outer = Toolkit.make(Outer)
  /** The outer handler runs a whole inner run, whose tool marks its own result, then marks its own if asked. */
  const outerHandlers = outer.toLayer({
    outer: ({ mark }) =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ toolCalls: [{ name: "inner", params: {} }] }])
        const nested = yield* Chain.run(Chain.make({ user: "inner", toolkit: inner }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, innerHandlers]),
          Effect.orDie
        )
        const text = nested._tag === "Ok" ? `${nested.reason}: ${nested.extra === undefined ? "" : "marked"}` : nested._tag
        return mark ? yield* DirectReturn.final(text) : text
      })
  })

  it.effect.each([false, true])("a run inside a handler marks its own call only; the outer call is marked when it marks (%s)", (mark) =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "outer", params: { mark } }] }, { text: "outer done" }])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: outer }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, outerHandlers])
      )
      expect(results(outcome.chain)).toEqual(["direct-return: marked"])
      expect(outcome._tag === "Ok" ? outcome.reason : outcome._tag).toBe(mark ? "direct-return" : "done")
      expect(outcome.chain.lastToolResults.map((result) => result.directReturn)).toEqual([mark ? true : undefined])
    }))

  it.effect("a durable run (memory engine) returns a marked result directly", () =>
    Effect.gen(function*() {
      const { handlers, toolkit } = labelled("a", "x")
      const model = ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "a", params: { mark: true } }] }, { text: "not direct" }])
      const Marked = supportWorkflow("Marked", toolkit)
      const result = yield* Marked.execute({ ticket: "T1" }).pipe(
        Effect.provide(DurableChain.layer(Marked).pipe(
          Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
        ))
      )
      expect(result._tag === "Finished" ? result.reason : result._tag).toBe("direct-return")
    }))
})

/**
 * A run leaves out its handlers' scheduler only when it is the one the run
 * runs on (src/internal/tools/handlerContext.ts `lacks`): handlers whose
 * layer has a scheduler of its own run on it, `PreventSchedulerYield` from
 * their layer holds inside them, handlers sleep on the test clock, and a run
 * inside a handler whose layer has its own scheduler runs on it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, ManagedRuntime, Scheduler, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, type Outcome } from "../../../src/index.ts"
import { countingScheduler } from "../../support/countingScheduler.ts"

const Nap = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Nap)

const counting = countingScheduler

const results = (chain: Chain.Chain) =>
  chain.messages.flatMap((m) => m.role === "tool" ? m.content.flatMap((p) => p.type === "tool-result" ? [String(p.result)] : []) : [])

const script = () => ChatModel.scripted([{ toolCalls: [{ name: "nap", params: {} }] }, { text: "done" }])

describe("handler layers and schedulers", () => {
  it("a ManagedRuntime whose layer provides a scheduler of its own: handlers run on it", async () => {
    const { own, seen } = counting()
    let handlerScheduler: unknown
    const handlers = toolkit.toLayer({
      nap: () =>
        Effect.gen(function*() {
          handlerScheduler = Fiber.getCurrent() && Context.get(Fiber.getCurrent()!.context, Scheduler.Scheduler)
          yield* Effect.yieldNow
          return "napped"
        })
    }).pipe(Layer.provide(Layer.succeed(Scheduler.Scheduler, own)))
    const model = script()
    const runtime = ManagedRuntime.make(Layer.merge(model.layer, handlers))
    const outcome = await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }))
    await runtime.dispose()
    expect(results(outcome.chain)).toEqual(["napped"])
    expect(handlerScheduler).toBe(own)
    expect(seen.scheduled).toBeGreaterThan(0)
  })

  it("handlers whose layer turns PreventSchedulerYield on see it on", () =>
    Effect.runPromise(Effect.gen(function*() {
      let prevented: boolean | undefined
      const handlers = toolkit.toLayer({
        nap: () => Effect.sync(() => (prevented = Context.get(Fiber.getCurrent()!.context, Scheduler.PreventSchedulerYield), "napped"))
      }).pipe(Layer.provide(Layer.succeed(Scheduler.PreventSchedulerYield, true)))
      const model = script()
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(results(outcome.chain)).toEqual(["napped"])
      expect(prevented).toBe(true)
    })))

  it.effect("under it.effect (TestClock), handlers from a runtime-built context sleep on the test clock", () =>
    Effect.gen(function*() {
      const handlers = toolkit.toLayer({ nap: () => Effect.as(Effect.sleep("1 hour"), "napped") })
      const runtime = ManagedRuntime.make(handlers)
      const built = yield* Effect.promise(() => runtime.context())
      const model = script()
      const fiber = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(model.layer),
        Effect.provideContext(Context.merge(yield* Effect.context<never>(), built as Context.Context<never>)),
        Effect.orDie,
        Effect.forkChild
      ) as unknown as Effect.Effect<Fiber.Fiber<Outcome.Final>>
      yield* TestClock.adjust("2 hours")
      const outcome = yield* Fiber.join(fiber)
      expect(results(outcome.chain)).toEqual(["napped"])
      yield* Effect.promise(() => runtime.dispose())
    }))

  it("a run inside a handler: outer handlers from a runtime on the default scheduler, inner ones with a scheduler of their own", async () => {
    const Inner = Tool.make("inner", { parameters: Schema.Struct({}), success: Schema.String })
    const innerKit = Toolkit.make(Inner)
    const { own, seen } = counting()
    let innerScheduler: unknown
    let outerScheduler: unknown
    let innerRunHadKey: boolean | undefined
    const innerHandlers = innerKit.toLayer({
      inner: () =>
        Effect.gen(function*() {
          innerScheduler = Context.get(Fiber.getCurrent()!.context, Scheduler.Scheduler)
          yield* Effect.yieldNow
          return "inner ok"
        })
    }).pipe(Layer.provide(Layer.succeed(Scheduler.Scheduler, own)))
    const innerModel = ChatModel.scripted([() => {
      const context = Fiber.getCurrent()?.context
      innerRunHadKey = context !== undefined && Context.getOrUndefined(context, Scheduler.Scheduler) !== undefined
      return { toolCalls: [{ name: "inner", params: {} }] }
    }, { text: "inner done" }])
    const innerRuntime = ManagedRuntime.make(Layer.merge(innerHandlers, innerModel.layer))
    const innerContext = await innerRuntime.context()
    const outerHandlers = toolkit.toLayer({
      nap: () =>
        Effect.gen(function*() {
          outerScheduler = Context.get(Fiber.getCurrent()!.context, Scheduler.Scheduler)
          const o = yield* Chain.run(Chain.make({ user: "sub", toolkit: innerKit }), { mode: Mode.whileNeedsResponse, maxRuns: 3 }).pipe(
            Effect.provide(innerContext),
            Effect.orDie
          )
          return results(o.chain).join(",")
        })
    })
    const model = script()
    const runtime = ManagedRuntime.make(Layer.merge(model.layer, outerHandlers))
    const outcome = await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }))
    await runtime.dispose()
    await innerRuntime.dispose()
    expect(results(outcome.chain)).toEqual(["inner ok"])
    expect(outerScheduler).toBe(Context.get(Context.empty(), Scheduler.Scheduler))
    expect(innerScheduler).toBe(own)
    expect(innerRunHadKey).toBe(true) // the inner run adds its handlers' own scheduler, as before 775872f
    expect(seen.scheduled).toBeGreaterThan(0)
  })
})

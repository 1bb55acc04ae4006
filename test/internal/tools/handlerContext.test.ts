/**
 * The context a tool handler runs in (src/internal/tools/handler.ts): the services its layer was
 * built with, plus the caller's, the caller's winning where both have one (as effect/ai's
 * `Context.merge(own, input)`); a run inside a handler reports no events into the outer run; and a
 * toolkit of many tools finds each handler, run after run, whatever the runs' own services.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, RunEvent } from "../../../src/index.ts"

class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}
class OnlyOwn extends Context.Service<OnlyOwn, string>()("test/OnlyOwn") {}

const Probe = Tool.make("probe", { parameters: Schema.Struct({}), success: Schema.String, dependencies: [Greeting, OnlyOwn] })
const probes = Toolkit.make(Probe)

/** The handler reads both services: one only its layer has, one both sides have. */
const probeHandlers = probes.toLayer(Effect.gen(function*() {
  const own = yield* OnlyOwn
  return {
    probe: () =>
      Effect.gen(function*() {
        const greeting = yield* Greeting
        const again = yield* OnlyOwn
        return `${greeting} / ${own} / ${again}`
      })
  }
})).pipe(Layer.provide([Layer.succeed(OnlyOwn, "own only"), Layer.succeed(Greeting, "from the layer")]))

const model = ChatModel.scripted([{ toolCalls: [{ name: "probe", params: {} }] }, { text: "done" }], { repeat: true })

const resultOf = (chain: Chain.Chain) => {
  const tool = chain.messages.find((message) => message.role === "tool")
  return tool?.role === "tool" && tool.content[0]?.type === "tool-result" ? tool.content[0].result : undefined
}

describe("the handler's context", () => {
  it.effect("the caller's service wins over the layer's; a service only the layer has is kept", () =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: probes }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(probeHandlers),
        Effect.provideService(Greeting, "from the caller"),
        Effect.provide(model.layer)
      )
      expect(resultOf(outcome.chain)).toBe("from the caller / own only / own only")
    }))

  it.effect("without the caller's, the layer's own service is used", () =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: probes }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(probeHandlers),
        Effect.provide(model.layer)
      )
      expect(resultOf(outcome.chain)).toBe("from the layer / own only / own only")
    }))

  it.effect("a run inside a handler reports no events into the outer run's stream", () =>
    Effect.gen(function*() {
      const Inner = Tool.make("inner", { parameters: Schema.Struct({}), success: Schema.String })
      const inner = Toolkit.make(Inner)
      const innerModel = ChatModel.scripted([{ text: "inner answer" }], { repeat: true })
      const layer = inner.toLayer({
        inner: () =>
          Chain.run(Chain.make({ user: "inner" }), { mode: Mode.whileNeedsResponse }).pipe(
            Effect.provide(innerModel.layer),
            Effect.map((outcome) => Chain.text(outcome.chain)),
            Effect.orDie
          )
      })
      const outer = ChatModel.scripted([{ toolCalls: [{ name: "inner", params: {} }] }, { text: "outer answer" }])
      const events = yield* Stream.runCollect(Chain.stream(Chain.make({ user: "go", toolkit: inner }), { mode: Mode.whileNeedsResponse })).pipe(
        Effect.provide([layer, outer.layer])
      )
      const started = events.filter((event): event is Extract<RunEvent.RunEvent, { _tag: "ModelCallStarted" }> => event._tag === "ModelCallStarted")
      expect(started).toHaveLength(2)
    }))

  it.effect("100 tools over 20 runs, each run with its own services: every call finds its handler", () =>
    Effect.gen(function*() {
      const tools = Array.from({ length: 100 }, (_, i) => Tool.make(`t${i}`, { parameters: Schema.Struct({}), success: Schema.String }))
      const toolkit = Toolkit.make(...tools)
      const handlers: Record<string, () => Effect.Effect<string>> = {}
      for (let i = 0; i < 100; i++) handlers[`t${i}`] = () => Effect.succeed(`handled by t${i}`)
      const layer = toolkit.toLayer(handlers as never) as unknown as Layer.Layer<Tool.Handler<`t${number}`>>
      for (let run = 0; run < 20; run++) {
        const name = `t${(run * 37) % 100}`
        const scripted = ChatModel.scripted([{ toolCalls: [{ name, params: {} }] }, { text: "done" }])
        const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide(scripted.layer),
          Effect.provideService(Greeting, `run ${run}`),
          Effect.provide(layer)
        )
        expect(resultOf(outcome.chain)).toBe(`handled by ${name}`)
      }
    }))
})

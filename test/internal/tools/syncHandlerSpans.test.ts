/**
 * With a tracer installed, a handler's `Effect.sync` runs inside its call's
 * `execute_tool` span, like every handler's effect: the span covers the
 * handler's work and the handler sees that span as its parent (the fast
 * path that runs an `Effect.sync` at once is off in a traced run).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Option, Schema, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../../src/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)

const logging = (log: Array<string>) =>
  Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      log.push(`start ${options.name}`)
      const end = span.end.bind(span)
      span.end = (endTime, exit) => {
        log.push(`end ${options.name}`)
        end(endTime, exit)
      }
      return span
    }
  })

const parentName = (): string => {
  const context = Fiber.getCurrent()?.context
  if (context === undefined) return "no fiber"
  const parent = Context.getOption(context, Tracer.ParentSpan)
  return Option.isSome(parent) && parent.value._tag === "Span" ? parent.value.name : "none"
}

const run = (calls: number) =>
  Effect.gen(function*() {
    const log: Array<string> = []
    const model = ChatModel.scripted([
      { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: "echo", params: { q: `q${i}` } })) },
      { text: "done" }
    ])
    const handlers = toolkit.toLayer({
      echo: ({ q }) =>
        Effect.sync(() => {
          log.push(`thunk ${q} under ${parentName()}`)
          return q
        })
    })
    yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, handlers]),
      Effect.withTracer(logging(log))
    )
    return log.filter((line) => line.includes("echo") || line.startsWith("thunk"))
  })

describe("an Effect.sync handler in a traced run", () => {
  it.effect("one call: the thunk runs inside execute_tool echo", () =>
    Effect.gen(function*() {
      expect(yield* run(1)).toEqual([
        "start execute_tool echo",
        "thunk q0 under execute_tool echo",
        "end execute_tool echo"
      ])
    }))

  it.effect("two calls: each thunk runs inside its own execute_tool echo", () =>
    Effect.gen(function*() {
      expect(yield* run(2)).toEqual([
        "start execute_tool echo",
        "thunk q0 under execute_tool echo",
        "end execute_tool echo",
        "start execute_tool echo",
        "thunk q1 under execute_tool echo",
        "end execute_tool echo"
      ])
    }))
})

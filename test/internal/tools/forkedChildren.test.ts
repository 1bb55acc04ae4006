/**
 * A fiber a handler leaves behind (Effect.forkChild) in a concurrent round ends with its own
 * call's fiber: it cannot run on into a later call of the round and mark that call as a direct
 * return (a round that reused a finished call's fiber for the next call let it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, DirectReturn, Mode } from "../../../src/index.ts"

const T = Tool.make("t", { parameters: Schema.Struct({ kind: Schema.String, ms: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(T)

const run = (concurrency: number | "unbounded") =>
  Effect.gen(function*() {
    const log: Array<string> = []
    const handlers = toolkit.toLayer({
      t: ({ kind, ms }) =>
        kind === "bg"
          ? Effect.gen(function*() {
            yield* Effect.forkChild(
              Effect.sleep(`${ms} millis`).pipe(
                Effect.andThen(Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => log.push(`bg done at ${t}`)))),
                Effect.onInterrupt(() => Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => log.push(`bg interrupted at ${t}`))))
              )
            )
            return "bg"
          })
          : Effect.as(Effect.sleep(`${ms} millis`), "slept")
    })
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "t", params: { kind: "bg", ms: 5 } }, { name: "t", params: { kind: "sleep", ms: 20 } }] },
      { text: "done" }
    ])
    const fiber = yield* Effect.forkChild(
      Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, concurrency }).pipe(
        Effect.provide([model.layer, handlers])
      )
    )
    yield* TestClock.adjust("1 second")
    yield* Fiber.join(fiber)
    return log
  })

describe("a handler's child fiber, in a multi-call round", () => {
  for (const concurrency of [2, "unbounded"] as const) {
    it.effect(`concurrency ${concurrency}: is interrupted when its own call ends (as Effect.forEach gives)`, () =>
      Effect.gen(function*() {
        const log = yield* run(concurrency)
        console.log(concurrency, JSON.stringify(log))
        // Parent: the child is gone with its call's fiber and never finishes
        expect(log).not.toContain("bg done at 5")
      }))
  }
})

describe("a handler's child fiber that marks a direct return after its call ended", () => {
  for (const concurrency of [2, "unbounded"] as const) {
    it.effect(`concurrency ${concurrency}: does not turn the round into a direct return (the child is interrupted with its call)`, () =>
      Effect.gen(function*() {
        const handlers = toolkit.toLayer({
          t: ({ kind, ms }) =>
            kind === "bg"
              ? Effect.as(Effect.forkChild(Effect.andThen(Effect.sleep(`${ms} millis`), DirectReturn.mark)), "bg")
              : Effect.as(Effect.sleep(`${ms} millis`), "slept")
        })
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "t", params: { kind: "bg", ms: 5 } }, { name: "t", params: { kind: "sleep", ms: 20 } }] },
          { text: "done" }
        ])
        const fiber = yield* Effect.forkChild(
          Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse, concurrency }).pipe(
            Effect.provide([model.layer, handlers])
          )
        )
        yield* TestClock.adjust("1 second")
        const outcome = yield* Fiber.join(fiber)
        const reason = (outcome as any).reason
        console.log("direct", concurrency, JSON.stringify({ tag: outcome._tag, reason, modelCalls: model.calls, marks: outcome.chain.lastToolResults.map((r: any) => r.directReturn ?? false) }))
        expect(reason).toBe("done")
        expect(model.calls).toBe(2)
      }))
  }
})

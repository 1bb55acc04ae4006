/**
 * A `needsApproval` predicate that answers with an Effect is bounded as a handler is: past the
 * call's timeout (the tool's annotation or the run's `toolTimeout`) it asks a human, and
 * `StopSignal.interrupt` cuts it short, leaving the call pending to be asked again on resume.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, Mode, StopSignal, ToolTimeout } from "../src/index.ts"

/** A tool whose predicate takes `ms` to answer `answer`; it counts predicate starts, ends, finalizers and runs. */
const kit = (answer: boolean) => {
  const seen = { asked: 0, answered: 0, finalized: 0, ran: 0 }
  const Check = Tool.make("check", {
    parameters: Schema.Struct({ ms: Schema.Number }),
    success: Schema.String,
    needsApproval: ({ ms }: { readonly ms: number }) =>
      Effect.sync(() => seen.asked++).pipe(
        Effect.andThen(Effect.sleep(ms)),
        Effect.andThen(Effect.sync(() => {
          seen.answered++
          return answer
        })),
        Effect.ensuring(Effect.sync(() => seen.finalized++))
      )
  })
  const toolkit = Toolkit.make(Check)
  const layer = toolkit.toLayer({ check: () => Effect.sync(() => `ran ${++seen.ran}`) })
  return { seen, layer, chain: Chain.make({ user: "check it", toolkit }) }
}

const model = (ms: number) => ChatModel.scripted([{ toolCalls: [{ name: "check", params: { ms }, id: "c1" }] }, { text: "done" }])

// Each row: the predicate's delay and answer, the run's toolTimeout, and how the run ends at the row's time.
const rows: ReadonlyArray<{
  readonly name: string
  readonly ms: number
  readonly answer: boolean
  readonly toolTimeout: Duration.Input
  readonly at: Duration.Input
  readonly ends: "ran" | "asks a human"
}> = [
  { name: "a predicate answering false at 1.9 s under a 2 s timeout lets the call run", ms: 1900, answer: false, toolTimeout: "2 seconds", at: "1900 millis", ends: "ran" },
  { name: "a predicate that would answer false at 2.1 s asks a human at exactly 2 s", ms: 2100, answer: false, toolTimeout: "2 seconds", at: "2 seconds", ends: "asks a human" },
  { name: "a predicate that never answers asks a human at the timeout", ms: 1e12, answer: false, toolTimeout: "5 seconds", at: "5 seconds", ends: "asks a human" }
]

describe("a needsApproval Effect is bounded", () => {
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const tools = kit(row.answer)
        const fiber = yield* Chain.run(tools.chain, { mode: Mode.whileNeedsResponse, toolTimeout: row.toolTimeout }).pipe(
          Effect.provide([model(row.ms).layer, tools.layer]),
          Effect.forkChild
        )
        yield* TestClock.adjust(row.at)
        const outcome = fiber.pollUnsafe()
        expect(outcome).toBeDefined()
        const final = yield* Fiber.join(fiber)
        expect(tools.seen.asked).toBe(1)
        expect(tools.seen.finalized).toBe(1)
        if (row.ends === "ran") {
          expect(final._tag).toBe("Ok")
          expect(tools.seen.ran).toBe(1)
        } else {
          expect(final._tag).toBe("Pause")
          expect(tools.seen.answered).toBe(0)
          expect(tools.seen.ran).toBe(0)
          expect(final.chain.callStates).toEqual(new Map([["c1", { _tag: "AwaitingApproval" }]]))
        }
      }))
  }

  it.effect("the tool's ToolTimeout annotation bounds its predicate too", () =>
    Effect.gen(function*() {
      const tools = kit(false)
      const toolkit = Toolkit.make(tools.chain.toolkit!.tools.check.annotate(ToolTimeout.Annotation, "3 seconds"))
      const chain = Chain.make({ user: "check it", toolkit })
      const fiber = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model(1e12).layer, tools.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("2999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const final = yield* Fiber.join(fiber)
      expect(final._tag).toBe("Pause")
      expect(final.chain.callStates).toEqual(new Map([["c1", { _tag: "AwaitingApproval" }]]))
    }))

  it.effect("StopSignal.interrupt cuts a running predicate short: the call stays pending, unasked, and is asked again on resume", () =>
    Effect.gen(function*() {
      const tools = kit(false)
      const stop = yield* StopSignal.make
      const fiber = yield* Chain.run(tools.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(
        Effect.provide([model(1e12).layer, tools.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1 minute")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* StopSignal.interrupt(stop)
      const paused = yield* Fiber.join(fiber)
      expect(paused._tag).toBe("Pause")
      expect(paused._tag === "Pause" && paused.reason).toEqual({ _tag: "StopRequested" })
      expect(tools.seen).toEqual({ asked: 1, answered: 0, finalized: 1, ran: 0 })
      expect(paused.chain.pendingToolCalls.map((call) => call.id)).toEqual(["c1"])
      expect(paused.chain.callStates).toEqual(new Map())
      // resumed, the call is asked again (here it times out, so a human is asked)
      const resumed = yield* Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, toolTimeout: "1 second" }).pipe(
        Effect.provide([ChatModel.scripted([{ text: "done" }]).layer, tools.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      const asked = yield* Fiber.join(resumed)
      expect(tools.seen).toEqual({ asked: 2, answered: 0, finalized: 2, ran: 0 })
      expect(asked.chain.callStates).toEqual(new Map([["c1", { _tag: "AwaitingApproval" }]]))
    }))
})

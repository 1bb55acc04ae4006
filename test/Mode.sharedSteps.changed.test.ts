/**
 * Runs share `Step.forRun`'s steps only for option values that cannot
 * change: a `toolTimeout` object or pair, a `toolChoice` object or an
 * `onToolFailure` object changed in place between two runs is read again,
 * and checked again; an option a getter answers differently to the check
 * and to the steps is refused for what the steps read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode, Step } from "../src/index.ts"

const Nap = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Nap)
const handlers = toolkit.toLayer({ nap: () => Effect.as(Effect.sleep("60 millis"), "napped") })
const script: ReadonlyArray<ChatModel.ScriptedReply> = [{ toolCalls: [{ name: "nap", params: {} }] }, { text: "done" }]

/** The tool results of a chain, as the model saw them. */
const results = (chain: Chain.Chain) =>
  chain.messages.flatMap((m) => m.role === "tool" ? m.content.flatMap((p) => p.type === "tool-result" ? [String(p.result)] : []) : [])

/** One run on the test clock, moved on past the tool's 60 ms nap. */
const runOnce = (options: Chain.RunOptions<ChatModel.ChatModel>) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted(script)
    const fiber = yield* Effect.forkChild(Chain.run(Chain.make({ user: "go", toolkit }), options).pipe(Effect.provide([model.layer, handlers])))
    yield* TestClock.adjust("61 millis")
    const outcome = yield* Fiber.join(fiber)
    return results(outcome.chain)
  })

describe("a toolTimeout object changed between runs (same object, new value)", () => {
  it.effect("Chain.run reads it again: the second run times its call out", () =>
    Effect.gen(function*() {
      // Duration.Input accepts a DurationObject: one config object, tuned between runs.
      const timeout = { seconds: 10 } as { seconds?: number; milliseconds?: number }
      const options = { mode: Mode.whileNeedsResponse, toolTimeout: timeout }
      const first = yield* runOnce(options)
      expect(first).toEqual(["napped"])
      delete timeout.seconds
      timeout.milliseconds = 5
      // Chain.run checks the changed object (valid); the run should time its 60 ms call out after 5 ms.
      const second = yield* runOnce({ ...options })
      expect(second[0]).not.toBe("napped")
    }))

  it.effect("same with a [seconds, nanos] tuple", () =>
    Effect.gen(function*() {
      const timeout: [number, number] = [10, 0]
      expect(yield* runOnce({ mode: Mode.whileNeedsResponse, toolTimeout: timeout })).toEqual(["napped"])
      timeout[0] = 0
      timeout[1] = 5_000_000
      const second = yield* runOnce({ mode: Mode.whileNeedsResponse, toolTimeout: timeout })
      expect(second[0]).not.toBe("napped")
    }))
})

describe("a custom mode's own options, an inner object made invalid between runs", () => {
  // A custom mode that builds its steps from options of its own (not those Chain.run checked).
  const choice: { tool: unknown } = { tool: "nap" }
  const custom: Mode.Mode<ChatModel.ChatModel> = (chain) => {
    const s = Step.forRun(chain, { toolChoice: choice as never })
    return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm))
  }
  it.effect("the second run ends with InvalidInput on toolChoice, as Step.callLlmWith would", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "hi" }], { repeat: true })
      const first = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: custom }).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.result
      )
      expect(first._tag).toBe("Success")
      choice.tool = 42
      // What a fresh build answers for these values:
      const fresh = yield* Step.start(Chain.make({ user: "go", toolkit })).pipe(
        Step.callLlmWith({ toolChoice: choice as never }),
        Effect.provide(model.layer)
      )
      expect(fresh._tag).toBe("Error")
      const second = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: custom }).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.result
      )
      expect(second._tag).toBe("Failure")
      expect(second._tag === "Failure" && second.failure.reason).toBeInstanceOf(LoopError.InvalidInput)
      expect(model.requests.at(-1)?.toolChoice).not.toEqual({ tool: 42 })
    }))

  it.effect("onToolFailure object given an unknown kind between runs", () =>
    Effect.gen(function*() {
      const policy: Record<string, unknown> = { handler: "feed-back" }
      const mode: Mode.Mode<ChatModel.ChatModel> = (chain) => {
        const s = Step.forRun(chain, { onToolFailure: policy as never })
        return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm))
      }
      const run = () =>
        Chain.run(Chain.make({ user: "go", toolkit }), { mode }).pipe(
          Effect.provide([ChatModel.scripted([{ text: "hi" }]).layer, handlers]),
          Effect.result
        )
      expect((yield* run())._tag).toBe("Success")
      policy.handlr = "fail" // a typo the check names: "is not a failure kind"
      const second = yield* run()
      expect(second._tag).toBe("Failure")
      expect(second._tag === "Failure" && second.failure.reason).toBeInstanceOf(LoopError.InvalidInput)
    }))
})

describe("an option read differently by Chain.run's check and by the steps", () => {
  it.effect("a getter that answers 1 to the check and \"lots\" after: the run is refused for what its steps read, and so is a later Step.forRun({ concurrency: \"lots\" })", () =>
    Effect.gen(function*() {
      let reads = 0
      const lying = Object.defineProperty({ mode: Mode.whileNeedsResponse }, "concurrency", {
        enumerable: true,
        get: () => (reads++ === 0 ? 1 : "lots")
      })
      const model = ChatModel.scripted([{ text: "hi" }], { repeat: true })
      const ran = yield* Chain.run(Chain.make({ user: "go", toolkit }), lying as never).pipe(
        Effect.provide([model.layer, handlers]),
        Effect.result
      )
      expect(ran._tag).toBe("Failure")
      expect(ran._tag === "Failure" && ran.failure.reason).toBeInstanceOf(LoopError.InvalidInput)
      expect(ran._tag === "Failure" && ran.failure.reason._tag === "InvalidInput" && ran.failure.reason.field).toBe("concurrency")
      expect(model.calls).toBe(0)
      // A custom mode's own options, never checked by Chain.run: Step.forRun refuses them too.
      const chain = Chain.make({ user: "go", toolkit })
      const s = Step.forRun(chain, { concurrency: "lots" as never })
      const outcome = yield* Step.start(chain).pipe(s.callLlm, Effect.provide(model.layer))
      expect(outcome._tag).toBe("Error")
      expect(outcome._tag === "Error" && outcome.error).toBeInstanceOf(LoopError.InvalidInput)
    }))
})


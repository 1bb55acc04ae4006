/**
 * The step contract (`Step.make`, `Step.start`, `continueOrDone`): terminal outcomes pass
 * through every built-in step unchanged, and a hand-built pipeline short-circuits by itself.
 * Each built-in step has its own file under test/steps/, named after src/internal/steps/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Chain, ChatModel, LoopError, Outcome, Step } from "../src/index.ts"
import {
  makeProbe, handlers, baseChain, call, withPending, assistantText, run, expectContinue, expectOk, expectError,
  lastMessage, toolResultParts
} from "./support/steps.ts"

// -----------------------------------------------------------------------------
// Terminal outcomes pass through every step
// -----------------------------------------------------------------------------

describe("terminal outcomes pass through every step unchanged", () => {
  interface Counters {
    custom: number
    loop: number
    pausePredicate: number
  }

  const steps = (counters: Counters): ReadonlyArray<readonly [string, Step.Step<ChatModel.ChatModel>]> => [
    ["callLlm", Step.callLlm],
    ["callLlmWith({ toolChoice })", Step.callLlmWith({ toolChoice: "required" })],
    ["executeTools", Step.executeTools],
    ["executeToolsWith({ concurrency: 1 })", Step.executeToolsWith({ concurrency: 1 })],
    ["checkMaxRuns()", Step.checkMaxRuns()],
    ["checkReturnBehavior", Step.checkReturnBehavior],
    [
      "checkPause(() => true)",
      Step.checkPause(() => {
        counters.pausePredicate++
        return true
      })
    ],
    ["checkUntilTool([\"x\"])", Step.checkUntilTool(["x"])],
    ["checkToolSuccess", Step.checkToolSuccess],
    [
      "continueOrDone(loop)",
      Step.continueOrDone((chain: Chain.Chain) =>
        Effect.sync(() => {
          counters.loop++
          return new Outcome.Ok(chain, "done")
        })
      )
    ],
    [
      "Step.make(custom)",
      Step.make((chain) =>
        Effect.sync(() => {
          counters.custom++
          return new Outcome.Ok(chain, "step")
        })
      )
    ]
  ]

  // A chain every step would act on: pending calls, over the run budget,
  // needing a response, with a fresh successful round of `x`-like results.
  const busyChain = () =>
    withPending([call("p1", "search", { query: "pending" })]).copy({
      runCount: 25,
      failureCount: 2,
      lastToolResults: [{ id: "r1", name: "x", isFailure: false, result: "r", encoded: "r" }]
    })

  const terminals: ReadonlyArray<readonly [string, (chain: Chain.Chain) => Outcome.Terminal]> = [
    ["Ok", (chain) => new Outcome.Ok(chain, "done", { some: "extra" })],
    ["Pause", (chain) => new Outcome.Pause(chain, { _tag: "StopRequested" })],
    ["Error", (chain) => new Outcome.Error(chain, new LoopError.MaxRunsExceeded({ runs: 1, maxRuns: 1 }))]
  ]

  const names = steps({ custom: 0, loop: 0, pausePredicate: 0 }).map(([name]) => name)
  const cases = names.flatMap((stepName, index) =>
    terminals.map(([tag, make]) => [stepName, tag, index, make] as const)
  )

  it("covers 11 steps x 3 terminal outcomes", () => {
    expect(cases).toHaveLength(33)
  })

  it.effect.each(cases)("%s passes %s through", ([, , index, make]) =>
    Effect.gen(function*() {
      const counters: Counters = { custom: 0, loop: 0, pausePredicate: 0 }
      const [, step] = steps(counters)[index]
      const probe = makeProbe()
      const model = ChatModel.scripted([{ text: "should not be called" }])
      const incoming = make(busyChain())
      const outcome = yield* step(Effect.succeed(incoming)).pipe(Effect.provide([model.layer, handlers(probe)]))
      expect(outcome).toBe(incoming)
      expect(model.calls).toBe(0)
      expect(model.requests).toHaveLength(0)
      expect(probe.started).toEqual([])
      expect(counters).toEqual({ custom: 0, loop: 0, pausePredicate: 0 })
    }))

  it.effect("a pipeline short-circuits after the first terminal outcome", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "should not be called" }])
      let after = 0
      const chain = baseChain()
      const outcome = yield* Step.start(chain).pipe(
        Step.checkPause(() => true),
        Step.executeTools,
        Step.callLlm,
        Step.checkMaxRuns({ maxRuns: 1 }),
        Step.make((c) => Effect.sync(() => (after++, new Outcome.Continue(c)))),
        Effect.provide(model.layer)
      )
      expect(outcome._tag).toBe("Pause")
      expect(outcome.chain).toBe(chain)
      expect(model.calls).toBe(0)
      expect(after).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// continueOrDone and make
// -----------------------------------------------------------------------------

describe("continueOrDone", () => {
  it.effect("needs a response -> calls the loop with the chain (and options) and returns its outcome", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      const seen: Array<readonly [Chain.Chain, { readonly tag: string }]> = []
      const result = new Outcome.Ok(chain, "step", "from loop")
      const step = Step.continueOrDone(
        (c: Chain.Chain, options: { readonly tag: string }) => Effect.sync(() => (seen.push([c, options]), result)),
        { tag: "opts" }
      )
      const outcome = yield* run(chain, step)
      expect(outcome).toBe(result)
      expect(seen).toHaveLength(1)
      expect(seen[0][0]).toBe(chain)
      expect(seen[0][1]).toEqual({ tag: "opts" })
    }))

  it.effect("pending tool calls also need a response -> calls the loop", () =>
    Effect.gen(function*() {
      let calls = 0
      const chain = withPending([call("a", "search", { query: "q" })])
      const step = Step.continueOrDone((c: Chain.Chain) => Effect.sync(() => (calls++, new Outcome.Ok(c, "done"))))
      yield* run(chain, step)
      expect(calls).toBe(1)
    }))

  it.effect("no response needed -> Ok done without calling the loop", () =>
    Effect.gen(function*() {
      let calls = 0
      const chain = baseChain().copy({ messages: [...baseChain().messages, assistantText("Done.")] })
      const step = Step.continueOrDone((c: Chain.Chain) => Effect.sync(() => (calls++, new Outcome.Continue(c))))
      const ok = expectOk(yield* run(chain, step))
      expect(ok.reason).toBe("done")
      expect(ok.chain).toBe(chain)
      expect(ok.extra).toBeUndefined()
      expect(calls).toBe(0)
    }))
})

describe("Step.make", () => {
  it.effect("runs the function on Continue with the chain and returns its outcome", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      const seen: Array<Chain.Chain> = []
      const produced = new Outcome.Pause(chain, { _tag: "Requested", message: "custom" })
      const step = Step.make((c) => Effect.sync(() => (seen.push(c), produced)))
      expect(yield* run(chain, step)).toBe(produced)
      expect(seen).toHaveLength(1)
      expect(seen[0]).toBe(chain)
    }))

  it.effect("can transform the chain for the next step", () =>
    Effect.gen(function*() {
      const addNote = Step.make((c) => Effect.succeed(new Outcome.Continue(c.copy({ context: { note: "hi" } }))))
      const next = expectContinue(yield* run(baseChain(), addNote))
      expect(next.context).toEqual({ note: "hi" })
    }))

  it.effect("its Effect context requirement is provided like any effect", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "from the model" }])
      const viaModel = Step.make((c) =>
        Effect.flatMap(Effect.service(ChatModel.ChatModel), () => Effect.succeed(new Outcome.Ok(c, "step", "had model")))
      )
      const ok = expectOk(yield* run(baseChain(), viaModel).pipe(Effect.provide(model.layer)))
      expect(ok.extra).toBe("had model")
    }))
})

// -----------------------------------------------------------------------------
// End to end
// -----------------------------------------------------------------------------

describe("a hand-built pipeline", () => {
  const loop = (chain: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
    Step.start(chain).pipe(Step.callLlm, Step.executeTools, Step.checkMaxRuns(), Step.continueOrDone(loop))

  it.effect("start -> callLlm -> executeTools -> checkMaxRuns -> continueOrDone: tool call, then Done!", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const model = ChatModel.scripted([
        { text: "Searching.", toolCalls: [{ name: "search", params: { query: "effect" } }] },
        { text: "Done!" }
      ])
      const chain = baseChain()
      const ok = expectOk(yield* loop(chain).pipe(Effect.provide([model.layer, handlers(probe)])))
      expect(ok.reason).toBe("done")
      expect(ok.chain.runCount).toBe(2)
      expect(model.calls).toBe(2)
      expect(probe.started).toEqual(["search:effect"])
      expect(Chain.text(ok.chain)).toBe("Done!")
      expect(lastMessage(ok.chain).role).toBe("assistant")
      expect(ok.chain.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(ok.chain.failureCount).toBe(0)
      expect(ok.chain.pendingToolCalls).toEqual([])
      // the second request carried the tool result
      const second = model.requests[1].prompt.content
      expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolResultParts(second[3])).toMatchObject([{ id: "call_1_1", name: "search", result: "results for effect" }])
    }))

  it.effect("the same pipeline stops with MaxRunsExceeded when the model keeps calling tools", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "search", params: { query: "again" } }] }], {
        repeat: true
      })
      const bounded = (chain: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
        Step.start(chain).pipe(
          Step.callLlm,
          Step.executeTools,
          Step.checkMaxRuns({ maxRuns: 3 }),
          Step.continueOrDone(bounded)
        )
      const error = expectError(yield* bounded(baseChain()).pipe(Effect.provide([model.layer, handlers()])))
      expect(error.error.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(model.calls).toBe(3)
      expect(error.chain.runCount).toBe(3)
    }))
})

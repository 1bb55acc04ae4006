import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Outcome, ReturnBehavior, Step } from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** `query: "fail"` makes the handler fail. */
const Search = Tool.make("search", {
  description: "Search the web",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String,
  failure: Schema.String
})
const Submit = Tool.make("submit", {
  parameters: Schema.Struct({ answer: Schema.String }),
  success: Schema.String
})
/** Sleeps `ms`, then logs `label@<clock millis>` and returns `label`. */
const Wait = Tool.make("wait", {
  parameters: Schema.Struct({ label: Schema.String, ms: Schema.Number }),
  success: Schema.String
})
const Finish = Tool.make("finish", { success: Schema.String }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")

/** Dies with a defect (not a typed failure). */
const Crash = Tool.make("crash", { success: Schema.String, failure: Schema.String })
/** Fails with a structured typed failure. */
const Reject = Tool.make("reject", {
  success: Schema.String,
  failure: Schema.Struct({ code: Schema.Number, reason: Schema.String })
})

/** Its success schema encodes: the typed result is a number, the model sees a string. */
const Count = Tool.make("count", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.NumberFromString
})

const tools = Toolkit.make(Search, Submit, Wait, Finish, Crash, Reject, Count)
const toolNames = ["search", "submit", "wait", "finish", "crash", "reject", "count"]


interface Probe {
  /** Handler invocations, in start order. */
  readonly started: Array<string>
  /** `wait` completions: `label@millis`. */
  readonly finished: Array<string>
}

const makeProbe = (): Probe => ({ started: [], finished: [] })

const handlers = (probe: Probe = makeProbe()) =>
  tools.toLayer({
    search: ({ query }) => {
      probe.started.push(`search:${query}`)
      return query === "fail" ? Effect.fail("search broke") : Effect.succeed(`results for ${query}`)
    },
    submit: ({ answer }) => {
      probe.started.push(`submit:${answer}`)
      return Effect.succeed(`submitted ${answer}`)
    },
    wait: ({ label, ms }) =>
      Effect.gen(function*() {
        probe.started.push(`wait:${label}`)
        yield* Effect.sleep(ms)
        const now = yield* Clock.currentTimeMillis
        probe.finished.push(`${label}@${now}`)
        return label
      }),
    finish: () => {
      probe.started.push("finish")
      return Effect.succeed("finished")
    },
    crash: () => {
      probe.started.push("crash")
      return Effect.die(new globalThis.Error("kaboom"))
    },
    reject: () => {
      probe.started.push("reject")
      return Effect.fail({ code: 7, reason: "not allowed" })
    },
    count: ({ text }) => {
      probe.started.push(`count:${text}`)
      return Effect.succeed(text.length)
    }
  })

const baseChain = () => Chain.make({ system: "You are helpful.", user: "Find something.", toolkit: tools })

const call = (id: string, name: string, params: unknown): ToolCall.ToolCall => ({ id, name, params })

/** A chain with tool calls pending, as if the model had just asked for them. */
const withPending = (calls: ReadonlyArray<ToolCall.ToolCall>, chain: Chain.Chain = baseChain()) =>
  chain.copy({
    messages: [
      ...chain.messages,
      Prompt.assistantMessage({
        content: calls.map((c) =>
          Prompt.makePart("tool-call", { id: c.id, name: c.name, params: c.params, providerExecuted: false })
        )
      })
    ],
    pendingToolCalls: calls
  })

const assistantText = (text: string): Prompt.AssistantMessage =>
  Prompt.assistantMessage({ content: [Prompt.makePart("text", { text })] })

const run = <R>(chain: Chain.Chain, step: Step.Step<R>) => Step.start(chain).pipe(step)

/** Runs `executeTools` (or a variant) on a chain with the given pending calls. */
const runTools = (
  calls: ReadonlyArray<ToolCall.ToolCall>,
  options: { readonly step?: Step.Step; readonly chain?: Chain.Chain; readonly probe?: Probe } = {}
) =>
  run(withPending(calls, options.chain ?? baseChain()), options.step ?? Step.executeTools).pipe(
    Effect.provide(handlers(options.probe))
  )

const expectContinue = (outcome: Outcome.Outcome): Chain.Chain => {
  expect(outcome._tag).toBe("Continue")
  if (outcome._tag !== "Continue") throw new globalThis.Error(`expected Continue, got ${outcome._tag}`)
  return outcome.chain
}

const expectOk = (outcome: Outcome.Outcome): Outcome.Ok => {
  expect(outcome._tag).toBe("Ok")
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

const expectError = (outcome: Outcome.Outcome): Outcome.Error => {
  expect(outcome._tag).toBe("Error")
  if (outcome._tag !== "Error") throw new globalThis.Error(`expected Error, got ${outcome._tag}`)
  return outcome
}

const lastMessage = (chain: Chain.Chain): Prompt.Message => chain.messages[chain.messages.length - 1]

const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") return []
  return message.content.flatMap((part) => part.type === "tool-result" ? [part] : [])
}

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
// Step.callLlm
// -----------------------------------------------------------------------------

describe("callLlm", () => {
  it.effect("appends the assistant message, records the response and counts the run (0 -> 1)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{
        text: "Let me search.",
        toolCalls: [{ id: "c1", name: "search", params: { query: "effect" } }, { name: "submit", params: { answer: "42" } }]
      }])
      const chain = baseChain()
      const next = expectContinue(yield* run(chain, Step.callLlm).pipe(Effect.provide(model.layer)))

      expect(next.runCount).toBe(1)
      expect(next.messages).toHaveLength(chain.messages.length + 1)
      expect(next.messages.slice(0, chain.messages.length)).toEqual(chain.messages)
      const assistant = lastMessage(next)
      expect(assistant.role).toBe("assistant")
      if (assistant.role !== "assistant") return
      expect(assistant.content.map((part) => part.type)).toEqual(["text", "tool-call", "tool-call"])
      expect(assistant.content[0]).toMatchObject({ type: "text", text: "Let me search." })
      expect(assistant.content[1]).toMatchObject({ type: "tool-call", id: "c1", name: "search", params: { query: "effect" } })
      expect(assistant.content[2]).toMatchObject({ type: "tool-call", id: "call_1_2", name: "submit" })

      expect(next.pendingToolCalls).toEqual([
        { id: "c1", name: "search", params: { query: "effect" } },
        { id: "call_1_2", name: "submit", params: { answer: "42" } }
      ])
      expect(next.lastResponse?.text).toBe("Let me search.")
      expect(next.lastResponse?.finishReason).toBe("tool-calls")
      expect(next.lastResponse?.toolCalls).toEqual(next.pendingToolCalls)
      expect(Chain.text(next)).toBe("Let me search.")
      expect(next.needsResponse).toBe(true)

      // the input chain is untouched
      expect(chain.runCount).toBe(0)
      expect(chain.messages).toHaveLength(2)
      expect(chain.lastResponse).toBeUndefined()
      expect(chain.pendingToolCalls).toEqual([])
    }))

  it.effect("counts from the chain's runCount (3 -> 4) and keeps the other fields", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Hi" }])
      const chain = baseChain().copy({ runCount: 3, failureCount: 2, context: { user: "u1" } })
      const next = expectContinue(yield* run(chain, Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(next.runCount).toBe(4)
      expect(next.failureCount).toBe(2)
      expect(next.context).toEqual({ user: "u1" })
      expect(next.toolkit).toBe(tools)
    }))

  it.effect("a text-only answer: no pending calls, finishReason stop, needs no response", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "All done." }])
      const next = expectContinue(yield* run(baseChain(), Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(next.pendingToolCalls).toEqual([])
      expect(next.lastResponse?.text).toBe("All done.")
      expect(next.lastResponse?.finishReason).toBe("stop")
      expect(next.lastResponse?.toolCalls).toEqual([])
      expect(lastMessage(next)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "All done." }] })
      expect(next.needsResponse).toBe(false)
    }))

  it.effect("keeps the model's finish reason", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Trunc", finishReason: "length" }])
      const next = expectContinue(yield* run(baseChain(), Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(next.lastResponse?.finishReason).toBe("length")
    }))

  it.effect("sends the chain's messages, the toolkit's tools and toolChoice auto by default", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "ok" }])
      yield* run(baseChain(), Step.callLlm).pipe(Effect.provide(model.layer))
      expect(model.calls).toBe(1)
      expect(model.requests).toHaveLength(1)
      const request = model.requests[0]
      expect(request.prompt.content.map((m) => m.role)).toEqual(["system", "user"])
      expect(request.prompt.content[0]).toMatchObject({ role: "system", content: "You are helpful." })
      expect(request.prompt.content[1]).toMatchObject({ role: "user", content: [{ type: "text", text: "Find something." }] })
      expect(request.tools.map((t) => t.name)).toEqual(toolNames)
      expect(request.toolChoice).toBe("auto")
    }))

  it.effect.each([
    ["required", "required"],
    ["none", "none"],
    ["{ tool: search }", { tool: "search" }]
  ] as const)("callLlmWith({ toolChoice: %s }) passes it to the model", ([, toolChoice]) =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "ok" }])
      yield* run(baseChain(), Step.callLlmWith({ toolChoice })).pipe(Effect.provide(model.layer))
      expect(model.requests[0].toolChoice).toEqual(toolChoice)
    }))

  it.effect("a chain without a toolkit sends no tools", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "ok" }])
      yield* run(Chain.make({ user: "Hi" }), Step.callLlm).pipe(Effect.provide(model.layer))
      expect(model.requests[0].tools).toEqual([])
    }))

  it.effect("a model failure becomes Error(ModelCallFailed) carrying the chain before the call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "boom" }])
      const chain = baseChain().copy({ runCount: 3 })
      const error = expectError(yield* run(chain, Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(error.error._tag).toBe("ModelCallFailed")
      expect(error.error).toBeInstanceOf(LoopError.ModelCallFailed)
      expect(error.error.message).toBe("The model call failed: boom")
      expect(error.chain).toBe(chain)
      expect(error.chain.runCount).toBe(3)
      expect(error.chain.messages).toEqual(chain.messages)
      expect(error.chain.lastResponse).toBeUndefined()
      expect(model.calls).toBe(1)
    }))

  it.effect("an empty script fails with ScriptExhausted naming 0 turns and request #1", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([])
      const chain = baseChain()
      const error = expectError(yield* run(chain, Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(error.error._tag).toBe("ScriptExhausted")
      expect(error.error.message).toContain("has 0 turn(s)")
      expect(error.error.message).toContain("request #1")
      expect(error.error.message).toContain("user: Find something.")
      expect(error.chain).toBe(chain)
    }))

  it.effect("running past the script fails with ScriptExhausted naming the turns and the request number", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "one" }, { text: "two" }])
      const outcome = yield* run(baseChain(), Step.callLlm).pipe(
        Step.callLlm,
        Step.make((chain) => Effect.succeed(new Outcome.Continue(Chain.addUser("again")(chain)))),
        Step.callLlm,
        Effect.provide(model.layer)
      )
      const error = expectError(outcome)
      expect(error.error._tag).toBe("ScriptExhausted")
      expect(error.error.message).toContain("has 2 turn(s) but received request #3")
      expect(error.error.message).toContain("user: again")
      expect(error.chain.runCount).toBe(2)
      expect(Chain.text(error.chain)).toBe("two")
      expect(model.calls).toBe(3)
    }))
})

// -----------------------------------------------------------------------------
// Step.executeTools
// -----------------------------------------------------------------------------

describe("executeTools", () => {
  it.effect("no pending calls: Continue with the very same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 2 })
      const probe = makeProbe()
      const outcome = yield* run(chain, Step.executeTools).pipe(Effect.provide(handlers(probe)))
      expect(expectContinue(outcome)).toBe(chain)
      expect(probe.started).toEqual([])
    }))

  it.effect("runs the calls, appends one tool message and clears the pending calls", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "search", { query: "effect" }), call("b", "submit", { answer: "42" })]
      const before = withPending(calls)
      const next = expectContinue(yield* run(before, Step.executeTools).pipe(Effect.provide(handlers(probe))))
      expect(probe.started).toEqual(["search:effect", "submit:42"])
      expect(next.pendingToolCalls).toEqual([])
      expect(next.messages).toHaveLength(before.messages.length + 1)
      expect(next.lastToolResults).toEqual([
        { id: "a", name: "search", isFailure: false, result: "results for effect", encoded: "results for effect" },
        { id: "b", name: "submit", isFailure: false, result: "submitted 42", encoded: "submitted 42" }
      ])
      const parts = toolResultParts(lastMessage(next))
      expect(lastMessage(next).role).toBe("tool")
      expect(parts).toHaveLength(2)
      expect(parts.map((p) => [p.id, p.name, p.isFailure, p.result])).toEqual([
        ["a", "search", false, "results for effect"],
        ["b", "submit", false, "submitted 42"]
      ])
      expect(next.failureCount).toBe(0)
      expect(next.runCount).toBe(before.runCount)
      expect(next.needsResponse).toBe(true)
    }))

  it.effect("the tool message has one result part per call with matching ids, failures included", () =>
    Effect.gen(function*() {
      const calls = [
        call("x1", "search", { query: "ok" }),
        call("x2", "nope", {}),
        call("x3", "search", { query: "fail" }),
        call("x4", "submit", { answer: 7 })
      ]
      const next = expectContinue(yield* runTools(calls))
      const parts = toolResultParts(lastMessage(next))
      expect(parts.map((p) => p.id)).toEqual(["x1", "x2", "x3", "x4"])
      expect(parts.map((p) => p.name)).toEqual(["search", "nope", "search", "submit"])
      expect(parts.map((p) => p.isFailure)).toEqual([false, true, true, true])
      expect(parts.map((p) => p.result)).toEqual(next.lastToolResults.map((r) => r.encoded))
      expect(next.lastToolResults.map((r) => r.failureOrigin)).toEqual([undefined, "unknown-tool", "handler", "parameters"])
    }))

  it.effect("the model is shown the result encoded through the tool's success schema", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("n1", "count", { text: "abc" })]))
      expect(next.lastToolResults[0]).toMatchObject({ id: "n1", isFailure: false, result: 3, encoded: "3" })
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "n1", name: "count", result: "3" })
    }))

  it.effect("results come back in call order even when the first call finishes last", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [
        call("slow", "wait", { label: "slow", ms: 100 }),
        call("fast", "wait", { label: "fast", ms: 10 })
      ]
      const fiber = yield* runTools(calls, { probe }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 second")
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(probe.finished).toEqual(["fast@10", "slow@100"])
      expect(next.lastToolResults.map((r) => [r.id, r.result])).toEqual([["slow", "slow"], ["fast", "fast"]])
      expect(toolResultParts(lastMessage(next)).map((p) => p.id)).toEqual(["slow", "fast"])
    }))

  it.effect("by default the calls of a round run concurrently (two 50 ms tools take 50 ms)", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "wait", { label: "a", ms: 50 }), call("b", "wait", { label: "b", ms: 50 })]
      const fiber = yield* runTools(calls, { probe }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 millis")
      // both started at once
      expect(probe.started).toEqual(["wait:a", "wait:b"])
      yield* TestClock.adjust("49 millis")
      expect(probe.finished).toEqual(["a@50", "b@50"])
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(next.lastToolResults.map((r) => r.id)).toEqual(["a", "b"])
    }))

  it.effect("executeToolsWith({ concurrency: 1 }) runs them one after another (100 ms)", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [call("a", "wait", { label: "a", ms: 50 }), call("b", "wait", { label: "b", ms: 50 })]
      const fiber = yield* runTools(calls, { probe, step: Step.executeToolsWith({ concurrency: 1 }) }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("49 millis")
      // b waits for a
      expect(probe.started).toEqual(["wait:a"])
      expect(probe.finished).toEqual([])
      yield* TestClock.adjust("1 millis")
      expect(probe.finished).toEqual(["a@50"])
      expect(probe.started).toEqual(["wait:a", "wait:b"])
      yield* TestClock.adjust("49 millis")
      expect(probe.finished).toEqual(["a@50"])
      yield* TestClock.adjust("1 millis")
      expect(probe.finished).toEqual(["a@50", "b@100"])
      const next = expectContinue(yield* Fiber.join(fiber))
      expect(next.lastToolResults.map((r) => r.id)).toEqual(["a", "b"])
    }))

  it.effect("executeToolsWith({ concurrency: 2 }) with 3 calls: the third starts when a slot frees", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = [
        call("a", "wait", { label: "a", ms: 50 }),
        call("b", "wait", { label: "b", ms: 50 }),
        call("c", "wait", { label: "c", ms: 50 })
      ]
      const fiber = yield* runTools(calls, { probe, step: Step.executeToolsWith({ concurrency: 2 }) }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      expect(probe.finished).toEqual(["a@50", "b@50", "c@100"])
      expectContinue(yield* Fiber.join(fiber))
    }))

  it.effect("an unknown tool becomes a failed result naming it and listing the available tools", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("u1", "nope", { q: 1 })]))
      const [result] = next.lastToolResults
      expect(result.id).toBe("u1")
      expect(result.name).toBe("nope")
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("unknown-tool")
      expect(result.encoded).toBe("Tool 'nope' not found. Available tools: search, submit, wait, finish, crash, reject, count")
      expect(next.failureCount).toBe(1)
    }))

  it.effect("an unknown tool in a chain without a toolkit says there are none", () =>
    Effect.gen(function*() {
      const chain = withPending([call("u1", "nope", {})], Chain.make({ user: "Hi" }))
      const next = expectContinue(yield* run(chain, Step.executeTools))
      expect(next.lastToolResults[0].encoded).toBe("Tool 'nope' not found. Available tools: (none)")
    }))

  it.effect.each([
    ["a wrong type", { query: 42 }],
    ["a missing field", {}]
  ] as const)("invalid arguments (%s) become a failed result naming the tool and the field", ([, params]) =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const next = expectContinue(yield* runTools([call("p1", "search", params)], { probe }))
      const [result] = next.lastToolResults
      expect(result.isFailure).toBe(true)
      expect(result.failureOrigin).toBe("parameters")
      expect(typeof result.encoded).toBe("string")
      const message = String(result.encoded)
      expect(message).toContain("Invalid arguments for tool 'search'")
      expect(message).toContain("query")
      // the handler never ran
      expect(probe.started).toEqual([])
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "p1", isFailure: true, result: message })
    }))

  it.effect("a failing handler becomes a failed result with origin handler and its failure", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const next = expectContinue(yield* runTools([call("h1", "search", { query: "fail" })], { probe }))
      const [result] = next.lastToolResults
      expect(probe.started).toEqual(["search:fail"])
      expect(result).toMatchObject({ id: "h1", name: "search", isFailure: true, failureOrigin: "handler" })
      // typed failure, encoded through the failure schema (a string here)
      expect(result.result).toBe("search broke")
      expect(result.encoded).toBe("search broke")
      expect(toolResultParts(lastMessage(next))[0]).toMatchObject({ id: "h1", isFailure: true, result: result.encoded })
      expect(next.failureCount).toBe(1)
    }))

  // Regression (fixed in eb4195a): Cause.findError's Result was read the wrong
  // way round, so typed failures became strings and defects lost their message.
  it.effect("a typed handler failure is kept typed and encoded through the tool's failure schema", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("r1", "reject", {})]))
      const [result] = next.lastToolResults
      expect(result).toMatchObject({ id: "r1", name: "reject", isFailure: true, failureOrigin: "handler" })
      expect(result.result).toEqual({ code: 7, reason: "not allowed" })
      expect(result.encoded).toEqual({ code: 7, reason: "not allowed" })
      expect(toolResultParts(lastMessage(next))[0].result).toEqual({ code: 7, reason: "not allowed" })
    }))

  it.effect("a handler defect becomes a failed result (origin handler) showing the defect's message", () =>
    Effect.gen(function*() {
      const next = expectContinue(yield* runTools([call("d1", "crash", {})]))
      const [result] = next.lastToolResults
      expect(result).toMatchObject({ id: "d1", name: "crash", isFailure: true, failureOrigin: "handler" })
      expect(result.encoded).toBe("Tool 'crash' failed unexpectedly: kaboom")
      expect(toolResultParts(lastMessage(next))[0].result).toBe("Tool 'crash' failed unexpectedly: kaboom")
      expect(next.failureCount).toBe(1)
    }))

  it.effect("failureCount goes up by one per failed round and back to 0 after a clean round", () =>
    Effect.gen(function*() {
      const failing = [call("f", "search", { query: "fail" }), call("ok", "search", { query: "fine" })]
      const round1 = expectContinue(yield* runTools(failing))
      expect(round1.failureCount).toBe(1)
      const round2 = expectContinue(yield* runTools(failing, { chain: round1 }))
      expect(round2.failureCount).toBe(2)
      const clean = expectContinue(yield* runTools([call("c", "search", { query: "fine" })], { chain: round2 }))
      expect(clean.failureCount).toBe(0)
      const again = expectContinue(yield* runTools(failing, { chain: clean }))
      expect(again.failureCount).toBe(1)
    }))

  it.effect("reaching the default maxFailures (3) ends with MaxFailuresExceeded", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 2 })
      const error = expectError(yield* runTools([call("f", "search", { query: "fail" })], { chain }))
      expect(error.error._tag).toBe("MaxFailuresExceeded")
      expect(error.error).toBeInstanceOf(LoopError.MaxFailuresExceeded)
      expect(error.error.message).toBe("exceeded max failure count (3)")
      expect(error.error).toMatchObject({ failures: 3, maxFailures: 3 })
      // the failing round is kept on the chain
      expect(error.chain.failureCount).toBe(3)
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(lastMessage(error.chain).role).toBe("tool")
      expect(error.chain.lastToolResults.map((r) => r.id)).toEqual(["f"])
    }))

  it.effect("two failed rounds stay below the default maxFailures", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ failureCount: 1 })
      const next = expectContinue(yield* runTools([call("f", "search", { query: "fail" })], { chain }))
      expect(next.failureCount).toBe(2)
    }))

  it.effect("three consecutive real failed rounds end the loop on the third", () =>
    Effect.gen(function*() {
      const failing = [call("f", "nope", {})]
      const r1 = expectContinue(yield* runTools(failing))
      const r2 = expectContinue(yield* runTools(failing, { chain: r1 }))
      const r3 = expectError(yield* runTools(failing, { chain: r2 }))
      expect(r3.error.message).toBe("exceeded max failure count (3)")
    }))

  it.effect("executeToolsWith({ maxFailures: 1 }) ends on the first failed round", () =>
    Effect.gen(function*() {
      const step = Step.executeToolsWith({ maxFailures: 1 })
      const error = expectError(yield* runTools([call("f", "search", { query: "fail" })], { step }))
      expect(error.error._tag).toBe("MaxFailuresExceeded")
      expect(error.error.message).toBe("exceeded max failure count (1)")
      expect(error.chain.failureCount).toBe(1)
      // a clean round with maxFailures 1 continues
      const clean = expectContinue(yield* runTools([call("ok", "search", { query: "fine" })], { step }))
      expect(clean.failureCount).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// checkMaxRuns
// -----------------------------------------------------------------------------

describe("checkMaxRuns", () => {
  const needsResponse = (runCount: number) => baseChain().copy({ runCount })
  const answered = (runCount: number) =>
    baseChain().copy({ runCount, messages: [...baseChain().messages, assistantText("Done.")] })

  it.effect.each([
    ["default, 25/25", undefined, 25, "Exceeded maximum number of runs (25/25)"],
    ["maxRuns 50, 50/50", 50, 50, "Exceeded maximum number of runs (50/50)"],
    ["maxRuns 1, 1/1", 1, 1, "Exceeded maximum number of runs (1/1)"]
  ] as const)("%s while a response is needed -> MaxRunsExceeded", ([, maxRuns, runCount, message]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      const error = expectError(yield* run(chain, step))
      expect(error.error._tag).toBe("MaxRunsExceeded")
      expect(error.error).toBeInstanceOf(LoopError.MaxRunsExceeded)
      expect(error.error.message).toBe(message)
      expect(error.chain).toBe(chain)
    }))

  it.effect("at the max with tool calls pending -> Continue: the pending calls run first", () =>
    Effect.gen(function*() {
      const chain = withPending([call("a", "search", { query: "q" })]).copy({ runCount: 25 })
      expect(chain.needsResponse).toBe(true)
      expect(expectContinue(yield* run(chain, Step.checkMaxRuns()))).toBe(chain)
    }))

  it.effect("... and once they have run, the next model call is refused", () =>
    Effect.gen(function*() {
      const chain = withPending([call("a", "search", { query: "q" })]).copy({ runCount: 25 })
      const outcome = yield* run(chain, Step.executeTools).pipe(Step.checkMaxRuns(), Effect.provide(handlers()))
      const error = expectError(outcome)
      expect(error.error.message).toBe("Exceeded maximum number of runs (25/25)")
      // every tool call has its result in the failed chain
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(toolResultParts(lastMessage(error.chain)).map((p) => p.id)).toEqual(["a"])
    }))

  it.effect.each([
    ["runCount 30, since 5: 25 runs used", 30, 5, true],
    ["runCount 30, since 6: 24 runs used", 30, 6, false],
    ["runCount 25, since 0 (the default)", 25, 0, true]
  ] as const)("since counts the budget from a start point (%s)", ([, runCount, since, exceeded]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const outcome = yield* run(chain, Step.checkMaxRuns({ since }))
      if (exceeded) {
        const error = expectError(outcome)
        expect(error.error.message).toBe("Exceeded maximum number of runs (25/25)")
        expect(error.error).toMatchObject({ runs: 25, maxRuns: 25 })
      } else {
        expect(expectContinue(outcome)).toBe(chain)
      }
    }))

  it.effect("since with a custom maxRuns: runCount 53, since 3, maxRuns 50 -> (50/50)", () =>
    Effect.gen(function*() {
      const error = expectError(yield* run(needsResponse(53), Step.checkMaxRuns({ maxRuns: 50, since: 3 })))
      expect(error.error.message).toBe("Exceeded maximum number of runs (50/50)")
    }))

  it.effect.each([
    ["below the default max (24/25)", undefined, 24],
    ["below a custom max (49/50)", 50, 49],
    ["at 0 runs", undefined, 0]
  ] as const)("%s -> Continue with the same chain", ([, maxRuns, runCount]) =>
    Effect.gen(function*() {
      const chain = needsResponse(runCount)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      expect(expectContinue(yield* run(chain, step))).toBe(chain)
    }))

  it.effect.each([
    ["default 25/25", undefined, 25],
    ["maxRuns 50, 50/50", 50, 50]
  ] as const)("at the max (%s) but the model has answered -> Continue", ([, maxRuns, runCount]) =>
    Effect.gen(function*() {
      const chain = answered(runCount)
      expect(chain.needsResponse).toBe(false)
      const step = maxRuns === undefined ? Step.checkMaxRuns() : Step.checkMaxRuns({ maxRuns })
      expect(expectContinue(yield* run(chain, step))).toBe(chain)
    }))
})

// -----------------------------------------------------------------------------
// checkPause
// -----------------------------------------------------------------------------

describe("checkPause", () => {
  it.effect("true -> Pause with StopRequested and the same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      const outcome = yield* run(chain, Step.checkPause(() => true))
      expect(outcome._tag).toBe("Pause")
      if (outcome._tag !== "Pause") return
      expect(outcome.reason).toEqual({ _tag: "StopRequested" })
      expect(outcome.chain).toBe(chain)
    }))

  it.effect("false -> Continue with the same chain", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkPause(() => false)))).toBe(chain)
    }))

  it.effect("the predicate sees the chain", () =>
    Effect.gen(function*() {
      const seen: Array<Chain.Chain> = []
      const pauseAfterTwo = Step.checkPause((c) => (seen.push(c), c.runCount >= 2))
      const low = baseChain().copy({ runCount: 1 })
      const high = baseChain().copy({ runCount: 2 })
      expect((yield* run(low, pauseAfterTwo))._tag).toBe("Continue")
      expect((yield* run(high, pauseAfterTwo))._tag).toBe("Pause")
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe(low)
      expect(seen[1]).toBe(high)
    }))

  it.effect.each([true, false])("an Effect predicate returning %s", (answer) =>
    Effect.gen(function*() {
      const chain = baseChain()
      let evaluated = 0
      const step = Step.checkPause(() => Effect.sync(() => (evaluated++, answer)))
      const outcome = yield* run(chain, step)
      expect(outcome._tag).toBe(answer ? "Pause" : "Continue")
      expect(outcome.chain).toBe(chain)
      expect(evaluated).toBe(1)
    }))

  it.effect("an Effect predicate can use the Effect context (TestClock time)", () =>
    Effect.gen(function*() {
      const step = Step.checkPause(() => Effect.map(Clock.currentTimeMillis, (now) => now >= 1000))
      expect((yield* run(baseChain(), step))._tag).toBe("Continue")
      yield* TestClock.adjust("1 second")
      expect((yield* run(baseChain(), step))._tag).toBe("Pause")
    }))

  it.effect("a custom reason", () =>
    Effect.gen(function*() {
      const reason: Outcome.PauseReason = { _tag: "Requested", message: "drain for deploy" }
      const outcome = yield* run(baseChain(), Step.checkPause(() => true, reason))
      expect(outcome._tag).toBe("Pause")
      if (outcome._tag !== "Pause") return
      expect(outcome.reason).toEqual({ _tag: "Requested", message: "drain for deploy" })
    }))
})

// -----------------------------------------------------------------------------
// checkUntilTool
// -----------------------------------------------------------------------------

describe("checkUntilTool", () => {
  it.effect("a successful call to a watched tool in the round that just ran -> Ok tool-used with its result", () =>
    Effect.gen(function*() {
      const calls = [call("s1", "search", { query: "q" }), call("sub", "submit", { answer: "42" })]
      const outcome = yield* runTools(calls, { step: (self) => Step.checkUntilTool(["x", "submit"])(Step.executeTools(self)) })
      const ok = expectOk(outcome)
      expect(ok.reason).toBe("tool-used")
      expect(ok.extra).toBe(ok.chain.lastToolResults[1])
      expect(ok.extra).toEqual({ id: "sub", name: "submit", isFailure: false, result: "submitted 42", encoded: "submitted 42" })
    }))

  it.effect("accepts a single name as a string", () =>
    Effect.gen(function*() {
      const outcome = yield* runTools([call("sub", "submit", { answer: "1" })], {
        step: (self) => Step.checkUntilTool("submit")(Step.executeTools(self))
      })
      expect(expectOk(outcome).reason).toBe("tool-used")
    }))

  it.effect("with two successful watched calls, the first in call order wins", () =>
    Effect.gen(function*() {
      const calls = [call("first", "submit", { answer: "1" }), call("second", "submit", { answer: "2" })]
      const ok = expectOk(yield* runTools(calls, { step: (self) => Step.checkUntilTool(["submit"])(Step.executeTools(self)) }))
      expect(ok.extra).toMatchObject({ id: "first", result: "submitted 1" })
    }))

  it.effect("only other tools ran -> Continue with the same chain", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s1", "search", { query: "q" })]))
      expect(expectContinue(yield* run(ran, Step.checkUntilTool(["submit"])))).toBe(ran)
    }))

  it.effect("a failed call to a watched tool -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("bad", "submit", { answer: 42 })]))
      expect(ran.lastToolResults[0].isFailure).toBe(true)
      expect(expectContinue(yield* run(ran, Step.checkUntilTool(["submit"])))).toBe(ran)
    }))

  it.effect("a failed watched call followed by a successful one -> Ok with the successful one", () =>
    Effect.gen(function*() {
      const calls = [call("bad", "search", { query: "fail" }), call("good", "search", { query: "ok" })]
      const ran = expectContinue(yield* runTools(calls))
      const ok = expectOk(yield* run(ran, Step.checkUntilTool(["search"])))
      expect(ok.extra).toBe(ran.lastToolResults[1])
    }))

  it.effect("results of an earlier round (the model has spoken since) do not count", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("sub", "submit", { answer: "1" })]))
      const model = ChatModel.scripted([{ text: "I submitted it." }])
      const after = expectContinue(yield* run(ran, Step.callLlm).pipe(Effect.provide(model.layer)))
      expect(after.lastToolResults).toHaveLength(1)
      expect(expectContinue(yield* run(after, Step.checkUntilTool(["submit"])))).toBe(after)
    }))

  it.effect("no round ran -> Continue", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkUntilTool(["submit"])))).toBe(chain)
    }))
})

// -----------------------------------------------------------------------------
// checkReturnBehavior and checkToolSuccess
// -----------------------------------------------------------------------------

describe("checkReturnBehavior", () => {
  it.effect("a clean round of IMMEDIATE tools -> Ok return-behavior with the round's results", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {})]))
      const ok = expectOk(yield* run(ran, Step.checkReturnBehavior))
      expect(ok.reason).toBe("return-behavior")
      expect(ok.chain).toBe(ran)
      expect(ok.extra).toBe(ran.lastToolResults)
    }))

  it.effect("a TO_LLM tool in the round -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {}), call("s", "search", { query: "q" })]))
      expect(expectContinue(yield* run(ran, Step.checkReturnBehavior))).toBe(ran)
    }))

  it.effect("an unknown tool counts as TO_LLM and as a failure -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {}), call("n", "nope", {})]))
      expect(expectContinue(yield* run(ran, Step.checkReturnBehavior))).toBe(ran)
    }))

  it.effect("stale results (the model has spoken since) -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("f", "finish", {})]))
      const after = ran.copy({ messages: [...ran.messages, assistantText("ok")] })
      expect(expectContinue(yield* run(after, Step.checkReturnBehavior))).toBe(after)
    }))
})

describe("checkToolSuccess", () => {
  it.effect("a clean round -> Ok tools-succeeded", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s", "search", { query: "q" })]))
      const ok = expectOk(yield* run(ran, Step.checkToolSuccess))
      expect(ok.reason).toBe("tools-succeeded")
      expect(ok.chain).toBe(ran)
    }))

  it.effect("a round with a failure -> Continue", () =>
    Effect.gen(function*() {
      const ran = expectContinue(yield* runTools([call("s", "search", { query: "q" }), call("f", "search", { query: "fail" })]))
      expect(expectContinue(yield* run(ran, Step.checkToolSuccess))).toBe(ran)
    }))

  it.effect("no round, the model has answered -> Ok done", () =>
    Effect.gen(function*() {
      const chain = baseChain().copy({ messages: [...baseChain().messages, assistantText("Done.")] })
      expect(expectOk(yield* run(chain, Step.checkToolSuccess)).reason).toBe("done")
    }))

  it.effect("no round, a response is needed -> Continue", () =>
    Effect.gen(function*() {
      const chain = baseChain()
      expect(expectContinue(yield* run(chain, Step.checkToolSuccess))).toBe(chain)
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

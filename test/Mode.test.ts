import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode, Outcome, Step } from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"
import { Finish } from "./support/tools.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const Greet = Tool.make("greet", {
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  success: Schema.String
})
const DoThing = Tool.make("do_thing", {
  description: "Does the thing",
  parameters: Schema.Struct({ value: Schema.Number }),
  success: Schema.String
})
const HelloWorld = Tool.make("hello_world", { success: Schema.String })
const Fail = Tool.make("fail", { success: Schema.String, failure: Schema.String })
const Flaky = Tool.make("flaky", { success: Schema.String, failure: Schema.String })
const Slow = Tool.make("slow", { success: Schema.String })

const toolkit = Toolkit.make(Greet, DoThing, HelloWorld, Fail, Flaky, Slow)

/** Fresh handlers (and call counters) per test. */
const makeHandlers = () => {
  const calls = { greet: 0, do_thing: 0, hello_world: 0, fail: 0, flaky: 0, slow: 0 }
  const layer = toolkit.toLayer({
    greet: ({ name }) =>
      Effect.sync(() => {
        calls.greet++
        return `Hi ${name}!`
      }),
    do_thing: ({ value }) =>
      Effect.sync(() => {
        calls.do_thing++
        return `did ${value}`
      }),
    hello_world: () =>
      Effect.sync(() => {
        calls.hello_world++
        return "Hello world!"
      }),
    fail: () =>
      Effect.suspend(() => {
        calls.fail++
        return Effect.fail("boom")
      }),
    flaky: () =>
      Effect.suspend(() => {
        calls.flaky++
        return calls.flaky === 1 ? Effect.fail("not yet") : Effect.succeed("ok now")
      }),
    slow: () =>
      Effect.sleep("500 millis").pipe(Effect.andThen(Effect.sync(() => {
        calls.slow++
        return "slept"
      })))
  })
  return { calls, layer }
}

const userChain = (user = "Hi") => Chain.make({ system: "You are helpful.", user, toolkit })

const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)
const lastRole = (chain: Chain.Chain): string | undefined => chain.messages[chain.messages.length - 1]?.role

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

const asToolResult = (extra: unknown): ToolCall.ToolResult => {
  expect(extra).toBeTypeOf("object")
  expect(extra).not.toBeNull()
  return extra as ToolCall.ToolResult
}

const greetTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "greet", params: { name: "Alice" } }] }
const failTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "fail" }] }
const flakyTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "flaky" }] }

/** The content parts of a tool message (fails the test if it is not one). */
const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

// -----------------------------------------------------------------------------
// whileNeedsResponse
// -----------------------------------------------------------------------------

describe("Mode.whileNeedsResponse", () => {
  it.effect("a plain text answer ends with Ok done after one model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Hello!" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("done")
      expect(outcome.extra).toBeUndefined()
      expect(model.calls).toBe(1)
      expect(outcome.chain.runCount).toBe(1)
      expect(Chain.text(outcome.chain)).toBe("Hello!")
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant"])
      expect(outcome.chain.needsResponse).toBe(false)
    }))

  it.effect("a tool round then a text answer: two model calls, the model has the last word", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn, { text: "I greeted Alice." }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(handlers.calls.greet).toBe(1)
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(Chain.text(outcome.chain)).toBe("I greeted Alice.")
      expect(outcome.chain.runCount).toBe(2)
      expect(outcome.chain.failureCount).toBe(0)
      expect(outcome.chain.pendingToolCalls).toEqual([])
      // the second request carried the tool result
      const secondPrompt = model.requests[1].prompt.content
      const results = toolResultParts(secondPrompt[secondPrompt.length - 1])
      expect(results.map((part) => [part.name, part.result, part.isFailure])).toEqual([["greet", "Hi Alice!", false]])
      // the tools were offered to the model
      expect(model.requests[0].tools.map((tool) => tool.name)).toContain("greet")
    }))

  it.effect("a chain that needs no response returns Ok with no model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "should not be used" }])
      const handlers = makeHandlers()
      const chain = Chain.make({
        system: "You are helpful.",
        messages: [
          Prompt.userMessage({ content: [Prompt.textPart({ text: "Hi" })] }),
          Prompt.assistantMessage({ content: [Prompt.textPart({ text: "Hello there" })] })
        ],
        toolkit
      })
      expect(chain.needsResponse).toBe(false)
      const outcome = asOk(
        yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(0)
      expect(outcome.chain.messages).toEqual(chain.messages)
      expect(outcome.chain.runCount).toBe(0)
    }))

  it.effect("a chain with pending tool calls resumes by running them, then calls the model", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const first = ChatModel.scripted([greetTurn])
      // `Step.callLlm(Step.start(c))` is what `Step.start(c).pipe(Step.callLlm)` runs; applied directly
      // because point-free in `pipe` the overloaded step infers its requirement as `unknown`.
      const paused = yield* Step.callLlm(Step.start(userChain())).pipe(Effect.provide(first.layer))
      expect(paused._tag).toBe("Continue")
      const chain = paused.chain
      expect(chain.pendingToolCalls.map((call) => call.name)).toEqual(["greet"])
      expect(chain.runCount).toBe(1)

      const second = ChatModel.scripted([{ text: "Done greeting." }])
      const outcome = asOk(
        yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([second.layer, handlers.layer])
        )
      )
      expect(handlers.calls.greet).toBe(1)
      expect(second.calls).toBe(1)
      // the model was called after the tools ran: its prompt ends with the tool result
      const prompt = second.requests[0].prompt.content
      expect(prompt[prompt.length - 1].role).toBe("tool")
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(outcome.chain.runCount).toBe(2)
      expect(Chain.text(outcome.chain)).toBe("Done greeting.")
    }))

  it.effect("a model that always calls a tool is stopped by maxRuns after exactly maxRuns calls", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 3 }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(error.reason.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(error.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(model.calls).toBe(3)
      expect(error.chain.runCount).toBe(3)
      // nothing is lost: the last turn's tool call ran before the budget check, so every call has its result
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(handlers.calls.greet).toBe(3)
      expect(error.chain.messages.at(-1)?.role).toBe("tool")
    }))

  it.effect("a final answer on the last allowed run is not an error", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn, { text: "Answered on run 2." }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(outcome.chain.runCount).toBe(2)
      expect(Chain.text(outcome.chain)).toBe("Answered on run 2.")
    }))

  it.effect("an always-failing tool ends with MaxFailuresExceeded after 3 model calls", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([failTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxFailuresExceeded")
      expect(error.reason.message).toBe("exceeded max failure count (3)")
      expect(model.calls).toBe(3)
      expect(handlers.calls.fail).toBe(3)
      expect(error.chain.failureCount).toBe(3)
      expect(lastRole(error.chain)).toBe("tool")
      expect(error.chain.lastToolResults.map((result) => result.isFailure)).toEqual([true])
    }))
})

// -----------------------------------------------------------------------------
// untilSuccess
// -----------------------------------------------------------------------------

describe("Mode.untilSuccess", () => {
  it.effect("a tool that fails once then succeeds: 2 model calls, ends right after the successful round", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([flakyTurn, flakyTurn, { text: "never reached" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilSuccess }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("tools-succeeded")
      expect(model.calls).toBe(2)
      expect(handlers.calls.flaky).toBe(2)
      expect(lastRole(outcome.chain)).toBe("tool")
      expect(outcome.chain.failureCount).toBe(0)
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool"])
      // exchanged: call, failed result, call, ok result
      const firstResults = toolResultParts(outcome.chain.messages[3])
      const lastResults = toolResultParts(outcome.chain.messages[5])
      expect(firstResults.map((part) => part.isFailure)).toEqual([true])
      expect(lastResults.map((part) => [part.isFailure, part.result])).toEqual([[false, "ok now"]])
      expect(outcome.chain.lastToolResults.map((result) => result.result)).toEqual(["ok now"])
    }))

  it.effect("an always-failing tool: 3 model calls, then MaxFailuresExceeded", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([failTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.untilSuccess }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxFailuresExceeded")
      expect(model.calls).toBe(3)
      expect(error.chain.failureCount).toBe(3)
    }))

  it.effect("maxFailures is honoured", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([failTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.untilSuccess, maxFailures: 2 }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxFailuresExceeded")
      expect(error.reason.message).toBe("exceeded max failure count (2)")
      expect(model.calls).toBe(2)
      expect(error.chain.failureCount).toBe(2)
    }))

  it.effect("a plain text answer ends with Ok done after one call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Just text." }, { text: "never reached" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilSuccess }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(1)
      expect(Chain.text(outcome.chain)).toBe("Just text.")
    }))

  it.effect("a chain already ending in an assistant text returns Ok with no call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never reached" }])
      const handlers = makeHandlers()
      const chain = Chain.make({
        messages: [
          Prompt.userMessage({ content: [Prompt.textPart({ text: "Hi" })] }),
          Prompt.assistantMessage({ content: [Prompt.textPart({ text: "Hello" })] })
        ],
        toolkit
      })
      const outcome = asOk(
        yield* Chain.run(chain, { mode: Mode.untilSuccess }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(0)
      expect(outcome.chain.messages).toEqual(chain.messages)
    }))
})

// -----------------------------------------------------------------------------
// step
// -----------------------------------------------------------------------------

describe("Mode.step", () => {
  it.effect("three separate runs: tool call, then tool result (no model call), then final text", () => {
    // one model and one set of handlers for all three runs
    const model = ChatModel.scripted([greetTurn, { text: "All done." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {

      // 1. last message user → one model call, pending tool calls
      const first = asOk(yield* Chain.run(userChain(), { mode: Mode.step }))
      expect(first.reason).toBe("step")
      expect(model.calls).toBe(1)
      expect(handlers.calls.greet).toBe(0)
      expect(first.chain.pendingToolCalls.map((call) => call.name)).toEqual(["greet"])
      expect(first.chain.needsResponse).toBe(true)
      expect(lastRole(first.chain)).toBe("assistant")

      // 2. pending tool calls → tools run, no model call
      const second = asOk(yield* Chain.run(first.chain, { mode: Mode.step }))
      expect(second.reason).toBe("step")
      expect(model.calls).toBe(1)
      expect(handlers.calls.greet).toBe(1)
      expect(lastRole(second.chain)).toBe("tool")
      expect(second.chain.pendingToolCalls).toEqual([])
      expect(second.chain.needsResponse).toBe(true)
      expect(toolResultParts(second.chain.messages[second.chain.messages.length - 1]).map((part) => part.result))
        .toEqual(["Hi Alice!"])

      // 3. last message a tool result → the model is called
      const third = asOk(yield* Chain.run(second.chain, { mode: Mode.step }))
      expect(third.reason).toBe("step")
      expect(model.calls).toBe(2)
      expect(handlers.calls.greet).toBe(1)
      expect(lastRole(third.chain)).toBe("assistant")
      expect(Chain.text(third.chain)).toBe("All done.")
      expect(third.chain.needsResponse).toBe(false)
      expect(third.chain.pendingToolCalls).toEqual([])
      expect(roles(third.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a failing tool in a step is not an error: Ok, failureCount 1", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([failTurn])
      const handlers = makeHandlers()
      const program = Effect.gen(function*() {
        const first = asOk(yield* Chain.run(userChain(), { mode: Mode.step }))
        return asOk(yield* Chain.run(first.chain, { mode: Mode.step }))
      })
      const outcome = yield* program.pipe(Effect.provide([model.layer, handlers.layer]))
      expect(outcome.reason).toBe("step")
      expect(outcome.chain.failureCount).toBe(1)
      expect(outcome.chain.lastToolResults.map((result) => result.isFailure)).toEqual([true])
      expect(outcome.chain.needsResponse).toBe(true)
      expect(model.calls).toBe(1)
    }))

  it.effect("shouldContinue = needsResponse loops to the final answer in one run", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn, { text: "Greeted." }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.step, shouldContinue: (chain) => chain.needsResponse }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("step")
      expect(model.calls).toBe(2)
      expect(handlers.calls.greet).toBe(1)
      expect(Chain.text(outcome.chain)).toBe("Greeted.")
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
    }))

  it.effect("shouldContinue: () => false runs exactly one step", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn, { text: "never reached" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.step, shouldContinue: () => false }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("step")
      expect(model.calls).toBe(1)
      expect(handlers.calls.greet).toBe(0)
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant"])
      expect(outcome.chain.pendingToolCalls).toHaveLength(1)
    }))

  it.effect("shouldContinue sees the updated chain after each step", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([failTurn, { text: "never reached" }])
      const handlers = makeHandlers()
      const seen: Array<number> = []
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.step,
          shouldContinue: (chain) => {
            seen.push(chain.messages.length)
            return chain.failureCount === 0
          }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      // stopped after the failing tool step
      expect(seen).toEqual([3, 4])
      expect(model.calls).toBe(1)
      expect(outcome.chain.failureCount).toBe(1)
      expect(lastRole(outcome.chain)).toBe("tool")
    }))

  it.effect("shouldContinue always true with a tool-calling model is bounded by maxRuns", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.step, shouldContinue: () => true, maxRuns: 3 }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(error.reason.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(model.calls).toBe(3)
      expect(error.chain.runCount).toBe(3)
    }))
})

// -----------------------------------------------------------------------------
// untilToolUsed
// -----------------------------------------------------------------------------

describe("Mode.untilToolUsed", () => {
  it.effect("ends with Ok tool-used and the target's result once the model calls it", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        greetTurn,
        { toolCalls: [{ name: "do_thing", params: { value: 7 } }] },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing") }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      const extra = asToolResult(outcome.extra)
      expect(extra.name).toBe("do_thing")
      expect(extra.isFailure).toBe(false)
      expect(extra.result).toBe("did 7")
      expect(extra.id).toBe(outcome.chain.lastToolResults[0].id)
      expect(model.calls).toBe(2)
      expect(handlers.calls.greet).toBe(1)
      expect(handlers.calls.do_thing).toBe(1)
      expect(lastRole(outcome.chain)).toBe("tool")
      expect(outcome.chain.failureCount).toBe(0)
    }))

  it.effect("a list of names: the first one called ends the loop", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn, { toolCalls: [{ name: "hello_world" }] }, { text: "never reached" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed(["do_thing", "hello_world"]) }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      const extra = asToolResult(outcome.extra)
      expect(extra.name).toBe("hello_world")
      expect(extra.result).toBe("Hello world!")
      expect(model.calls).toBe(2)
    }))

  it.effect("a model that never calls the target fails after exactly maxRuns calls", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing"), maxRuns: 3 }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(error.reason.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(model.calls).toBe(3)
      expect(handlers.calls.greet).toBe(3)
      expect(error.chain.runCount).toBe(3)
    }))

  it.effect("the target reached on the last allowed call still succeeds", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        greetTurn,
        greetTurn,
        { toolCalls: [{ name: "do_thing", params: { value: 3 } }] }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing"), maxRuns: 3 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      expect(asToolResult(outcome.extra).name).toBe("do_thing")
      expect(model.calls).toBe(3)
    }))

  it.effect("maxRuns 1 with the first call hitting the target succeeds", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "do_thing", params: { value: 1 } }] }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing"), maxRuns: 1 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      expect(asToolResult(outcome.extra).result).toBe("did 1")
      expect(model.calls).toBe(1)
    }))

  it.effect("an unknown tool name fails with ToolNamesNotFound before any model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn], { repeat: true })
      const handlers = makeHandlers()
      const chain = userChain()
      const error = yield* Chain.run(chain, { mode: Mode.untilToolUsed("non_existent_tool") }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("ToolNamesNotFound")
      expect(error.reason.message).toBe("Tool name 'non_existent_tool' not found in available tools")
      expect(model.calls).toBe(0)
      expect(error.chain.messages).toEqual(chain.messages)
    }))

  it.effect("several unknown names are listed together (known ones are not)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([greetTurn], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.untilToolUsed(["a", "greet", "b"]) }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("ToolNamesNotFound")
      expect(error.reason.message).toBe("Tool names 'a, b' not found in available tools")
      expect(error.reason).toBeInstanceOf(LoopError.ToolNamesNotFound)
      expect(model.calls).toBe(0)
    }))

  it.effect("a failed call to the target (invalid params) does not end the loop", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "do_thing", params: { value: "not a number" } }] },
        { toolCalls: [{ name: "do_thing", params: { value: 5 } }] },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing") }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      expect(model.calls).toBe(2)
      // the handler ran only for the valid call
      expect(handlers.calls.do_thing).toBe(1)
      const firstRound = toolResultParts(outcome.chain.messages[3])
      expect(firstRound.map((part) => [part.name, part.isFailure])).toEqual([["do_thing", true]])
      const extra = asToolResult(outcome.extra)
      expect(extra.isFailure).toBe(false)
      expect(extra.result).toBe("did 5")
      expect(outcome.chain.failureCount).toBe(0)
    }))

  it.effect("a text-only answer gets a reminder naming the target tool, then the loop goes on", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "I will not use tools." },
        { toolCalls: [{ name: "do_thing", params: { value: 1 } }] }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing") }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("tool-used")
      expect(model.calls).toBe(2)
      const reminder = model.requests[1].prompt.content.at(-1)!
      expect(reminder.role).toBe("user")
      expect(JSON.stringify(reminder.content)).toContain(
        "You answered without calling a tool. To finish, call do_thing."
      )
    }))

  it.effect("text-only answers are reminded until maxRuns, then MaxRunsExceeded", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "no" }], { repeat: true })
      const handlers = makeHandlers()
      const error = yield* Effect.flip(
        Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing"), maxRuns: 3 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(model.calls).toBe(3)
    }))

  it.effect("noTool: \"done\" ends on a text-only answer with its text as extra (Elixir's behaviour)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "I will not use tools." }, { text: "never reached" }])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.untilToolUsed("do_thing"), noTool: "done" }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("done")
      expect(outcome.extra).toBe("I will not use tools.")
      expect(model.calls).toBe(1)
    }))
})

// -----------------------------------------------------------------------------
// Time: scripted latency and tool sleeps run on the TestClock
// -----------------------------------------------------------------------------

describe("time", () => {
  it.effect("a run finishes exactly when model latency plus tool time has passed on the TestClock", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "slow" }] },
        { text: "Slept well." }
      ], { latency: "1 second" })
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(model.calls).toBe(1)
      expect(handlers.calls.slow).toBe(0)

      // first model turn done at 1s; the tool sleeps until 1.5s
      yield* TestClock.adjust("1 millis")
      yield* TestClock.adjust("499 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(handlers.calls.slow).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect(handlers.calls.slow).toBe(1)
      expect(model.calls).toBe(2)

      // second model turn done at 2.5s
      yield* TestClock.adjust("999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect(fiber.pollUnsafe()).toBeDefined()
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(Chain.text(outcome.chain)).toBe("Slept well.")
      expect(model.calls).toBe(2)
    }))

  it.effect("one adjustment of the whole duration is enough (1s + 0.5s + 1s)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "slow" }], latency: "1 second" },
        { text: "Slept well.", latency: "1 second" }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("2499 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(outcome.reason).toBe("done")
      expect(handlers.calls.slow).toBe(1)
    }))
})

// -----------------------------------------------------------------------------
// Custom outcomes pass through
// -----------------------------------------------------------------------------

describe("custom modes", () => {
  it.effect("a custom mode's Ok extra and Pause reach the caller unchanged", () =>
    Effect.gen(function*() {
      const withExtra: Mode.Mode = (chain) => Effect.succeed(new Outcome.Ok(chain, "done", { answer: 42 }))
      const pausing: Mode.Mode = (chain) =>
        Effect.succeed(new Outcome.Pause(chain, { _tag: "Requested", message: "wait" }))
      const chain = Chain.make({ user: "Hi" })
      const ok = asOk(yield* Chain.run(chain, { mode: withExtra }))
      expect(ok.extra).toEqual({ answer: 42 })
      const paused = yield* Chain.run(chain, { mode: pausing })
      expect(paused._tag).toBe("Pause")
      if (paused._tag === "Pause") expect(paused.reason).toEqual({ _tag: "Requested", message: "wait" })
    }))
})

describe("maxRuns is a budget per run", () => {
  it.effect("a follow-up question gets a fresh budget; runCount keeps the chain's total", () => {
    const model = ChatModel.scripted([greetTurn, { text: "first" }, greetTurn, { text: "second" }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const first = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2 })
      expect(first.chain.runCount).toBe(2)
      const second = yield* Chain.run(first.chain.pipe(Chain.addUser("Again?")), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2
      })
      expect(Chain.text(second.chain)).toBe("second")
      expect(second.chain.runCount).toBe(4)
      expect(model.calls).toBe(4)
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a tool round that returns immediately on the last allowed run still returns", () =>
    Effect.gen(function*() {
      const tools = Toolkit.make(Finish)
      const model = ChatModel.scripted([{ toolCalls: [{ name: "finish" }] }])
      const outcome = yield* Chain.run(Chain.make({ user: "Go", toolkit: tools }), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 1
      }).pipe(Effect.provide([model.layer, tools.toLayer({ finish: () => Effect.succeed("finished") })]))
      expect(asOk(outcome).reason).toBe("return-behavior")
      expect(model.calls).toBe(1)
    }))
})

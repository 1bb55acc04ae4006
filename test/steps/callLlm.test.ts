/**
 * `Step.callLlm` (src/internal/steps/callLlm.ts): one model turn appended to the chain (its tool
 * calls pending, the run counted, the finish reason kept), the request it sends (messages, tools,
 * tool choice), and its failures: a model failure keeps the chain as it was before the call; a
 * scripted model that runs out says which request it could not answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Chain, ChatModel, LoopError, Outcome, Step } from "../../src/index.ts"
import { tools, toolNames, baseChain, run, expectContinue, expectError, lastMessage } from "../support/steps.ts"

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

import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Schema, Stream } from "effect"
import { AiError, LanguageModel, Model, Prompt, Response, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, Mode } from "../src/index.ts"
import { ModelCallFailed } from "../src/LoopError.ts"

// -----------------------------------------------------------------------------
// helpers
// -----------------------------------------------------------------------------

const Search = Tool.make("search", {
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Array(Schema.String)
})
const searchToolkit = Toolkit.make(Search)
const searchTools: ReadonlyArray<Tool.Any> = Object.values(searchToolkit.tools)

const request = (text: string, tools: ReadonlyArray<Tool.Any> = []): ChatModel.GenerateRequest => ({
  prompt: Prompt.make(text),
  tools,
  toolChoice: "auto"
})

const generate = (req: ChatModel.GenerateRequest) => Effect.flatMap(Effect.service(ChatModel.ChatModel), (m) => m.generate(req))

const streamAll = (req: ChatModel.GenerateRequest) =>
  Effect.flatMap(Effect.service(ChatModel.ChatModel), (m) => Stream.runCollect(m.stream(req)))

const toolCalls = (parts: ReadonlyArray<Response.AnyPart>) =>
  parts.flatMap((part) => part.type === "tool-call" ? [{ id: part.id, name: part.name, params: part.params }] : [])

const finishOf = (parts: ReadonlyArray<Response.AnyPart>) => {
  const finish = parts.find((part) => part.type === "finish")
  return finish?.type === "finish" ? finish.reason : undefined
}

const textOf = (parts: ReadonlyArray<Response.AnyPart>) =>
  parts.flatMap((part) => part.type === "text" ? [part.text] : []).join("")

const lastUserText = (req: ChatModel.GenerateRequest): string => {
  const last = req.prompt.content.at(-1)
  if (last === undefined || typeof last.content === "string") return ""
  return last.content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")
}

// -----------------------------------------------------------------------------
// scripted
// -----------------------------------------------------------------------------

describe("ChatModel.scripted", () => {
  it.effect("a fixed text turn returns a text part and a 'stop' finish", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Hello!" }])
      const parts = yield* generate(request("Hi")).pipe(Effect.provide(model.layer))
      expect(parts.map((part) => part.type)).toEqual(["text", "finish"])
      expect(textOf(parts)).toBe("Hello!")
      expect(finishOf(parts)).toBe("stop")
      expect(toolCalls(parts)).toEqual([])
      expect(model.calls).toBe(1)
    }))

  it.effect("a tool-call turn generates ids call_<turn>_<index> unless given, and finishes with 'tool-calls'", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "first" },
        {
          toolCalls: [
            { name: "search", params: { query: "a" } },
            { name: "search", params: { query: "b" } },
            { name: "search", params: { query: "c" }, id: "mine" },
            { name: "noParams" }
          ]
        }
      ])
      const parts = yield* Effect.gen(function*() {
        const first = yield* generate(request("Hi"))
        const second = yield* generate(request("again"))
        return { first, second }
      }).pipe(Effect.provide(model.layer))
      expect(finishOf(parts.first)).toBe("stop")
      const second = parts.second
      expect(second.map((part) => part.type)).toEqual(["tool-call", "tool-call", "tool-call", "tool-call", "finish"])
      expect(toolCalls(second)).toEqual([
        { id: "call_2_1", name: "search", params: { query: "a" } },
        { id: "call_2_2", name: "search", params: { query: "b" } },
        { id: "mine", name: "search", params: { query: "c" } },
        { id: "call_2_4", name: "noParams", params: {} }
      ])
      for (const part of second) {
        if (part.type === "tool-call") expect(part.providerExecuted).toBe(false)
      }
      expect(finishOf(second)).toBe("tool-calls")
    }))

  it.effect("the first turn's generated ids are call_1_1 and call_1_2", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "a" }, { name: "b", params: { x: 1 } }] }])
      const parts = yield* generate(request("Hi")).pipe(Effect.provide(model.layer))
      expect(toolCalls(parts)).toEqual([
        { id: "call_1_1", name: "a", params: {} },
        { id: "call_1_2", name: "b", params: { x: 1 } }
      ])
    }))

  it.effect("text plus tool calls: text part first, then the calls, then the finish; finishReason can be overridden", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "Let me look", toolCalls: [{ name: "search", params: { query: "x" } }] },
        { text: "cut", finishReason: "length" }
      ])
      const [one, two] = yield* Effect.all([generate(request("Hi")), generate(request("more"))]).pipe(
        Effect.provide(model.layer)
      )
      expect(one.map((part) => part.type)).toEqual(["text", "tool-call", "finish"])
      expect(textOf(one)).toBe("Let me look")
      expect(toolCalls(one)).toEqual([{ id: "call_1_1", name: "search", params: { query: "x" } }])
      expect(finishOf(one)).toBe("tool-calls")
      expect(finishOf(two)).toBe("length")
    }))

  it.effect("a function turn receives the request and the 0-based turn index", () =>
    Effect.gen(function*() {
      const seen: Array<{ text: string; turn: number; tools: Array<string> }> = []
      const turn: ChatModel.ScriptedTurn = (req, index) => {
        seen.push({ text: lastUserText(req), turn: index, tools: req.tools.map((t) => t.name) })
        return { text: `turn ${index} saw ${lastUserText(req)}`, toolCalls: [{ name: "search" }] }
      }
      const model = ChatModel.scripted([{ text: "fixed" }, turn, turn])
      const results = yield* Effect.all([
        generate(request("one")),
        generate(request("two", searchTools)),
        generate(request("three"))
      ]).pipe(Effect.provide(model.layer))
      expect(seen).toEqual([
        { text: "two", turn: 1, tools: ["search"] },
        { text: "three", turn: 2, tools: [] }
      ])
      expect(textOf(results[1])).toBe("turn 1 saw two")
      expect(textOf(results[2])).toBe("turn 2 saw three")
      // generated ids follow the turn index for function turns too
      expect(toolCalls(results[2])).toEqual([{ id: "call_3_1", name: "search", params: {} }])
    }))

  it.effect("a function turn may return an Effect (success and ModelCallFailed)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        (req) => Effect.succeed({ text: `effectful: ${lastUserText(req)}` }),
        () => Effect.fail(new ModelCallFailed({ description: "from effect", cause: undefined }))
      ])
      const [ok, failed] = yield* Effect.all([
        generate(request("ping")),
        Effect.flip(generate(request("again")))
      ]).pipe(Effect.provide(model.layer))
      expect(textOf(ok)).toBe("effectful: ping")
      expect(failed._tag).toBe("ModelCallFailed")
      expect(failed.message).toContain("from effect")
    }))

  it.effect("{ fail } makes the call fail with ModelCallFailed naming the reason", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "rate limited x" }, { text: "after" }])
      const [error, next] = yield* Effect.all([
        Effect.flip(generate(request("Hi"))),
        generate(request("retry"))
      ]).pipe(Effect.provide(model.layer))
      expect(error).toBeInstanceOf(ModelCallFailed)
      expect(error._tag).toBe("ModelCallFailed")
      expect(error.message).toContain("rate limited x")
      // a failed turn still consumes the turn
      expect(textOf(next)).toBe("after")
    }))

  it.effect("running out of turns fails with ScriptExhausted saying how many turns and which request", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "one" }, { text: "two" }])
      const error = yield* Effect.gen(function*() {
        yield* generate(request("first"))
        yield* generate(request("second"))
        return yield* Effect.flip(generate(request("the third question")))
      }).pipe(Effect.provide(model.layer))
      expect(error).toBeInstanceOf(ChatModel.ScriptExhausted)
      expect(error._tag).toBe("ScriptExhausted")
      if (error._tag !== "ScriptExhausted") return
      expect(error.scripted).toBe(2)
      expect(error.request).toBe(3)
      expect(error.message).toContain("2 turn(s)")
      expect(error.message).toContain("request #3")
      expect(error.message).toContain("user: the third question")
      expect(model.calls).toBe(3)
    }))

  it.effect("ScriptExhausted describes a tool message as its results", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([])
      const prompt = Prompt.fromMessages([
        Prompt.userMessage({ content: [Prompt.textPart({ text: "Hi" })] }),
        Prompt.toolMessage({
          content: [Prompt.makePart("tool-result", {
            id: "c1",
            name: "search",
            isFailure: false,
            result: ["a"],
            providerExecuted: false
          })]
        })
      ])
      const error = yield* Effect.flip(generate({ prompt, tools: [], toolChoice: "auto" })).pipe(
        Effect.provide(model.layer)
      )
      expect(error.message).toContain("0 turn(s)")
      expect(error.message).toContain("request #1")
      expect(error.message).toContain("tool: result of search")
    }))

  it.effect("requests records the prompt, tools and tool choice of each call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "a" }, { text: "b" }])
      const first = request("first", searchTools)
      const second: ChatModel.GenerateRequest = { ...request("second"), toolChoice: "required" }
      yield* Effect.all([generate(first), generate(second)]).pipe(Effect.provide(model.layer))
      expect(model.requests).toHaveLength(2)
      expect(model.requests[0]).toBe(first)
      expect(model.requests[1]).toBe(second)
      expect(lastUserText(model.requests[0])).toBe("first")
      expect(model.requests[0].tools.map((t) => t.name)).toEqual(["search"])
      expect(model.requests[1].tools).toEqual([])
      expect(model.requests[1].toolChoice).toBe("required")
    }))

  it.effect("record: 2 keeps only the last two requests", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }], { record: 2 })
      yield* Effect.forEach(["a", "b", "c", "d"], (text) => generate(request(text))).pipe(
        Effect.provide(model.layer)
      )
      expect(model.requests.map(lastUserText)).toEqual(["c", "d"])
      expect(model.calls).toBe(4)
    }))

  it.effect("record: 0 records nothing", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "1" }], { record: 0 })
      yield* generate(request("a")).pipe(Effect.provide(model.layer))
      expect(model.requests).toEqual([])
      expect(model.calls).toBe(1)
    }))

  it.effect("repeat: true cycles through the turns instead of failing", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "a" }, (_req, turn) => ({ text: `fn ${turn}` })], { repeat: true })
      const texts = yield* Effect.forEach([1, 2, 3, 4, 5], (i) => Effect.map(generate(request(`q${i}`)), textOf)).pipe(
        Effect.provide(model.layer)
      )
      expect(texts).toEqual(["a", "fn 1", "a", "fn 1", "a"])
      expect(model.calls).toBe(5)
    }))

  it.effect("re-building the layer resets calls and requests", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "first" }, { text: "second" }])
      const firstRun = yield* Effect.all([generate(request("a")), generate(request("b"))]).pipe(
        Effect.provide(model.layer)
      )
      expect(firstRun.map(textOf)).toEqual(["first", "second"])
      expect(model.calls).toBe(2)
      expect(model.requests).toHaveLength(2)

      // a fresh build starts the script over
      const again = yield* generate(request("c")).pipe(Effect.provide(model.layer))
      expect(textOf(again)).toBe("first")
      expect(model.calls).toBe(1)
      expect(model.requests.map(lastUserText)).toEqual(["c"])
    }))

  it.effect("stream yields text-start/text-delta/text-end whose deltas join to the text, then tool calls and finish", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "Let me look that up", toolCalls: [{ name: "search", params: { query: "x" } }] }
      ])
      const parts = yield* streamAll(request("Hi")).pipe(Effect.provide(model.layer))
      const types = parts.map((part) => part.type)
      expect(types[0]).toBe("text-start")
      expect(types.slice(-3)).toEqual(["text-end", "tool-call", "finish"])
      const deltas = parts.flatMap((part) => part.type === "text-delta" ? [part] : [])
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.map((d) => d.delta).join("")).toBe("Let me look that up")
      const start = parts[0]
      const ids = new Set(parts.flatMap((part) =>
        part.type === "text-start" || part.type === "text-delta" || part.type === "text-end" ? [part.id] : []
      ))
      expect(ids.size).toBe(1)
      expect(start.type === "text-start" ? ids.has(start.id) : false).toBe(true)
      expect(toolCalls(parts)).toEqual([{ id: "call_1_1", name: "search", params: { query: "x" } }])
      expect(finishOf(parts)).toBe("tool-calls")
      // the streamed parts rebuild the same assistant message as the generated ones
      const rebuilt = Prompt.fromResponseParts(parts).content
      const assistant = rebuilt.find((message) => message.role === "assistant")
      expect(assistant?.role).toBe("assistant")
      if (assistant?.role !== "assistant") return
      expect(assistant.content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")).toBe(
        "Let me look that up"
      )
    }))

  it.effect("stream of a failing turn fails with ModelCallFailed, and stream consumes turns like generate", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "stream broke" }, { text: "ok" }])
      const [error, parts] = yield* Effect.all([
        Effect.flip(streamAll(request("Hi"))),
        streamAll(request("again"))
      ]).pipe(Effect.provide(model.layer))
      expect(error._tag).toBe("ModelCallFailed")
      expect(error.message).toContain("stream broke")
      expect(parts.map((part) => part.type)).toEqual(["text-start", "text-delta", "text-end", "finish"])
      expect(model.calls).toBe(2)
    }))

  it.effect("a turn's latency is driven by TestClock: not done after 1999 ms, done after 2 s", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "slow", latency: "2 seconds" }])
      yield* Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(generate(request("Hi")))
        yield* Effect.yieldNow
        yield* TestClock.adjust("1999 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        const exit = yield* Fiber.await(fiber)
        expect(Exit.isSuccess(exit)).toBe(true)
        if (Exit.isSuccess(exit)) expect(textOf(exit.value)).toBe("slow")
      }).pipe(Effect.provide(model.layer))
    }))

  it.effect("the default latency applies to every turn and a turn's own latency wins", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "default" }, { text: "own", latency: "10 millis" }], {
        latency: "1 second"
      })
      yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(generate(request("a")))
        yield* Effect.yieldNow
        yield* TestClock.adjust("999 millis")
        expect(first.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        expect(textOf(yield* Fiber.join(first))).toBe("default")

        const second = yield* Effect.forkChild(generate(request("b")))
        yield* Effect.yieldNow
        yield* TestClock.adjust("9 millis")
        expect(second.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 millis")
        expect(textOf(yield* Fiber.join(second))).toBe("own")
      }).pipe(Effect.provide(model.layer))
    }))

  it.effect("a failing turn with latency fails only after the latency", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "late", latency: "5 seconds" }])
      yield* Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(generate(request("a")))
        yield* Effect.yieldNow
        yield* TestClock.adjust("4 seconds")
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.await(fiber)
        expect(Exit.isFailure(exit)).toBe(true)
      }).pipe(Effect.provide(model.layer))
    }))

  it.effect("generate is lazy: a turn is consumed when the call runs, and a retry takes the next turn", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "transient" }, { text: "ok" }])
      const parts = yield* Effect.gen(function*() {
        const chatModel = yield* ChatModel.ChatModel
        const call = chatModel.generate(request("Hi"))
        expect(model.calls).toBe(0)
        expect(model.requests).toHaveLength(0)
        return yield* Effect.retry(call, { times: 1 })
      }).pipe(Effect.provide(model.layer))
      expect(textOf(parts)).toBe("ok")
      expect(model.calls).toBe(2)
    }))

  it.effect("Chain.run with the scripted model: the second request carries the tool results", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "search", params: { query: "effect" } }] },
        { text: "Effect is a library." }
      ])
      const chain = Chain.make({ user: "What is Effect?", toolkit: searchToolkit })
      const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, searchToolkit.toLayer({ search: ({ query }) => Effect.succeed([query]) })])
      )
      expect(outcome._tag).toBe("Ok")
      expect(Chain.text(outcome.chain)).toBe("Effect is a library.")
      expect(model.requests).toHaveLength(2)
      const last = model.requests[1].prompt.content.at(-1)
      expect(last?.role).toBe("tool")
      if (last?.role !== "tool") return
      expect(last.content).toHaveLength(1)
      const result = last.content[0]
      expect(result.type === "tool-result" ? [result.id, result.result] : undefined).toEqual(["call_1_1", ["effect"]])
    }))
})

// -----------------------------------------------------------------------------
// layerLanguageModel
// -----------------------------------------------------------------------------

const usage = { inputTokens: {}, outputTokens: {} }

type Provider = Parameters<typeof LanguageModel.make>[0]

interface FakeProvider {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly received: Array<LanguageModel.ProviderOptions>
}

const fakeProvider = (
  turns: ReadonlyArray<Array<Response.PartEncoded> | AiError.AiError>,
  streamed: Array<Response.StreamPartEncoded> = []
): FakeProvider => {
  const received: Array<LanguageModel.ProviderOptions> = []
  let index = 0
  const generateText: Provider["generateText"] = (options) =>
    Effect.suspend(() => {
      received.push(options)
      const turn = turns[index++]
      if (turn === undefined) return Effect.die(new Error(`fake provider: no turn ${index}`))
      return AiError.isAiError(turn) ? Effect.fail(turn) : Effect.succeed(turn)
    })
  const streamText: Provider["streamText"] = (options) =>
    Stream.suspend(() => {
      received.push(options)
      return Stream.fromIterable(streamed)
    })
  return {
    layer: Layer.effect(LanguageModel.LanguageModel, LanguageModel.make({ generateText, streamText })),
    received
  }
}

const adapterLayer = (provider: FakeProvider) => ChatModel.layerLanguageModel.pipe(Layer.provide(provider.layer))

describe("ChatModel.layerLanguageModel", () => {
  it.effect("names the provider and model a Model.make layer reports (none without one)", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([])
      const named = Model.make("openai", "gpt-4.1-mini", provider.layer)
      const info = yield* Effect.map(Effect.service(ChatModel.ChatModel), (model) => model.info).pipe(
        Effect.provide(ChatModel.layerLanguageModel.pipe(Layer.provide(named)))
      )
      expect(info).toEqual({ provider: "openai", model: "gpt-4.1-mini" })
      const bare = yield* Effect.map(Effect.service(ChatModel.ChatModel), (model) => model.info).pipe(
        Effect.provide(adapterLayer(provider))
      )
      expect(bare).toBeUndefined()
    }))

  it.effect("returns the provider's parts with tool calls unresolved and passes tools and toolChoice", () =>
    Effect.gen(function*() {
      let handlerCalls = 0
      const provider = fakeProvider([[
        { type: "text", text: "hi" },
        { type: "tool-call", id: "c1", name: "search", params: { query: "x" } },
        { type: "finish", reason: "tool-calls", usage }
      ]])
      const parts = yield* generate({
        prompt: Prompt.make("Hi"),
        tools: searchTools,
        toolChoice: { tool: "search" }
      }).pipe(
        Effect.provide(adapterLayer(provider)),
        Effect.provide(searchToolkit.toLayer({
          search: () =>
            Effect.sync(() => {
              handlerCalls++
              return ["resolved!"]
            })
        }))
      )
      expect(parts.map((part) => part.type)).toEqual(["text", "tool-call", "finish"])
      expect(parts.some((part) => part.type === "tool-result")).toBe(false)
      expect(handlerCalls).toBe(0)
      expect(textOf(parts)).toBe("hi")
      expect(toolCalls(parts)).toEqual([{ id: "c1", name: "search", params: { query: "x" } }])
      expect(finishOf(parts)).toBe("tool-calls")

      expect(provider.received).toHaveLength(1)
      const options = provider.received[0]
      expect(options.tools.map((tool) => tool.name)).toEqual(["search"])
      expect(options.toolChoice).toEqual({ tool: "search" })
      expect(options.toolCallValidation).toBe("deferred")
      const userMessage = options.prompt.content.at(-1)
      expect(userMessage?.role).toBe("user")
    }))

  it.effect("an unknown tool name comes back as a tool-call part, not a failure", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([[
        { type: "tool-call", id: "u1", name: "does_not_exist", params: { anything: [1, 2] } },
        { type: "finish", reason: "tool-calls", usage }
      ]])
      const parts = yield* generate(request("Hi", searchTools)).pipe(Effect.provide(adapterLayer(provider)))
      expect(toolCalls(parts)).toEqual([{ id: "u1", name: "does_not_exist", params: { anything: [1, 2] } }])
    }))

  it.effect("arguments that fail the tool's schema come back as a tool-call part with the raw params", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([[
        { type: "tool-call", id: "b1", name: "search", params: { query: 42, extra: true } },
        { type: "finish", reason: "tool-calls", usage }
      ]])
      const parts = yield* generate(request("Hi", searchTools)).pipe(Effect.provide(adapterLayer(provider)))
      expect(toolCalls(parts)).toEqual([{ id: "b1", name: "search", params: { query: 42, extra: true } }])
    }))

  it.effect("a request without tools still works (text only)", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([[{ type: "text", text: "plain" }, { type: "finish", reason: "stop", usage }]])
      const parts = yield* generate(request("Hi")).pipe(Effect.provide(adapterLayer(provider)))
      expect(textOf(parts)).toBe("plain")
      expect(provider.received[0].tools).toEqual([])
    }))

  it.effect("Chain.run through the adapter answers unknown tool, bad args and a good call in call order", () =>
    Effect.gen(function*() {
      const handled: Array<string> = []
      const provider = fakeProvider([
        [
          { type: "text", text: "Trying tools" },
          { type: "tool-call", id: "t1", name: "nope", params: { q: 1 } },
          { type: "tool-call", id: "t2", name: "search", params: { query: 7 } },
          { type: "tool-call", id: "t3", name: "search", params: { query: "effect" } },
          { type: "finish", reason: "tool-calls", usage }
        ],
        [{ type: "text", text: "Done." }, { type: "finish", reason: "stop", usage }]
      ])
      const chain = Chain.make({ user: "Find effect", toolkit: searchToolkit })
      const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide(adapterLayer(provider)),
        Effect.provide(searchToolkit.toLayer({
          search: ({ query }) =>
            Effect.sync(() => {
              handled.push(query)
              return [`result for ${query}`]
            })
        }))
      )
      expect(outcome._tag).toBe("Ok")
      const final = outcome.chain
      expect(Chain.text(final)).toBe("Done.")
      expect(final.runCount).toBe(2)
      expect(handled).toEqual(["effect"])

      const results = final.lastToolResults
      expect(results.map((r) => [r.id, r.name, r.isFailure, r.failureOrigin])).toEqual([
        ["t1", "nope", true, "unknown-tool"],
        ["t2", "search", true, "parameters"],
        ["t3", "search", false, undefined]
      ])
      expect(String(results[0].encoded)).toContain("nope")
      expect(String(results[0].encoded)).toContain("search")
      expect(String(results[1].encoded)).toContain("search")
      expect(results[2].result).toEqual(["result for effect"])

      // the tool message the model saw on the second request
      expect(provider.received).toHaveLength(2)
      const toolMessage = provider.received[1].prompt.content.find((message) => message.role === "tool")
      expect(toolMessage?.role).toBe("tool")
      if (toolMessage?.role !== "tool") return
      const toolResults = toolMessage.content.flatMap((part) => part.type === "tool-result" ? [part] : [])
      expect(toolResults.map((part) => [part.id, part.name, part.isFailure])).toEqual([
        ["t1", "nope", true],
        ["t2", "search", true],
        ["t3", "search", false]
      ])
      expect(String(toolResults[0].result)).toContain("nope")
      expect(toolResults[2].result).toEqual(["result for effect"])
      // the assistant message keeps all three calls with their raw params
      const assistant = provider.received[1].prompt.content.find((message) => message.role === "assistant")
      if (assistant?.role !== "assistant") return expect.unreachable("no assistant message")
      expect(assistant.content.flatMap((part) => part.type === "tool-call" ? [[part.id, part.params]] : [])).toEqual([
        ["t1", { q: 1 }],
        ["t2", { query: 7 }],
        ["t3", { query: "effect" }]
      ])
    }))

  it.effect("a provider failure becomes ModelCallFailed whose cause is the AiError", () =>
    Effect.gen(function*() {
      const aiError = AiError.make({
        module: "FakeProvider",
        method: "generateText",
        reason: new AiError.RateLimitError({})
      })
      const provider = fakeProvider([aiError])
      const error = yield* Effect.flip(generate(request("Hi", searchTools))).pipe(
        Effect.provide(adapterLayer(provider))
      )
      expect(error).toBeInstanceOf(ModelCallFailed)
      if (!(error instanceof ModelCallFailed)) return
      expect(error.cause).toBe(aiError)
      expect(error.description).toBe(aiError.message)
      expect(error.message).toContain("Rate limit exceeded")
    }))

  it.effect("a provider failure ends Chain.run with a RunError carrying ModelCallFailed", () =>
    Effect.gen(function*() {
      const aiError = AiError.make({
        module: "FakeProvider",
        method: "generateText",
        reason: new AiError.InternalProviderError({ description: "boom" })
      })
      const provider = fakeProvider([aiError])
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide(adapterLayer(provider))
        )
      )
      expect(error.reason._tag).toBe("ModelCallFailed")
      if (!(error.reason instanceof ModelCallFailed)) return expect.unreachable("not ModelCallFailed")
      expect(error.reason.cause).toBe(aiError)
    }))

  it.effect("provider output that cannot be decoded becomes ModelCallFailed with an AiError cause", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([[
        { type: "finish", reason: "not-a-reason" as unknown as "stop", usage }
      ]])
      const error = yield* Effect.flip(generate(request("Hi"))).pipe(Effect.provide(adapterLayer(provider)))
      expect(error._tag).toBe("ModelCallFailed")
      if (!(error instanceof ModelCallFailed)) return
      expect(AiError.isAiError(error.cause)).toBe(true)
    }))

  it.effect("stream yields the provider's parts, tool calls unresolved", () =>
    Effect.gen(function*() {
      const provider = fakeProvider([], [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Hel" },
        { type: "text-delta", id: "t", delta: "lo" },
        { type: "text-end", id: "t" },
        { type: "tool-call", id: "c1", name: "search", params: { query: "x" } },
        { type: "tool-call", id: "c2", name: "unknown_tool", params: { raw: true } },
        { type: "finish", reason: "tool-calls", usage }
      ])
      const parts = yield* streamAll(request("Hi", searchTools)).pipe(Effect.provide(adapterLayer(provider)))
      expect(parts.map((part) => part.type)).toEqual([
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "tool-call",
        "tool-call",
        "finish"
      ])
      expect(parts.flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")).toBe("Hello")
      expect(toolCalls(parts)).toEqual([
        { id: "c1", name: "search", params: { query: "x" } },
        { id: "c2", name: "unknown_tool", params: { raw: true } }
      ])
      expect(provider.received[0].tools.map((tool) => tool.name)).toEqual(["search"])
    }))

  it.effect("a stream failure becomes ModelCallFailed whose cause is the AiError", () =>
    Effect.gen(function*() {
      const aiError = AiError.make({
        module: "FakeProvider",
        method: "streamText",
        reason: new AiError.RateLimitError({})
      })
      const layer = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({
          generateText: () => Effect.fail(aiError),
          streamText: () =>
            Stream.concat(Stream.make({ type: "text-start" as const, id: "t" }), Stream.fail(aiError))
        })
      )
      const error = yield* Effect.flip(streamAll(request("Hi"))).pipe(
        Effect.provide(ChatModel.layerLanguageModel.pipe(Layer.provide(layer)))
      )
      expect(error).toBeInstanceOf(ModelCallFailed)
      if (!(error instanceof ModelCallFailed)) return
      expect(error.cause).toBe(aiError)
    }))
})

import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode, Outcome } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const Greet = Tool.make("greet", {
  parameters: Schema.Struct({ name: Schema.String }),
  success: Schema.String
})
/** Typed results whose encoded form differs from the value: number ⇄ string, Date ⇄ ISO string. */
const CountLetters = Tool.make("count_letters", {
  parameters: Schema.Struct({ word: Schema.String }),
  success: Schema.NumberFromString
})
const Stamp = Tool.make("stamp", { success: Schema.DateFromString })
const Broken = Tool.make("broken", { success: Schema.String, failure: Schema.String })

const toolkit = Toolkit.make(Greet, CountLetters, Stamp, Broken)

const stampDate = new Date("2024-01-02T03:04:05.000Z")

const makeHandlers = () => {
  const calls = { greet: 0, count_letters: 0, stamp: 0, broken: 0 }
  const layer = toolkit.toLayer({
    greet: ({ name }) =>
      Effect.sync(() => {
        calls.greet++
        return `Hi ${name}!`
      }),
    count_letters: ({ word }) =>
      Effect.sync(() => {
        calls.count_letters++
        return word.length
      }),
    stamp: () =>
      Effect.sync(() => {
        calls.stamp++
        return stampDate
      }),
    broken: () =>
      Effect.suspend(() => {
        calls.broken++
        return Effect.fail("it broke")
      })
  })
  return { calls, layer }
}

const toolRound: ChatModel.ScriptedReply = {
  text: "Let me check.",
  toolCalls: [
    { name: "count_letters", params: { word: "hello" } },
    { name: "stamp" },
    { name: "greet", params: { name: "Bob" } },
    { name: "broken" }
  ]
}
const finalAnswer: ChatModel.ScriptedReply = { text: "hello has 5 letters." }

const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)

const userText = (message: Prompt.Message | undefined): string => {
  if (message === undefined || message.role !== "user") throw new globalThis.Error("expected a user message")
  return message.content.map((part) => part.type === "text" ? part.text : "").join("")
}

// -----------------------------------------------------------------------------
// make, addUser, text, needsResponse
// -----------------------------------------------------------------------------

describe("Chain.make", () => {
  it("system prompt and a single user message", () => {
    const chain = Chain.make({ system: "Be brief.", user: "Hi" })
    expect(roles(chain)).toEqual(["system", "user"])
    const system = chain.messages[0]
    expect(system.role === "system" ? system.content : undefined).toBe("Be brief.")
    expect(userText(chain.messages[1])).toBe("Hi")
    expect(chain.runCount).toBe(0)
    expect(chain.failureCount).toBe(0)
    expect(chain.pendingToolCalls).toEqual([])
    expect(chain.lastToolResults).toEqual([])
    expect(chain.lastResponse).toBeUndefined()
    expect(chain.context).toEqual({})
    expect(chain.modeState).toEqual({})
    expect(Chain.isChain(chain)).toBe(true)
    expect(Chain.isChain({ messages: [] })).toBe(false)
  })

  it("several user messages, in order", () => {
    const chain = Chain.make({ user: ["First", "Second", "Third"] })
    expect(roles(chain)).toEqual(["user", "user", "user"])
    expect(chain.messages.map(userText)).toEqual(["First", "Second", "Third"])
  })

  it("starts from earlier messages: system first, then messages, then user", () => {
    const earlier: ReadonlyArray<Prompt.Message> = [
      Prompt.userMessage({ content: [Prompt.textPart({ text: "Earlier question" })] }),
      Prompt.assistantMessage({ content: [Prompt.textPart({ text: "Earlier answer" })] })
    ]
    const chain = Chain.make({ system: "Sys", messages: earlier, user: "Follow-up" })
    expect(roles(chain)).toEqual(["system", "user", "assistant", "user"])
    expect(chain.messages[1]).toBe(earlier[0])
    expect(chain.messages[2]).toBe(earlier[1])
    expect(userText(chain.messages[3])).toBe("Follow-up")
  })

  it("keeps the toolkit; without one the toolkit has no tools", () => {
    const withTools = Chain.make({ user: "Hi", toolkit })
    expect(withTools.toolkit).toBe(toolkit)
    expect(Object.keys(withTools.toolkit.tools).sort()).toEqual(["broken", "count_letters", "greet", "stamp"])
    const without = Chain.make({ user: "Hi" })
    expect(Object.keys(without.toolkit.tools)).toEqual([])
  })

  it("keeps the context", () => {
    const context = { userId: "u1", flags: [1, 2], nested: { on: true, none: null } }
    expect(Chain.make({ user: "Hi", context }).context).toEqual(context)
  })

  it("needsResponse: true after a user or tool message or with pending calls, false otherwise", () => {
    expect(Chain.make({ user: "Hi" }).needsResponse).toBe(true)
    expect(Chain.make({}).needsResponse).toBe(false)
    expect(Chain.make({ system: "Only a system prompt" }).needsResponse).toBe(false)
    const answered = Chain.make({
      messages: [
        Prompt.userMessage({ content: [Prompt.textPart({ text: "Hi" })] }),
        Prompt.assistantMessage({ content: [Prompt.textPart({ text: "Hello" })] })
      ]
    })
    expect(answered.needsResponse).toBe(false)
    expect(answered.copy({ pendingToolCalls: [{ id: "c1", name: "greet", params: { name: "A" } }] }).needsResponse)
      .toBe(true)
    const afterTool = answered.copy({
      messages: [
        ...answered.messages,
        Prompt.toolMessage({
          content: [Prompt.makePart("tool-result", {
            id: "c1",
            name: "greet",
            isFailure: false,
            result: "Hi A!",
            providerExecuted: false
          })]
        })
      ]
    })
    expect(afterTool.needsResponse).toBe(true)
  })

  it("addUser appends a user message and leaves the original unchanged", () => {
    const chain = Chain.make({ system: "Sys", user: "Hi", toolkit })
    // applied directly: `chain.pipe(Chain.addUser(...))` does not typecheck (Chain declares `pipe()` with no parameters)
    const next = Chain.addUser("And now?")(chain)
    expect(roles(next)).toEqual(["system", "user", "user"])
    expect(userText(next.messages[2])).toBe("And now?")
    expect(next.toolkit).toBe(toolkit)
    expect(roles(chain)).toEqual(["system", "user"])
  })

  it.effect("text is empty before any response and the last response's text after", () =>
    Effect.gen(function*() {
      const chain = Chain.make({ user: "Hi" })
      expect(Chain.text(chain)).toBe("")
      const model = ChatModel.scripted([{ text: "Hello!" }])
      const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
      expect(Chain.text(outcome.chain)).toBe("Hello!")
      expect(outcome.chain.lastResponse?.finishReason).toBe("stop")
    }))
})

// -----------------------------------------------------------------------------
// Codec
// -----------------------------------------------------------------------------

describe("Chain codec", () => {
  it.effect("a chain after a tool round and a final answer survives encode → JSON → decode", () => {
    const model = ChatModel.scripted([toolRound, finalAnswer])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const start = Chain.make({
        system: "You count letters.",
        user: "How many letters in hello?",
        toolkit,
        context: { userId: "u1", tags: ["a", "b"], nested: { n: 1, none: null } }
      })
      const outcome = yield* Chain.run(start, { mode: Mode.whileNeedsResponse })
      const chain = outcome.chain.copy({ modeState: { custom: { round: 2, seen: ["greet"] } } })
      expect(roles(chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(chain.failureCount).toBe(1)

      const document = yield* Chain.encode(chain)
      expect(document.format).toBe("loopwork/chain")
      expect(document.version).toBe(Chain.formatVersion)
      const text = JSON.stringify(document)
      const decoded = yield* Chain.decode(text, { toolkit })

      // tools re-attached
      expect(decoded.toolkit).toBe(toolkit)
      expect(Chain.isChain(decoded)).toBe(true)
      // same fields
      expect(decoded.messages).toEqual(chain.messages)
      expect((yield* Chain.encode(decoded)).messages).toEqual(JSON.parse(text).messages)
      expect(yield* Chain.encode(decoded)).toEqual(JSON.parse(text))
      expect(decoded.runCount).toBe(2)
      expect(decoded.runCount).toBe(chain.runCount)
      expect(decoded.failureCount).toBe(chain.failureCount)
      expect(decoded.pendingToolCalls).toEqual(chain.pendingToolCalls)
      expect(decoded.lastResponse?.text).toBe("hello has 5 letters.")
      expect(decoded.lastResponse?.toolCalls).toEqual(chain.lastResponse?.toolCalls)
      expect(decoded.lastResponse?.finishReason).toBe(chain.lastResponse?.finishReason)
      expect(decoded.context).toEqual({ userId: "u1", tags: ["a", "b"], nested: { n: 1, none: null } })
      expect(decoded.modeState).toEqual({ custom: { round: 2, seen: ["greet"] } })
      expect(decoded.needsResponse).toBe(false)

      // tool results: ids, names, encoded forms and failure flags in call order
      const strip = (results: Chain.Chain["lastToolResults"]) =>
        results.map(({ encoded, failureOrigin, id, isFailure, name }) => ({ id, name, isFailure, encoded, failureOrigin }))
      expect(strip(decoded.lastToolResults)).toEqual(strip(chain.lastToolResults))
      expect(decoded.lastToolResults.map((result) => result.name)).toEqual([
        "count_letters",
        "stamp",
        "greet",
        "broken"
      ])
      expect(decoded.lastToolResults.slice(0, 3).map((result) => result.encoded)).toEqual([
        "5",
        "2024-01-02T03:04:05.000Z",
        "Hi Bob!"
      ])
      expect(decoded.lastToolResults.map((result) => result.isFailure)).toEqual([false, false, false, true])
      expect(decoded.lastToolResults[3].failureOrigin).toBe("handler")
      expect(String(decoded.lastToolResults[3].encoded)).toContain("it broke")
      // a failed result is not decoded through the success schema
      expect(decoded.lastToolResults[3].result).toBe(decoded.lastToolResults[3].encoded)

      // typed results are decoded back through the tool's success schema
      expect(decoded.lastToolResults[0].result).toBe(5)
      const stamp = decoded.lastToolResults[1].result
      expect(stamp).toBeInstanceOf(Date)
      expect(stamp instanceof Date ? stamp.toISOString() : undefined).toBe(stampDate.toISOString())
      expect(decoded.lastToolResults[2].result).toBe("Hi Bob!")
      expect(decoded.lastToolResults.map((result) => result.result))
        .toEqual(chain.lastToolResults.map((result) => result.result))
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("without the toolkit, decoded results keep their encoded value", () =>
    Effect.gen(function*() {
      const chain = Chain.make({
        user: "Hi",
        messages: [
          Prompt.assistantMessage({
            content: [Prompt.makePart("tool-call", { id: "c1", name: "count_letters", params: {}, providerExecuted: false })]
          }),
          Prompt.toolMessage({
            content: [Prompt.makePart("tool-result", { id: "c1", name: "count_letters", isFailure: false, result: "5", providerExecuted: false })]
          })
        ]
      }).copy({
        lastToolResults: [{ id: "c1", name: "count_letters", isFailure: false, result: 5, encoded: "5" }]
      })
      const decoded = yield* Chain.decode(JSON.stringify(yield* Chain.encode(chain)))
      expect(decoded.lastToolResults[0].result).toBe("5")
      expect(Object.keys(decoded.toolkit.tools)).toEqual([])
    }))

  it.effect("a decoded paused chain resumes to the same messages as an uninterrupted run", () => {
    const handlers = makeHandlers()
    const start = Chain.make({ system: "You count letters.", user: "How many letters in hello?", toolkit })

    const uninterruptedModel = ChatModel.scripted([toolRound, finalAnswer])
    const uninterrupted = Chain.run(start, { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([uninterruptedModel.layer, handlers.layer])
    )

    const pausedModel = ChatModel.scripted([toolRound, finalAnswer])
    const interrupted = Effect.gen(function*() {
      const stepped = yield* Chain.run(start, { mode: Mode.step })
      expect(stepped.chain.pendingToolCalls.map((call) => call.name)).toEqual([
        "count_letters",
        "stamp",
        "greet",
        "broken"
      ])
      const text = JSON.stringify(yield* Chain.encode(stepped.chain))
      const decoded = yield* Chain.decode(text, { toolkit })
      expect(decoded.pendingToolCalls).toEqual(stepped.chain.pendingToolCalls)
      expect(decoded.runCount).toBe(1)
      expect(decoded.lastResponse?.toolCalls).toEqual(stepped.chain.pendingToolCalls)
      expect(handlers.calls.greet).toBe(0)
      return yield* Chain.run(decoded, { mode: Mode.whileNeedsResponse })
    }).pipe(Effect.provide([pausedModel.layer, handlers.layer]))

    return Effect.gen(function*() {
      const resumed = yield* interrupted
      expect(handlers.calls.greet).toBe(1)
      expect(pausedModel.calls).toBe(2)
      const whole = yield* uninterrupted
      expect(uninterruptedModel.calls).toBe(2)
      expect(resumed._tag).toBe("Ok")
      expect(resumed.chain.messages).toEqual(whole.chain.messages)
      expect((yield* Chain.encode(resumed.chain)).messages).toEqual((yield* Chain.encode(whole.chain)).messages)
      expect(resumed.chain.runCount).toBe(whole.chain.runCount)
      expect(resumed.chain.failureCount).toBe(whole.chain.failureCount)
      expect(Chain.text(resumed.chain)).toBe("hello has 5 letters.")
      // the resumed model saw the tool results of the decoded calls
      const secondPrompt = pausedModel.requests[1].prompt.content
      expect(secondPrompt[secondPrompt.length - 1].role).toBe("tool")
    })
  })

  it.effect("decode accepts the document object as well as its JSON text", () =>
    Effect.gen(function*() {
      const chain = Chain.make({ system: "Sys", user: ["a", "b"], context: { k: "v" } })
      const document = yield* Chain.encode(chain)
      const decoded = yield* Chain.decode(document)
      expect(decoded.messages).toEqual(chain.messages)
      expect(decoded.context).toEqual({ k: "v" })
      expect(decoded.lastResponse).toBeUndefined()
    }))
})

// -----------------------------------------------------------------------------
// Decode errors
// -----------------------------------------------------------------------------

const validDocument = Effect.runSync(Chain.encode(Chain.make({ system: "Sys", user: "Hi" })))
const validText = JSON.stringify(validDocument)
const { version: _version, ...withoutVersion } = validDocument

const decodeErrorCases: ReadonlyArray<{ readonly name: string; readonly input: unknown; readonly message: RegExp }> = [
  { name: "truncated JSON text", input: validText.slice(0, validText.length - 7), message: /not valid JSON/ },
  { name: "empty text", input: "", message: /not valid JSON/ },
  { name: "a JSON array", input: "[1, 2, 3]", message: /expected a JSON object/ },
  { name: "a JSON string", input: "\"chain\"", message: /expected a JSON object/ },
  { name: "null", input: null, message: /expected a JSON object/ },
  { name: "a wrong format", input: { ...validDocument, format: "other/chain" }, message: /loopwork\/chain/ },
  { name: "no format", input: { version: 1 }, message: /loopwork\/chain/ },
  { name: "version 3", input: { ...validDocument, version: 3 }, message: /unsupported format version 3/ },
  { name: "a missing version", input: withoutVersion, message: /unsupported format version \(missing\)/ },
  { name: "runCount -1", input: { ...validDocument, runCount: -1 }, message: /runCount/ },
  { name: "runCount \"x\"", input: { ...validDocument, runCount: "x" }, message: /runCount/ },
  { name: "failureCount 1.5", input: { ...validDocument, failureCount: 1.5 }, message: /failureCount/ },
  { name: "messages not an array", input: { ...validDocument, messages: "hello" }, message: /messages/ },
  { name: "a message with an unknown role", input: { ...validDocument, messages: [{ role: "robot", content: "x" }] }, message: /messages/ },
  { name: "context not an object", input: { ...validDocument, context: [1] }, message: /context/ }
]

describe("Chain.decode errors", () => {
  for (const { input, message, name } of decodeErrorCases) {
    it.effect(`${name} → ChainCodecError`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Chain.decode(input))
        expect(error._tag).toBe("ChainCodecError")
        expect(error).toBeInstanceOf(Chain.ChainCodecError)
        expect(error.operation).toBe("decode")
        expect(error.message).toMatch(/^Cannot decode chain: /)
        expect(error.message).toMatch(message)
      }))
  }

  it.effect("the same document is valid before it is broken", () =>
    Effect.gen(function*() {
      const decoded = yield* Chain.decode(validText)
      expect(roles(decoded)).toEqual(["system", "user"])
    }))
})

// -----------------------------------------------------------------------------
// run: input validation, ModeDidNotFinish, errors keep the chain
// -----------------------------------------------------------------------------

const invalidCases: ReadonlyArray<{
  readonly name: string
  readonly options: Omit<Chain.RunOptions<ChatModel.ChatModel>, "mode">
  readonly chain?: Chain.Chain
  readonly message: string
}> = [
  { name: "maxRuns 0", options: { maxRuns: 0 }, message: "Invalid maxRuns: must be a positive integer (got 0)" },
  { name: "maxRuns -1", options: { maxRuns: -1 }, message: "Invalid maxRuns: must be a positive integer (got -1)" },
  { name: "maxRuns 1.5", options: { maxRuns: 1.5 }, message: "Invalid maxRuns: must be a positive integer (got 1.5)" },
  {
    name: "maxFailures 0",
    options: { maxFailures: 0 },
    message: "Invalid maxFailures: must be a positive integer (got 0)"
  },
  {
    name: "concurrency 0",
    options: { concurrency: 0 },
    message: "Invalid concurrency: must be a positive integer or \"unbounded\" (got 0)"
  },
  {
    name: "concurrency \"lots\"",
    options: { concurrency: "lots" as unknown as number },
    message: "Invalid concurrency: must be a positive integer or \"unbounded\" (got \"lots\")"
  },
  {
    name: "shouldContinue not a function",
    options: { shouldContinue: "yes" as unknown as () => boolean },
    message: "Invalid shouldContinue: must be a function of the chain (got \"yes\")"
  },
  {
    name: "an empty chain",
    options: {},
    chain: Chain.make({}),
    message: "Invalid chain.messages: a chain needs at least one message to run (got [])"
  }
]

const modes: ReadonlyArray<readonly [string, Mode.Mode<ChatModel.ChatModel>]> = [
  ["whileNeedsResponse", Mode.whileNeedsResponse],
  ["untilSuccess", Mode.untilSuccess],
  ["step", Mode.step],
  ["untilToolUsed", Mode.untilToolUsed("greet")]
]

describe("Chain.run input validation", () => {
  for (const { chain, message, name, options } of invalidCases) {
    for (const [modeName, mode] of modes) {
      it.effect(`${name} → InvalidInput (${modeName})`, () =>
        Effect.gen(function*() {
          const model = ChatModel.scripted([{ text: "should not be called" }], { repeat: true })
          const handlers = makeHandlers()
          const input = chain ?? Chain.make({ user: "Hi", toolkit })
          const error = yield* Chain.run(input, { ...options, mode }).pipe(
            Effect.provide([model.layer, handlers.layer]),
            Effect.flip
          )
          expect(error._tag).toBe("RunError")
          expect(error.reason._tag).toBe("InvalidInput")
          expect(error.reason).toBeInstanceOf(LoopError.InvalidInput)
          expect(error.reason.message).toBe(message)
          expect(error.message).toBe(message)
          expect(error.chain).toBe(input)
          expect(model.calls).toBe(0)
        }))
    }
  }

  it.effect("valid edge values are accepted (maxRuns 1, concurrency \"unbounded\" and 1)", () => {
    const model = ChatModel.scripted([{ text: "fine" }], { repeat: true })
    return Effect.gen(function*() {
      for (const options of [{ maxRuns: 1 }, { concurrency: "unbounded" as const }, { concurrency: 1, maxFailures: 1 }]) {
        const outcome = yield* Chain.run(Chain.make({ user: "Hi" }), { ...options, mode: Mode.whileNeedsResponse })
        expect(Chain.text(outcome.chain)).toBe("fine")
      }
      expect(model.calls).toBe(3)
    }).pipe(Effect.provide(model.layer))
  })
})

describe("Chain.run", () => {
  it.effect("a custom mode that returns Continue fails with ModeDidNotFinish", () =>
    Effect.gen(function*() {
      const stuck: Mode.Mode = (chain) => Effect.succeed(new Outcome.Continue(Chain.addUser("more")(chain)))
      const chain = Chain.make({ user: "Hi" })
      const error = yield* Effect.flip(Chain.run(chain, { mode: stuck }))
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("ModeDidNotFinish")
      expect(error.reason.message).toMatch(/^The mode returned Continue/)
      // the chain the mode returned is kept
      expect(roles(error.chain)).toEqual(["user", "user"])
    }))

  it.effect("options reach the mode", () =>
    Effect.gen(function*() {
      const seen: Array<Mode.Options> = []
      const spy: Mode.Mode = (chain, options) => {
        seen.push(options)
        return Effect.succeed(new Outcome.Ok(chain, "done"))
      }
      yield* Chain.run(Chain.make({ user: "Hi" }), { mode: spy, maxRuns: 7, concurrency: 2 })
      expect(seen).toHaveLength(1)
      expect(seen[0].maxRuns).toBe(7)
      expect(seen[0].concurrency).toBe(2)
    }))

  it.effect("a model failure keeps the chain as it stood: the first round's messages", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "greet", params: { name: "Ann" } }, { name: "count_letters", params: { word: "abc" } }] },
        { fail: "overloaded" }
      ])
      const handlers = makeHandlers()
      const error = yield* Chain.run(Chain.make({ user: "Hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(error.reason).toBeInstanceOf(LoopError.ModelCallFailed)
      expect(error.reason.message).toContain("overloaded")
      expect(error.message).toContain("overloaded")
      expect(model.calls).toBe(2)
      const chain = error.chain
      expect(roles(chain)).toEqual(["user", "assistant", "tool"])
      expect(chain.runCount).toBe(1)
      expect(chain.pendingToolCalls).toEqual([])
      expect(chain.lastToolResults.map((result) => [result.name, result.result])).toEqual([
        ["greet", "Hi Ann!"],
        ["count_letters", 3]
      ])
      const assistant = chain.messages[1]
      expect(assistant.role === "assistant" ? assistant.content.map((part) => part.type) : []).toEqual([
        "tool-call",
        "tool-call"
      ])
      // the kept chain is resumable: the model gets another try
      const retry = ChatModel.scripted([{ text: "Recovered." }])
      const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([retry.layer, handlers.layer])
      )
      expect(Chain.text(outcome.chain)).toBe("Recovered.")
      expect(handlers.calls.greet).toBe(1)
    }))
})

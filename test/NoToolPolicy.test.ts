import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode, NoToolPolicy, Outcome, Step } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures: Langroid's test_handle_llm_no_tool, adapted
//   user "1" → model calls sum({x:1,y:2}) → handler "3" → model answers "4" (no tool)
// -----------------------------------------------------------------------------

const Sum = Tool.make("sum", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ x: Schema.Number, y: Schema.Number }),
  success: Schema.String
})
/** The "finish" tool, as Langroid's Done tools. */
const FinalAnswer = Tool.make("final_answer", {
  description: "Gives the final answer",
  parameters: Schema.Struct({ answer: Schema.Number }),
  success: Schema.Number
})

const toolkit = Toolkit.make(Sum, FinalAnswer)

/** Fresh handlers (and call counters) per test. */
const makeHandlers = () => {
  const calls = { sum: 0, final_answer: 0 }
  const layer = toolkit.toLayer({
    sum: ({ x, y }) =>
      Effect.sync(() => {
        calls.sum++
        return String(x + y)
      }),
    final_answer: ({ answer }) =>
      Effect.sync(() => {
        calls.final_answer++
        return answer
      })
  })
  return { calls, layer }
}

const langroidChain = () => Chain.make({ system: "You add numbers.", user: "1", toolkit })

const sumTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "sum", params: { x: 1, y: 2 } }] }
const fourTurn: ChatModel.ScriptedReply = { text: "4" }
const finalTurn = (answer: number): ChatModel.ScriptedReply => ({
  toolCalls: [{ name: "final_answer", params: { answer } }]
})

/** A one-line summary of a message: `role: part | part`. */
const describeMessage = (message: Prompt.Message | undefined): string => {
  if (message === undefined) return "none"
  if (typeof message.content === "string") return `${message.role}: ${message.content}`
  const parts: Array<string> = []
  for (const part of message.content) {
    switch (part.type) {
      case "text":
        parts.push(part.text)
        break
      case "tool-call":
        parts.push(`call ${part.name} ${JSON.stringify(part.params)}`)
        break
      case "tool-result":
        parts.push(`result ${part.name} ${JSON.stringify(part.result)}${part.isFailure ? " (failure)" : ""}`)
        break
      default:
        parts.push(part.type)
    }
  }
  return `${message.role}: ${parts.join(" | ")}`
}

const lastMessages = (chain: Chain.Chain, n: number): ReadonlyArray<string> =>
  chain.messages.slice(-n).map(describeMessage)

/** The last message of every request the model received, oldest first. */
const sentLast = (model: ChatModel.ScriptedModel): ReadonlyArray<string> =>
  model.requests.map((request) => describeMessage(request.prompt.content.at(-1)))

const toolResult = (id: string, name: string, value: unknown) => ({
  id,
  name,
  isFailure: false,
  result: value,
  encoded: value
})

const reminderFinal = NoToolPolicy.reminderFor(["final_answer"])

const sumCall = "assistant: call sum {\"x\":1,\"y\":2}"
const sumResult = "tool: result sum \"3\""

// -----------------------------------------------------------------------------
// Expectations
// -----------------------------------------------------------------------------

type Expected =
  | { readonly _tag: "Ok"; readonly reason: Outcome.OkReason; readonly extra: unknown }
  | { readonly _tag: "Pause"; readonly reason: Outcome.PauseReason }
  | { readonly _tag: "Error"; readonly reason: string; readonly message: string }

type Ended = Outcome.Final | LoopError.RunError

const runEnded = <R>(effect: Effect.Effect<Outcome.Final, LoopError.RunError, R>): Effect.Effect<Ended, never, R> =>
  Effect.map(Effect.result(effect), (result) => result._tag === "Success" ? result.success : result.failure)

/** Asserts the outcome (or the run's error) and returns its chain. */
const checkEnded = (ended: Ended, expected: Expected): Chain.Chain => {
  switch (ended._tag) {
    case "Ok":
      expect({ _tag: ended._tag, reason: ended.reason, extra: ended.extra }).toEqual(expected)
      return ended.chain
    case "Pause":
      expect({ _tag: ended._tag, reason: ended.reason }).toEqual(expected)
      return ended.chain
    case "RunError":
      expect({ _tag: "Error", reason: ended.reason._tag, message: ended.message }).toEqual(expected)
      return ended.chain
  }
}

// -----------------------------------------------------------------------------
// The Langroid table
// -----------------------------------------------------------------------------

interface Stage {
  readonly expected: Expected
  /** Model calls so far (the model is shared by the stages of a row). */
  readonly calls: number
  /** The last message of every request the model received so far. */
  readonly sent: ReadonlyArray<string>
  /** The last messages of the chain the stage ended with. */
  readonly tail: ReadonlyArray<string>
}

interface LangroidRow {
  readonly name: string
  readonly noTool?: NoToolPolicy.Policy
  readonly maxRuns?: number
  /** Model turns after the first two (sum call, then "4"); one more call fails the run. */
  readonly after: ReadonlyArray<ChatModel.ScriptedTurn>
  readonly first: Stage
  /** `Chain.addUser(user)` on the first stage's chain, then run again with the same options. */
  readonly resume?: Stage & { readonly user: string }
}

const langroidRows: ReadonlyArray<LangroidRow> = [
  {
    name: "None (stalls) → default: reminder naming final_answer, then MaxRunsExceeded after maxRuns calls",
    maxRuns: 4,
    after: [{ text: "4 again" }, { text: "still 4" }],
    first: {
      expected: { _tag: "Error", reason: "MaxRunsExceeded", message: "Exceeded maximum number of runs (4/4)" },
      calls: 4,
      sent: ["user: 1", sumResult, `user: ${reminderFinal}`, `user: ${reminderFinal}`],
      // every plain answer got the reminder; the last one was never sent
      tail: [
        sumCall,
        sumResult,
        "assistant: 4",
        `user: ${reminderFinal}`,
        "assistant: 4 again",
        `user: ${reminderFinal}`,
        "assistant: still 4",
        `user: ${reminderFinal}`
      ]
    }
  },
  {
    name: "\"user\" → Pause UserInputWanted after \"4\"; addUser(\"q\") and run: the model sees \"q\" last",
    noTool: "user",
    after: [finalTurn(4)],
    first: {
      expected: { _tag: "Pause", reason: { _tag: "UserInputWanted" } },
      calls: 2,
      sent: ["user: 1", sumResult],
      tail: [sumCall, sumResult, "assistant: 4"]
    },
    resume: {
      user: "q",
      expected: { _tag: "Ok", reason: "tool-used", extra: toolResult("call_3_1", "final_answer", 4) },
      calls: 3,
      sent: ["user: 1", sumResult, "user: q"],
      tail: ["assistant: 4", "user: q", "assistant: call final_answer {\"answer\":4}", "tool: result final_answer 4"]
    }
  },
  {
    name: "\"done\" → Ok done, extra \"4\"",
    noTool: "done",
    after: [],
    first: {
      expected: { _tag: "Ok", reason: "done", extra: "4" },
      calls: 2,
      sent: ["user: 1", sumResult],
      tail: ["user: 1", sumCall, sumResult, "assistant: 4"]
    }
  },
  {
    name: "\"are you finished?\" → appended as a user message; the model then calls final_answer(5)",
    noTool: "are you finished?",
    after: [finalTurn(5)],
    first: {
      expected: { _tag: "Ok", reason: "tool-used", extra: toolResult("call_3_1", "final_answer", 5) },
      calls: 3,
      sent: ["user: 1", sumResult, "user: are you finished?"],
      tail: [
        "assistant: 4",
        "user: are you finished?",
        "assistant: call final_answer {\"answer\":5}",
        "tool: result final_answer 5"
      ]
    }
  },
  {
    name: "ResultTool(answer=42) → NoToolPolicy.result({ answer: 42 }): Ok no-tool-result",
    noTool: NoToolPolicy.result({ answer: 42 }),
    after: [],
    first: {
      expected: { _tag: "Ok", reason: "no-tool-result", extra: { answer: 42 } },
      calls: 2,
      sent: ["user: 1", sumResult],
      tail: [sumCall, sumResult, "assistant: 4"]
    }
  },
  {
    name: "DonePassTool() → (response) => \"done\": Ok done, extra \"4\"",
    noTool: () => "done",
    after: [],
    first: {
      expected: { _tag: "Ok", reason: "done", extra: "4" },
      calls: 2,
      sent: ["user: 1", sumResult],
      tail: [sumCall, sumResult, "assistant: 4"]
    }
  },
  {
    name: "lambda msg: AgentDoneTool(content=msg.content) → (response) => result(response.text): extra \"4\"",
    noTool: (response) => NoToolPolicy.result(response.text),
    after: [],
    first: {
      expected: { _tag: "Ok", reason: "no-tool-result", extra: "4" },
      calls: 2,
      sent: ["user: 1", sumResult],
      tail: [sumCall, sumResult, "assistant: 4"]
    }
  }
]

const checkStage = (ended: Ended, stage: Stage, model: ChatModel.ScriptedModel): Chain.Chain => {
  const chain = checkEnded(ended, stage.expected)
  expect(model.calls).toBe(stage.calls)
  expect(sentLast(model)).toEqual(stage.sent)
  expect(lastMessages(chain, stage.tail.length)).toEqual(stage.tail)
  return chain
}

describe("NoToolPolicy: Langroid's test_handle_llm_no_tool", () => {
  for (const row of langroidRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([sumTurn, fourTurn, ...row.after])
      const handlers = makeHandlers()
      const options: Chain.RunOptions<ChatModel.ChatModel> = {
        mode: Mode.untilToolUsed("final_answer"),
        ...(row.maxRuns === undefined ? {} : { maxRuns: row.maxRuns }),
        ...(row.noTool === undefined ? {} : { noTool: row.noTool })
      }
      return Effect.gen(function*() {
        const first = checkStage(yield* runEnded(Chain.run(langroidChain(), options)), row.first, model)
        expect(handlers.calls.sum).toBe(1)
        if (row.resume !== undefined) {
          expect(first.needsResponse).toBe(false)
          expect(first.pendingToolCalls).toEqual([])
          const resumed = yield* runEnded(Chain.run(first.pipe(Chain.addUser(row.resume.user)), options))
          checkStage(resumed, row.resume, model)
          expect(handlers.calls.sum).toBe(1)
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Defaults per mode
// -----------------------------------------------------------------------------

interface DefaultRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  readonly noTool?: NoToolPolicy.Policy
  readonly expected: Expected
}

const defaultRows: ReadonlyArray<DefaultRow> = [
  {
    name: "whileNeedsResponse, no noTool: Ok done without extra",
    mode: Mode.whileNeedsResponse,
    expected: { _tag: "Ok", reason: "done", extra: undefined }
  },
  {
    name: "untilSuccess, no noTool: Ok done without extra",
    mode: Mode.untilSuccess,
    expected: { _tag: "Ok", reason: "done", extra: undefined }
  },
  {
    name: "step, no noTool: the step ends (Ok step) without extra; the plain answer is not acted on",
    mode: Mode.step,
    expected: { _tag: "Ok", reason: "step", extra: undefined }
  },
  {
    name: "whileNeedsResponse, noTool \"done\": Ok done with the text as extra",
    mode: Mode.whileNeedsResponse,
    noTool: "done",
    expected: { _tag: "Ok", reason: "done", extra: "Hello" }
  },
  {
    name: "untilSuccess, noTool \"done\": Ok done with the text as extra",
    mode: Mode.untilSuccess,
    noTool: "done",
    expected: { _tag: "Ok", reason: "done", extra: "Hello" }
  },
  {
    name: "step, noTool \"done\": Ok done with the text as extra",
    mode: Mode.step,
    noTool: "done",
    expected: { _tag: "Ok", reason: "done", extra: "Hello" }
  },
  {
    name: "whileNeedsResponse, noTool \"user\": Pause UserInputWanted",
    mode: Mode.whileNeedsResponse,
    noTool: "user",
    expected: { _tag: "Pause", reason: { _tag: "UserInputWanted" } }
  },
  {
    name: "untilSuccess, noTool result(7): Ok no-tool-result 7",
    mode: Mode.untilSuccess,
    noTool: NoToolPolicy.result(7),
    expected: { _tag: "Ok", reason: "no-tool-result", extra: 7 }
  }
]

describe("NoToolPolicy: defaults and the other modes", () => {
  for (const row of defaultRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        // a single turn: a second model call would fail the run with ScriptExhausted
        const model = ChatModel.scripted([{ text: "Hello" }])
        const handlers = makeHandlers()
        const chain = Chain.make({ user: "Hi", toolkit })
        const ended = yield* runEnded(Chain.run(chain, {
          mode: row.mode,
          ...(row.noTool === undefined ? {} : { noTool: row.noTool })
        })).pipe(Effect.provide([model.layer, handlers.layer]))
        const after = checkEnded(ended, row.expected)
        expect(model.calls).toBe(1)
        expect(lastMessages(after, 2)).toEqual(["user: Hi", "assistant: Hello"])
        expect(after.needsResponse).toBe(false)
      }))
  }

  it.effect("untilToolUsed with several names reminds with \"call one of: a, b\"", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([fourTurn, finalTurn(4)])
      const handlers = makeHandlers()
      const outcome = yield* Chain.run(langroidChain(), { mode: Mode.untilToolUsed(["final_answer", "sum"]) }).pipe(
        Effect.provide([model.layer, handlers.layer])
      )
      checkEnded(outcome, { _tag: "Ok", reason: "tool-used", extra: toolResult("call_2_1", "final_answer", 4) })
      expect(model.calls).toBe(2)
      expect(sentLast(model)).toEqual([
        "user: 1",
        "user: You answered without calling a tool. To finish, call one of: final_answer, sum."
      ])
    }))

  it("reminderFor names one tool, or lists several", () => {
    expect(NoToolPolicy.reminderFor(["submit"])).toBe("You answered without calling a tool. To finish, call submit.")
    expect(NoToolPolicy.reminderFor(["a", "b"])).toBe(
      "You answered without calling a tool. To finish, call one of: a, b."
    )
  })

  it.effect("whileNeedsResponse with a reminder: the model is reminded on every plain answer, bounded by maxRuns", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "no" }, { text: "still no" }, { text: "never" }])
      const handlers = makeHandlers()
      const error = yield* Chain.run(langroidChain(), {
        mode: Mode.whileNeedsResponse,
        noTool: NoToolPolicy.remind("Use the sum tool."),
        maxRuns: 3
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(error.message).toBe("Exceeded maximum number of runs (3/3)")
      expect(model.calls).toBe(3)
      expect(error.chain.runCount).toBe(3)
      expect(sentLast(model)).toEqual(["user: 1", "user: Use the sum tool.", "user: Use the sum tool."])
      expect(lastMessages(error.chain, 6)).toEqual([
        "assistant: no",
        "user: Use the sum tool.",
        "assistant: still no",
        "user: Use the sum tool.",
        "assistant: never",
        "user: Use the sum tool."
      ])
    }))

  it.effect("whileNeedsResponse with a reminder: the reminded model uses the tool, and its next plain answer is reminded too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "no" }, sumTurn, fourTurn])
      const handlers = makeHandlers()
      const error = yield* Chain.run(langroidChain(), { mode: Mode.whileNeedsResponse, noTool: "Use sum.", maxRuns: 3 })
        .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(model.calls).toBe(3)
      expect(handlers.calls.sum).toBe(1)
      expect(sentLast(model)).toEqual(["user: 1", "user: Use sum.", sumResult])
      expect(lastMessages(error.chain, 4)).toEqual([sumCall, sumResult, "assistant: 4", "user: Use sum."])
    }))
})

// -----------------------------------------------------------------------------
// Policy functions
// -----------------------------------------------------------------------------

describe("NoToolPolicy: functions", () => {
  it.effect("an Effect-returning function is awaited (TestClock); remind(\"done\") sends the literal word", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([sumTurn, fourTurn, finalTurn(4)])
      const handlers = makeHandlers()
      let decided = 0
      const fiber = yield* Chain.run(langroidChain(), {
        mode: Mode.untilToolUsed("final_answer"),
        noTool: () =>
          Effect.sleep("2 seconds").pipe(
            Effect.andThen(Effect.sync(() => {
              decided++
              return NoToolPolicy.remind("done")
            }))
          )
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.forkChild)
      yield* TestClock.adjust("1999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(decided).toBe(0)
      expect(model.calls).toBe(2)
      yield* TestClock.adjust("1 millis")
      const exit = fiber.pollUnsafe()
      expect(exit).toBeDefined()
      const outcome = yield* Fiber.join(fiber)
      checkEnded(outcome, { _tag: "Ok", reason: "tool-used", extra: toolResult("call_3_1", "final_answer", 4) })
      expect(decided).toBe(1)
      expect(model.calls).toBe(3)
      // "done" as a reminder is a user message, not the end of the loop
      expect(sentLast(model)).toEqual(["user: 1", sumResult, "user: done"])
    }))

  it.effect("the function receives the plain answer's response and the chain it ended", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([sumTurn, fourTurn])
      const handlers = makeHandlers()
      const seen: Array<{ readonly response: Chain.ModelResponse; readonly chain: Chain.Chain }> = []
      const outcome = yield* Chain.run(langroidChain(), {
        mode: Mode.untilToolUsed("final_answer"),
        noTool: (response, chain) => {
          seen.push({ response, chain })
          return NoToolPolicy.result(`${response.text} after ${chain.runCount} calls`)
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      checkEnded(outcome, { _tag: "Ok", reason: "no-tool-result", extra: "4 after 2 calls" })
      // called once: the sum turn had a tool call and was not shown to the policy
      expect(seen).toHaveLength(1)
      const { chain, response } = seen[0]
      expect(response.text).toBe("4")
      expect(response.toolCalls).toEqual([])
      expect(response.finishReason).toBe("stop")
      expect(chain.lastResponse).toBe(response)
      expect(chain.runCount).toBe(2)
      expect(chain.pendingToolCalls).toEqual([])
      expect(chain.lastToolResults.map((result) => [result.name, result.result])).toEqual([["sum", "3"]])
      expect(chain.messages.map(describeMessage)).toEqual([
        "system: You add numbers.",
        "user: 1",
        sumCall,
        sumResult,
        "assistant: 4"
      ])
      // the outcome's chain is the chain the policy saw
      expect(outcome.chain.messages).toEqual(chain.messages)
    }))

  it.effect("a function can decide per answer: remind first, then end with a result", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "I think 3" }, sumTurn, { text: "3" }])
      const handlers = makeHandlers()
      const outcome = yield* Chain.run(langroidChain(), {
        mode: Mode.whileNeedsResponse,
        noTool: (response, chain) =>
          chain.lastToolResults.length === 0 ? "Check with the sum tool." : NoToolPolicy.result(Number(response.text))
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      checkEnded(outcome, { _tag: "Ok", reason: "no-tool-result", extra: 3 })
      expect(model.calls).toBe(3)
      expect(sentLast(model)).toEqual(["user: 1", "user: Check with the sum tool.", sumResult])
    }))
})

// -----------------------------------------------------------------------------
// Functions that do not return a decision
// -----------------------------------------------------------------------------

const functionRule =
  "the policy (or its function) must give \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text) or NoToolPolicy.result(value)"

interface BadFunctionRow {
  readonly name: string
  readonly returns: unknown
  readonly effect: boolean
  readonly got: string
}

const badFunctionRows: ReadonlyArray<BadFunctionRow> = [
  { name: "a number", returns: 42, effect: false, got: "42" },
  { name: "undefined", returns: undefined, effect: false, got: "undefined" },
  { name: "an object with an unknown _tag", returns: { _tag: "Done" }, effect: false, got: "{\"_tag\":\"Done\"}" },
  { name: "a Remind without text", returns: { _tag: "Remind" }, effect: false, got: "{\"_tag\":\"Remind\"}" },
  { name: "an Effect of a number", returns: 42, effect: true, got: "42" },
  { name: "an Effect of null", returns: null, effect: true, got: "null" }
]

describe("NoToolPolicy: a function that returns no decision", () => {
  for (const row of badFunctionRows) {
    it.effect(`${row.name} → RunError InvalidInput (field noTool)`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([sumTurn, fourTurn])
        const handlers = makeHandlers()
        const decide = (): unknown => row.returns
        const policy = (row.effect ? () => Effect.sync(decide) : decide) as unknown as NoToolPolicy.Policy
        const error = yield* Chain.run(langroidChain(), { mode: Mode.untilToolUsed("final_answer"), noTool: policy })
          .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
        expect(error._tag).toBe("RunError")
        expect(error.reason).toBeInstanceOf(LoopError.InvalidInput)
        if (!(error.reason instanceof LoopError.InvalidInput)) return
        expect(error.reason.field).toBe("noTool")
        expect(error.reason.rule).toBe(functionRule)
        expect(error.reason.value).toEqual(row.returns)
        expect(error.message).toBe(`Invalid noTool: ${functionRule} (got ${row.got})`)
        expect(model.calls).toBe(2)
        // the chain as it stood: the plain answer, nothing appended
        expect(lastMessages(error.chain, 3)).toEqual([sumCall, sumResult, "assistant: 4"])
      }))
  }
})

// -----------------------------------------------------------------------------
// Invalid noTool values
// -----------------------------------------------------------------------------

const valueRule =
  "must be \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text), NoToolPolicy.result(value) or a function"

interface InvalidRow {
  readonly name: string
  readonly value: unknown
  readonly message: string
}

const invalidRows: ReadonlyArray<InvalidRow> = [
  { name: "a number", value: 42, message: `Invalid noTool: ${valueRule} (got 42)` },
  { name: "a boolean", value: true, message: `Invalid noTool: ${valueRule} (got true)` },
  { name: "null", value: null, message: `Invalid noTool: ${valueRule} (got null)` },
  { name: "an object without _tag", value: { text: "hi" }, message: `Invalid noTool: ${valueRule} (got {"text":"hi"})` },
  { name: "an unknown _tag", value: { _tag: "Done" }, message: `Invalid noTool: ${valueRule} (got {"_tag":"Done"})` },
  {
    name: "a Remind whose text is not a string",
    value: { _tag: "Remind", text: 5 },
    message: `Invalid noTool: ${valueRule} (got {"_tag":"Remind","text":5})`
  },
  { name: "a Result without result", value: { _tag: "Result" }, message: `Invalid noTool: ${valueRule} (got {"_tag":"Result"})` },
  { name: "the empty string", value: "", message: "Invalid noTool: a reminder must not be empty (got \"\")" }
]

describe("NoToolPolicy: invalid noTool values", () => {
  for (const row of invalidRows) {
    it.effect(`${row.name} → RunError InvalidInput before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([sumTurn, fourTurn])
        const handlers = makeHandlers()
        const chain = langroidChain()
        const error = yield* Chain.run(chain, {
          mode: Mode.untilToolUsed("final_answer"),
          noTool: row.value as NoToolPolicy.Policy
        }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
        expect(error.reason).toBeInstanceOf(LoopError.InvalidInput)
        if (!(error.reason instanceof LoopError.InvalidInput)) return
        expect(error.reason.field).toBe("noTool")
        expect(error.reason.value).toEqual(row.value)
        expect(error.message).toBe(row.message)
        expect(model.calls).toBe(0)
        expect(handlers.calls.sum).toBe(0)
        expect(error.chain).toBe(chain)
      }))
  }
})

// -----------------------------------------------------------------------------
// Empty reminders
// -----------------------------------------------------------------------------

interface EmptyReminderRow {
  readonly name: string
  readonly policy: NoToolPolicy.Policy
  /** Model calls before the failure: a static policy is checked before any call, a function after the answer. */
  readonly calls: number
}

// `noTool: ""` is rejected ("a reminder must not be empty"); the same empty reminder given another way must be too.
const emptyReminderRows: ReadonlyArray<EmptyReminderRow> = [
  { name: "NoToolPolicy.remind(\"\")", policy: NoToolPolicy.remind(""), calls: 0 },
  { name: "a function returning \"\"", policy: () => "", calls: 1 },
  { name: "a function returning remind(\"\")", policy: () => NoToolPolicy.remind(""), calls: 1 }
]

describe("NoToolPolicy: an empty reminder is rejected however it is given", () => {
  for (const row of emptyReminderRows) {
    it.effect(`${row.name} → RunError InvalidInput (field noTool); no empty user message reaches the model`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([fourTurn, finalTurn(4)])
        const handlers = makeHandlers()
        const ended = yield* runEnded(
          Chain.run(langroidChain(), { mode: Mode.untilToolUsed("final_answer"), noTool: row.policy })
        ).pipe(Effect.provide([model.layer, handlers.layer]))
        expect(sentLast(model)).not.toContain("user: ")
        expect(ended._tag).toBe("RunError")
        if (ended._tag !== "RunError") return
        expect(ended.reason).toBeInstanceOf(LoopError.InvalidInput)
        if (!(ended.reason instanceof LoopError.InvalidInput)) return
        expect(ended.reason.field).toBe("noTool")
        expect(model.calls).toBe(row.calls)
        expect(handlers.calls.final_answer).toBe(0)
      }))
  }
})

// -----------------------------------------------------------------------------
// Step.checkNoTool
// -----------------------------------------------------------------------------

describe("Step.checkNoTool", () => {
  it.effect("in a custom pipeline right after callLlm: reminds, lets tools run, then ends with a result", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "I think 3" }, sumTurn, { text: "3" }])
      const handlers = makeHandlers()
      const decisions: Array<string> = []
      const policy: NoToolPolicy.Policy = (response, chain) => {
        decisions.push(response.text)
        return chain.lastToolResults.length === 0 ? "Call sum." : NoToolPolicy.result(Number(response.text))
      }
      const checkNoTool = Step.checkNoTool(policy)
      const checkMaxRuns = Step.checkMaxRuns({ maxRuns: 5 })
      const custom: Mode.Mode<ChatModel.ChatModel> = (chain) => {
        const next = Step.continueOrDone((c: Chain.Chain) => loop(c))
        const loop = (c: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
          next(checkMaxRuns(Step.executeTools(checkNoTool(Step.callLlm(Step.start(c))))))
        return loop(chain)
      }
      const outcome = yield* Chain.run(langroidChain(), { mode: custom }).pipe(
        Effect.provide([model.layer, handlers.layer])
      )
      checkEnded(outcome, { _tag: "Ok", reason: "no-tool-result", extra: 3 })
      expect(decisions).toEqual(["I think 3", "3"])
      expect(model.calls).toBe(3)
      expect(handlers.calls.sum).toBe(1)
      expect(sentLast(model)).toEqual(["user: 1", "user: Call sum.", sumResult])
      expect(lastMessages(outcome.chain, 6)).toEqual([
        "user: 1",
        "assistant: I think 3",
        "user: Call sum.",
        sumCall,
        sumResult,
        "assistant: 3"
      ])
    }))

  it.effect("\"user\" after one model turn pauses with the answer as the chain's last message", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([fourTurn])
      const outcome = yield* Step.checkNoTool("user")(Step.callLlm(Step.start(langroidChain()))).pipe(
        Effect.provide(model.layer)
      )
      expect(outcome._tag).toBe("Pause")
      if (outcome._tag !== "Pause") return
      expect(outcome.reason).toEqual({ _tag: "UserInputWanted" })
      expect(lastMessages(outcome.chain, 2)).toEqual(["user: 1", "assistant: 4"])
      expect(model.calls).toBe(1)
    }))

  interface PassRow {
    readonly name: string
    readonly input: (chain: Chain.Chain) => Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel>
    readonly script: ReadonlyArray<ChatModel.ScriptedTurn>
    readonly expected: (input: Outcome.Outcome, output: Outcome.Outcome) => void
  }

  const passRows: ReadonlyArray<PassRow> = [
    {
      name: "a chain whose last message is the user's (no model answer yet) passes through",
      input: (chain) => Step.start(chain),
      script: [],
      expected: (input, output) => {
        expect(output._tag).toBe("Continue")
        expect(output.chain).toBe(input.chain)
      }
    },
    {
      name: "a response with tool calls passes through with its calls pending",
      input: (chain) => Step.callLlm(Step.start(chain)),
      script: [{ text: "Let me add.", toolCalls: [{ name: "sum", params: { x: 1, y: 2 } }] }],
      expected: (input, output) => {
        expect(output._tag).toBe("Continue")
        expect(output.chain).toBe(input.chain)
        expect(output.chain.pendingToolCalls.map((call) => call.name)).toEqual(["sum"])
      }
    },
    {
      name: "a plain answer followed by a user message is not the model's last word: passes through",
      input: (chain) =>
        Effect.map(
          Step.callLlm(Step.start(chain)),
          (outcome) => new Outcome.Continue(outcome.chain.pipe(Chain.addUser("and now?")))
        ),
      script: [fourTurn],
      expected: (input, output) => {
        expect(output._tag).toBe("Continue")
        expect(output.chain).toBe(input.chain)
        expect(input.chain.lastResponse?.text).toBe("4")
      }
    },
    {
      name: "a terminal outcome passes through unchanged",
      input: (chain) => Effect.succeed(new Outcome.Ok(chain, "step")),
      script: [],
      expected: (input, output) => {
        expect(output).toBe(input)
      }
    }
  ]

  for (const row of passRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted(row.script)
        let consulted = 0
        const check = Step.checkNoTool(() => {
          consulted++
          return "done"
        })
        const program = Effect.gen(function*() {
          const input = yield* row.input(langroidChain())
          const output = yield* check(Effect.succeed(input))
          return { input, output }
        })
        const { input, output } = yield* program.pipe(Effect.provide(model.layer))
        row.expected(input, output)
        expect(consulted).toBe(0)
        expect(model.calls).toBe(row.script.length)
      }))
  }
})

// -----------------------------------------------------------------------------
// Responses with tool calls are never touched
// -----------------------------------------------------------------------------

describe("NoToolPolicy: a response with tool calls is never touched", () => {
  it.effect("untilToolUsed with noTool \"done\": text + tool call runs the tool instead of ending", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "Let me add.", toolCalls: [{ name: "sum", params: { x: 1, y: 2 } }] },
        { text: "Final:", toolCalls: [{ name: "final_answer", params: { answer: 3 } }] }
      ])
      const handlers = makeHandlers()
      let consulted = 0
      const outcome = yield* Chain.run(langroidChain(), {
        mode: Mode.untilToolUsed("final_answer"),
        noTool: () => {
          consulted++
          return "done"
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      checkEnded(outcome, { _tag: "Ok", reason: "tool-used", extra: toolResult("call_2_1", "final_answer", 3) })
      expect(consulted).toBe(0)
      expect(model.calls).toBe(2)
      expect(handlers.calls).toEqual({ sum: 1, final_answer: 1 })
      expect(lastMessages(outcome.chain, 4)).toEqual([
        "assistant: Let me add. | call sum {\"x\":1,\"y\":2}",
        sumResult,
        "assistant: Final: | call final_answer {\"answer\":3}",
        "tool: result final_answer 3"
      ])
    }))

  it.effect("whileNeedsResponse: the policy sees only the plain answer, after the tool round", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "Let me add.", toolCalls: [{ name: "sum", params: { x: 1, y: 2 } }] },
        fourTurn
      ])
      const handlers = makeHandlers()
      const seen: Array<string> = []
      const outcome = yield* Chain.run(langroidChain(), {
        mode: Mode.whileNeedsResponse,
        noTool: (response) => {
          seen.push(response.text)
          return "done"
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      checkEnded(outcome, { _tag: "Ok", reason: "done", extra: "4" })
      expect(seen).toEqual(["4"])
      expect(handlers.calls.sum).toBe(1)
      expect(model.calls).toBe(2)
      expect(sentLast(model)).toEqual(["user: 1", sumResult])
    }))
})

/**
 * `noTool` as a function of the chain: the decisions it may return, a function that returns no
 * decision, invalid `noTool` values, and an empty reminder refused however it is given.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, Mode, NoToolPolicy, Outcome, Step } from "../src/index.ts"
import {
  makeHandlers, langroidChain, sumTurn, fourTurn, finalTurn, describeMessage, lastMessages, sentLast,
  toolResult, sumCall, sumResult, runEnded, checkEnded
} from "./support/noTool.ts"

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

/**
 * `noTool`: what a model answer without a tool call means. Langroid's `test_handle_llm_no_tool`
 * as an acceptance table (done, hand over to the user, a reminder, a given tool result as the
 * answer), and the defaults of each mode.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Chain, ChatModel, Mode, NoToolPolicy } from "../src/index.ts"
import {
  toolkit, makeHandlers, langroidChain, sumTurn, fourTurn, finalTurn, lastMessages, sentLast, toolResult,
  reminderFinal, sumCall, sumResult, runEnded, checkEnded, type Expected, type Ended
} from "./support/noTool.ts"

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

import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Result, Schedule, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, MaxRunsPolicy, Mode, Outcome } from "../src/index.ts"
import { transcript } from "./support/transcript.ts"
import { Submit } from "./support/tools.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const Lookup = Tool.make("lookup", {
  description: "Looks something up",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String
})
/** Always fails (for untilSuccess, which would otherwise end on the first clean round). */
const Broken = Tool.make("broken", {
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String,
  failure: Schema.String
})
/** The target of untilToolUsed; the model never calls it. */

const toolkit = Toolkit.make(Lookup, Broken, Submit)
const toolNames = ["lookup", "broken", "submit"]

const makeHandlers = () => {
  const calls = { lookup: 0, broken: 0, submit: 0 }
  const layer = toolkit.toLayer({
    lookup: ({ query }) =>
      Effect.sync(() => {
        calls.lookup++
        return `found ${query}`
      }),
    broken: () =>
      Effect.suspend(() => {
        calls.broken++
        return Effect.fail("broken again")
      }),
    submit: ({ answer }) =>
      Effect.sync(() => {
        calls.submit++
        return `submitted ${answer}`
      })
  })
  return { calls, layer }
}

const system = "You research."
const question = "What is the answer?"
const userChain = () => Chain.make({ system, user: question, toolkit })

const finalText = "Best guess: 42"

/**
 * A model that always calls a tool when it may: it calls `tool` whenever tools
 * are offered and the tool choice allows it, and otherwise answers `finalText`.
 */
const toolCaller = (tool: "lookup" | "broken" = "lookup"): ChatModel.ScriptedTurn => (request, turn) =>
  request.tools.length > 0 && request.toolChoice !== "none"
    ? { toolCalls: [{ name: tool, params: { query: `q${turn + 1}` } }] }
    : { text: finalText }

/** `n` turns of the same function (so the turn index, and default call ids, advance). */
const turns = (n: number, turn: ChatModel.ScriptedTurn): ReadonlyArray<ChatModel.ScriptedTurn> =>
  Array.from({ length: n }, () => turn)

/** One line per message: role and content, tool calls and results included. */
/** What the model was offered in each request. */
const offered = (model: ChatModel.ScriptedModel) =>
  model.requests.map((request) => ({ tools: request.tools.map((tool) => tool.name), toolChoice: request.toolChoice }))

const withTools = { tools: toolNames, toolChoice: "auto" }
/** The final-answer call: the tool definitions are still sent (providers such as Anthropic require them), but toolChoice is "none". */
const noTools = { tools: toolNames, toolChoice: "none" }

/** The conversation of a whileNeedsResponse run of the tool caller stopped after 2 lookups. */
const twoLookups: ReadonlyArray<string> = [
  `system: ${system}`,
  `user: ${question}`,
  `assistant: call lookup#call_1_1 {"query":"q1"}`,
  `tool: ok lookup#call_1_1 "found q1"`,
  `assistant: call lookup#call_2_1 {"query":"q2"}`,
  `tool: ok lookup#call_2_1 "found q2"`
]

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got ${outcome._tag}`)
  return outcome
}

/** A custom error a max-runs handler can end the run with. */
class BudgetExhausted extends Schema.TaggedError<BudgetExhausted>()("BudgetExhausted", {
  runs: Schema.Number
}) {
  override get message(): string {
    return `Budget exhausted after ${this.runs} model calls`
  }
}

// -----------------------------------------------------------------------------
// The four policies, same script
// -----------------------------------------------------------------------------

type Expected =
  | { readonly _tag: "Ok"; readonly reason: Outcome.OkReason; readonly extra: unknown }
  | { readonly _tag: "Pause"; readonly reason: Outcome.PauseReason }
  | { readonly _tag: "Error"; readonly reason: string; readonly message: string }

interface PolicyRow {
  readonly name: string
  readonly onMaxRuns: MaxRunsPolicy.Policy | undefined
  readonly expected: Expected
  /** The resulting chain (the run error's chain for failures). */
  readonly transcript: ReadonlyArray<string>
  readonly requests: ReadonlyArray<{ readonly tools: ReadonlyArray<string>; readonly toolChoice: string }>
  readonly runCount: number
}

const policyRows: ReadonlyArray<PolicyRow> = [
  {
    name: "default (no onMaxRuns) fails with MaxRunsExceeded, keeping the chain with every tool result",
    onMaxRuns: undefined,
    expected: { _tag: "Error", reason: "MaxRunsExceeded", message: "Exceeded maximum number of runs (2/2)" },
    transcript: twoLookups,
    requests: [withTools, withTools],
    runCount: 2
  },
  {
    name: "\"fail\" fails with MaxRunsExceeded, keeping the chain with every tool result",
    onMaxRuns: "fail",
    expected: { _tag: "Error", reason: "MaxRunsExceeded", message: "Exceeded maximum number of runs (2/2)" },
    transcript: twoLookups,
    requests: [withTools, withTools],
    runCount: 2
  },
  {
    name: "\"stop\" ends Ok max-runs with the last response's text and the chain as it stands",
    onMaxRuns: "stop",
    expected: { _tag: "Ok", reason: "max-runs", extra: "" }, // the last response's text (a tool-call turn: empty)
    transcript: twoLookups,
    requests: [withTools, withTools],
    runCount: 2
  },
  {
    name: "\"final-answer\" makes one tool-less call after the instruction and ends Ok final-answer",
    onMaxRuns: "final-answer",
    expected: { _tag: "Ok", reason: "final-answer", extra: finalText },
    transcript: [...twoLookups, `user: ${MaxRunsPolicy.instruction}`, `assistant: ${finalText}`],
    requests: [withTools, withTools, noTools],
    runCount: 3
  },
  {
    name: "MaxRunsPolicy.finalAnswer(text) uses the custom instruction",
    onMaxRuns: MaxRunsPolicy.finalAnswer("Summarise what you found, in one line."),
    expected: { _tag: "Ok", reason: "final-answer", extra: finalText },
    transcript: [...twoLookups, "user: Summarise what you found, in one line.", `assistant: ${finalText}`],
    requests: [withTools, withTools, noTools],
    runCount: 3
  },
  {
    name: "a handler function decides: its Ok with a custom extra is the result",
    onMaxRuns: (chain, info) =>
      Effect.succeed(
        new Outcome.Ok(chain, "max-runs", { info, lastRole: chain.messages.at(-1)?.role, runCount: chain.runCount })
      ),
    expected: { _tag: "Ok", reason: "max-runs", extra: { info: { runs: 2, maxRuns: 2 }, lastRole: "tool", runCount: 2 } },
    transcript: twoLookups,
    requests: [withTools, withTools],
    runCount: 2
  }
]

describe("onMaxRuns policies (whileNeedsResponse, maxRuns 2, a model that always calls a tool)", () => {
  for (const row of policyRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted(turns(5, toolCaller()))
        const handlers = makeHandlers()
        const result = yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          maxRuns: 2,
          ...(row.onMaxRuns === undefined ? {} : { onMaxRuns: row.onMaxRuns })
        }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.result)

        let chain: Chain.Chain
        if (Result.isFailure(result)) {
          const error = result.failure
          expect(row.expected._tag).toBe("Error")
          expect(error._tag).toBe("RunError")
          if (row.expected._tag === "Error") {
            expect(error.reason._tag).toBe(row.expected.reason)
            expect(error.reason.message).toBe(row.expected.message)
            expect(error.message).toBe(row.expected.message)
          }
          chain = error.chain
        } else {
          const outcome = result.success
          expect(outcome._tag).toBe(row.expected._tag)
          if (outcome._tag === "Ok" && row.expected._tag === "Ok") {
            expect(outcome.reason).toBe(row.expected.reason)
            expect(outcome.extra).toEqual(row.expected.extra)
          }
          chain = outcome.chain
        }

        expect(transcript(chain.messages)).toEqual(row.transcript)
        expect(chain.runCount).toBe(row.runCount)
        expect(chain.pendingToolCalls).toEqual([])
        expect(model.calls).toBe(row.requests.length)
        expect(offered(model)).toEqual(row.requests)
        // every tool call the model made (within the budget) ran exactly once
        expect(handlers.calls.lookup).toBe(2)
      }))
  }
})

// -----------------------------------------------------------------------------
// final-answer in detail
// -----------------------------------------------------------------------------

describe("onMaxRuns: \"final-answer\"", () => {
  it.effect("the model receives exactly: two requests with tools, then the chain + instruction with no tools", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2, onMaxRuns: "final-answer" }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(outcome.reason).toBe("final-answer")
      expect(outcome.extra).toBe(finalText)
      expect(Chain.text(outcome.chain)).toBe(finalText)
      expect(model.requests).toHaveLength(3)

      const [first, second, last] = model.requests
      expect(transcript(first.prompt.content)).toEqual(twoLookups.slice(0, 2))
      expect(first.tools.map((tool) => tool.name)).toEqual(toolNames)
      expect(first.toolChoice).toBe("auto")
      expect(transcript(second.prompt.content)).toEqual(twoLookups.slice(0, 4))
      expect(second.tools.map((tool) => tool.name)).toEqual(toolNames)
      expect(second.toolChoice).toBe("auto")

      expect(transcript(last.prompt.content)).toEqual([...twoLookups, `user: ${MaxRunsPolicy.instruction}`])
      expect(last.tools.map((tool) => tool.name)).toEqual(toolNames)
      expect(last.toolChoice).toBe("none")
      // the prompt of the final call is exactly the chain before the answer
      expect(last.prompt.content).toEqual(outcome.chain.messages.slice(0, -1))
      expect(MaxRunsPolicy.instruction).toBe(
        "You have reached the limit of steps for this task. Do not call any tools. Give your best final answer now, using what you have found so far."
      )
      expect(outcome.chain.runCount).toBe(3)
      expect(outcome.chain.lastResponse?.toolCalls).toEqual([])
      expect(outcome.chain.needsResponse).toBe(false)
    }))

  it.effect("a custom instruction is the last message of the final request", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          maxRuns: 1,
          onMaxRuns: MaxRunsPolicy.finalAnswer("Answer in one word.")
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(MaxRunsPolicy.finalAnswer("Answer in one word.")).toEqual({
        _tag: "FinalAnswer",
        instruction: "Answer in one word."
      })
      expect(outcome.reason).toBe("final-answer")
      expect(model.calls).toBe(2)
      expect(transcript(model.requests[1].prompt.content)).toEqual([...twoLookups.slice(0, 4), "user: Answer in one word."])
      expect(offered(model)).toEqual([withTools, noTools])
      expect(outcome.chain.runCount).toBe(2)
    }))

  it.effect("MaxRunsPolicy.finalAnswer() without text uses the default instruction", () =>
    Effect.gen(function*() {
      expect(MaxRunsPolicy.finalAnswer()).toEqual({ _tag: "FinalAnswer", instruction: MaxRunsPolicy.instruction })
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          maxRuns: 1,
          onMaxRuns: MaxRunsPolicy.finalAnswer()
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.extra).toBe(finalText)
      expect(transcript(model.requests[1].prompt.content).at(-1)).toBe(`user: ${MaxRunsPolicy.instruction}`)
    }))

  it.effect("a reply that still calls tools fails with MaxRunsExceeded and the chain before the call", () =>
    Effect.gen(function*() {
      // ignores the tool choice: calls a tool every time
      const model = ChatModel.scripted(
        turns(5, (_request, turn) => ({ text: "one more", toolCalls: [{ name: "lookup", params: { query: `q${turn + 1}` } }] }))
      )
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2,
        onMaxRuns: "final-answer"
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error._tag).toBe("RunError")
      expect(error.reason._tag).toBe("MaxRunsExceeded")
      expect(error.reason).toBeInstanceOf(LoopError.MaxRunsExceeded)
      expect(error.message).toBe("Exceeded maximum number of runs (2/2)")
      // exactly one call beyond maxRuns, and it was the tool-less one
      expect(model.calls).toBe(3)
      expect(offered(model)).toEqual([withTools, withTools, noTools])
      // the chain as it was before the final-answer call: no instruction, no third reply
      expect(transcript(error.chain.messages)).toEqual([
        `system: ${system}`,
        `user: ${question}`,
        `assistant: one more | call lookup#call_1_1 {"query":"q1"}`,
        `tool: ok lookup#call_1_1 "found q1"`,
        `assistant: one more | call lookup#call_2_1 {"query":"q2"}`,
        `tool: ok lookup#call_2_1 "found q2"`
      ])
      expect(error.chain.runCount).toBe(2)
      expect(error.chain.pendingToolCalls).toEqual([])
      // the final reply's tool call was not run
      expect(handlers.calls.lookup).toBe(2)
    }))

  it.effect("a failing final-answer call fails with the model error and the chain before the call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        ...turns(2, toolCaller()),
        { fail: "provider down" },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2,
        onMaxRuns: "final-answer"
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(error.reason).toBeInstanceOf(LoopError.ModelCallFailed)
      expect(error.message).toBe("The model call failed: provider down")
      expect(model.calls).toBe(3)
      expect(offered(model)).toEqual([withTools, withTools, noTools])
      expect(transcript(model.requests[2].prompt.content)).toEqual([...twoLookups, `user: ${MaxRunsPolicy.instruction}`])
      expect(transcript(error.chain.messages)).toEqual(twoLookups)
      expect(error.chain.runCount).toBe(2)
    }))

  it.effect("with retry, a failed final-answer call is retried on the schedule (TestClock)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        ...turns(2, toolCaller()),
        { fail: "rate limited" },
        toolCaller()
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2,
        onMaxRuns: "final-answer",
        retry: Schedule.max([Schedule.recurs(2), Schedule.spaced("1 second")])
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.forkChild)

      yield* TestClock.adjust("999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(model.calls).toBe(3)
      yield* TestClock.adjust("1 millis")
      const outcome = asOk(yield* Fiber.join(fiber))

      expect(outcome.reason).toBe("final-answer")
      expect(outcome.extra).toBe(finalText)
      expect(model.calls).toBe(4)
      expect(offered(model)).toEqual([withTools, withTools, noTools, noTools])
      // the retry sent the same request: one instruction, not two
      expect(transcript(model.requests[3].prompt.content)).toEqual([...twoLookups, `user: ${MaxRunsPolicy.instruction}`])
      expect(model.requests[3].prompt.content).toEqual(model.requests[2].prompt.content)
      expect(transcript(outcome.chain.messages)).toEqual([
        ...twoLookups,
        `user: ${MaxRunsPolicy.instruction}`,
        `assistant: ${finalText}`
      ])
      expect(outcome.chain.runCount).toBe(3)
    }))

  it.effect("with retry exhausted, the run fails with the last model error and the chain before the call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        ...turns(2, toolCaller()),
        { fail: "first outage" },
        { fail: "second outage" },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2,
        onMaxRuns: "final-answer",
        retry: Schedule.max([Schedule.recurs(1), Schedule.spaced("1 second")])
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(error.message).toBe("The model call failed: second outage")
      expect(model.calls).toBe(4)
      expect(offered(model)).toEqual([withTools, withTools, noTools, noTools])
      expect(transcript(error.chain.messages)).toEqual(twoLookups)
      expect(error.chain.runCount).toBe(2)
    }))
})

// -----------------------------------------------------------------------------
// handler functions
// -----------------------------------------------------------------------------

describe("onMaxRuns: a handler function", () => {
  it.effect("is called once with the chain and { runs, maxRuns }; its Pause is the run's result", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const seen: Array<{ readonly info: MaxRunsPolicy.Info; readonly transcript: ReadonlyArray<string> }> = []
      const policy: MaxRunsPolicy.Policy = (chain, info) =>
        Effect.sync(() => {
          seen.push({ info, transcript: transcript(chain.messages) })
          return new Outcome.Pause(chain, { _tag: "Requested", message: `Used ${info.runs} of ${info.maxRuns}; continue?` })
        })
      const paused = asPause(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2, onMaxRuns: policy }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(paused.reason).toEqual({ _tag: "Requested", message: "Used 2 of 2; continue?" })
      expect(seen).toEqual([{ info: { runs: 2, maxRuns: 2 }, transcript: twoLookups }])
      expect(transcript(paused.chain.messages)).toEqual(twoLookups)
      expect(model.calls).toBe(2)
    }))

  it.effect("its Outcome.Error becomes a RunError with that error and chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        maxRuns: 2,
        onMaxRuns: (chain, info) => Effect.succeed(new Outcome.Error(chain, new BudgetExhausted({ runs: info.runs })))
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error._tag).toBe("RunError")
      // A custom error reaches the caller wrapped in StepFailed, so RunError.reason stays a closed union.
      expect(error.reason._tag).toBe("StepFailed")
      expect(error.reason._tag === "StepFailed" ? error.reason.failure : undefined).toBeInstanceOf(BudgetExhausted)
      expect(error.message).toBe("Budget exhausted after 2 model calls")
      expect(transcript(error.chain.messages)).toEqual(twoLookups)
      expect(model.calls).toBe(2)
    }))

  it.effect("its outcome may carry a different chain (e.g. one it edited)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted(turns(5, toolCaller()))
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          maxRuns: 1,
          onMaxRuns: (chain) => Effect.succeed(new Outcome.Ok(chain.pipe(Chain.addUser("noted")), "max-runs", "custom"))
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("max-runs")
      expect(outcome.extra).toBe("custom")
      expect(transcript(outcome.chain.messages)).toEqual([...twoLookups.slice(0, 4), "user: noted"])
      expect(model.calls).toBe(1)
    }))
})

// -----------------------------------------------------------------------------
// Every looping mode
// -----------------------------------------------------------------------------

interface ModeRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  readonly extra: Partial<Mode.Options>
  readonly tool: "lookup" | "broken"
  readonly onMaxRuns: "stop" | "final-answer"
}

const modes: ReadonlyArray<Omit<ModeRow, "onMaxRuns">> = [
  { name: "whileNeedsResponse", mode: Mode.whileNeedsResponse, extra: {}, tool: "lookup" },
  // a clean round would end untilSuccess, so its tool always fails
  { name: "untilSuccess", mode: Mode.untilSuccess, extra: { maxFailures: 10 }, tool: "broken" },
  { name: "untilToolUsed(\"submit\")", mode: Mode.untilToolUsed("submit"), extra: {}, tool: "lookup" },
  { name: "step with shouldContinue", mode: Mode.step, extra: { shouldContinue: () => true }, tool: "lookup" }
]

const modeRows: ReadonlyArray<ModeRow> = modes.flatMap((row) => [
  { ...row, name: `${row.name}: "stop" after 3 calls`, onMaxRuns: "stop" as const },
  { ...row, name: `${row.name}: "final-answer" after 3 calls`, onMaxRuns: "final-answer" as const }
])

const roundLines = (tool: "lookup" | "broken", n: number): ReadonlyArray<string> =>
  Array.from({ length: n }, (_, i) => [
    `assistant: call ${tool}#call_${i + 1}_1 {"query":"q${i + 1}"}`,
    tool === "lookup"
      ? `tool: ok ${tool}#call_${i + 1}_1 "found q${i + 1}"`
      : `tool: failed ${tool}#call_${i + 1}_1 "broken again"`
  ]).flat()

describe("onMaxRuns in every looping mode (maxRuns 3)", () => {
  for (const row of modeRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted(turns(6, toolCaller(row.tool)))
        const handlers = makeHandlers()
        const outcome = asOk(
          yield* Chain.run(userChain(), { mode: row.mode, maxRuns: 3, onMaxRuns: row.onMaxRuns, ...row.extra }).pipe(
            Effect.provide([model.layer, handlers.layer])
          )
        )
        const rounds = [`system: ${system}`, `user: ${question}`, ...roundLines(row.tool, 3)]
        expect(handlers.calls[row.tool]).toBe(3)
        if (row.onMaxRuns === "stop") {
          expect(outcome.reason).toBe("max-runs")
          expect(outcome.extra).toBe(outcome.chain.lastResponse?.text)
          expect(model.calls).toBe(3)
          expect(offered(model)).toEqual([withTools, withTools, withTools])
          expect(transcript(outcome.chain.messages)).toEqual(rounds)
          expect(outcome.chain.runCount).toBe(3)
        } else {
          expect(outcome.reason).toBe("final-answer")
          expect(outcome.extra).toBe(finalText)
          expect(model.calls).toBe(4)
          expect(offered(model)).toEqual([withTools, withTools, withTools, noTools])
          expect(transcript(model.requests[3].prompt.content)).toEqual([...rounds, `user: ${MaxRunsPolicy.instruction}`])
          expect(transcript(outcome.chain.messages)).toEqual([
            ...rounds,
            `user: ${MaxRunsPolicy.instruction}`,
            `assistant: ${finalText}`
          ])
          expect(outcome.chain.runCount).toBe(4)
        }
      }))
  }
})

// -----------------------------------------------------------------------------
// Budget per run, last allowed run, invalid policies
// -----------------------------------------------------------------------------

describe("maxRuns is per run", () => {
  it.effect("a second run on the resulting chain gets a fresh budget (the handler sees this run's calls)", () => {
    const model = ChatModel.scripted(turns(10, toolCaller()))
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const first = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2, onMaxRuns: "stop" })
      )
      expect(first.reason).toBe("max-runs")
      expect(first.chain.runCount).toBe(2)
      expect(model.calls).toBe(2)

      const seen: Array<MaxRunsPolicy.Info> = []
      const second = asOk(
        yield* Chain.run(first.chain, {
          mode: Mode.whileNeedsResponse,
          maxRuns: 2,
          onMaxRuns: (chain, info) =>
            Effect.sync(() => {
              seen.push(info)
              return new Outcome.Ok(chain, "max-runs", chain.runCount)
            })
        })
      )
      // two more model calls, not zero: the budget counts from the start of this run
      expect(model.calls).toBe(4)
      expect(seen).toEqual([{ runs: 2, maxRuns: 2 }])
      expect(second.extra).toBe(4)
      expect(second.chain.runCount).toBe(4)
      expect(handlers.calls.lookup).toBe(4)
      expect(transcript(second.chain.messages)).toEqual([
        ...twoLookups,
        `assistant: call lookup#call_3_1 {"query":"q3"}`,
        `tool: ok lookup#call_3_1 "found q3"`,
        `assistant: call lookup#call_4_1 {"query":"q4"}`,
        `tool: ok lookup#call_4_1 "found q4"`
      ])

      const third = asOk(
        yield* Chain.run(second.chain, { mode: Mode.whileNeedsResponse, maxRuns: 1, onMaxRuns: "final-answer" })
      )
      expect(third.reason).toBe("final-answer")
      expect(model.calls).toBe(6)
      expect(third.chain.runCount).toBe(6)
      expect(offered(model).slice(4)).toEqual([withTools, noTools])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

interface LastRunRow {
  readonly name: string
  readonly onMaxRuns: MaxRunsPolicy.Policy
}

const handlerCalls: Array<MaxRunsPolicy.Info> = []
const lastRunRows: ReadonlyArray<LastRunRow> = [
  { name: "\"fail\"", onMaxRuns: "fail" },
  { name: "\"stop\"", onMaxRuns: "stop" },
  { name: "\"final-answer\"", onMaxRuns: "final-answer" },
  {
    name: "a handler",
    onMaxRuns: (chain, info) =>
      Effect.sync(() => {
        handlerCalls.push(info)
        return new Outcome.Ok(chain, "max-runs", "handler ran")
      })
  }
]

describe("a final answer on the last allowed run is success, not a policy trigger", () => {
  for (const row of lastRunRows) {
    it.effect(`onMaxRuns ${row.name}: Ok done after exactly maxRuns calls`, () =>
      Effect.gen(function*() {
        handlerCalls.length = 0
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "lookup", params: { query: "q1" } }] },
          { text: "Answered on run 2." },
          { text: "never reached" }
        ])
        const handlers = makeHandlers()
        const outcome = asOk(
          yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, maxRuns: 2, onMaxRuns: row.onMaxRuns }).pipe(
            Effect.provide([model.layer, handlers.layer])
          )
        )
        expect(outcome.reason).toBe("done")
        expect(outcome.extra).toBeUndefined()
        expect(model.calls).toBe(2)
        expect(offered(model)).toEqual([withTools, withTools])
        expect(handlerCalls).toEqual([])
        expect(outcome.chain.runCount).toBe(2)
        expect(transcript(outcome.chain.messages)).toEqual([...twoLookups.slice(0, 4), "assistant: Answered on run 2."])
      }))
  }
})

interface InvalidRow {
  readonly name: string
  readonly value: unknown
  readonly got: string
}

const invalidRows: ReadonlyArray<InvalidRow> = [
  { name: "an unknown string", value: "explode", got: "\"explode\"" },
  { name: "a number", value: 5, got: "5" },
  { name: "FinalAnswer without instruction", value: { _tag: "FinalAnswer" }, got: "{\"_tag\":\"FinalAnswer\"}" },
  {
    name: "FinalAnswer with a non-string instruction",
    value: { _tag: "FinalAnswer", instruction: 7 },
    got: "{\"_tag\":\"FinalAnswer\",\"instruction\":7}"
  },
  { name: "null", value: null, got: "null" }
]

describe("an invalid onMaxRuns fails with InvalidInput before any model call", () => {
  for (const row of invalidRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted(turns(5, toolCaller()))
        const handlers = makeHandlers()
        const chain = userChain()
        // deliberately ill-typed, as from untyped (JavaScript or JSON) configuration
        const onMaxRuns = row.value as MaxRunsPolicy.Policy
        const error = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 2, onMaxRuns }).pipe(
          Effect.provide([model.layer, handlers.layer]),
          Effect.flip
        )
        expect(error._tag).toBe("RunError")
        expect(error.reason._tag).toBe("InvalidInput")
        expect(error.reason).toBeInstanceOf(LoopError.InvalidInput)
        expect(error.message).toBe(
          `Invalid onMaxRuns: must be "fail", "stop", "final-answer", MaxRunsPolicy.finalAnswer(text) or a handler function (got ${row.got})`
        )
        expect(error.chain).toBe(chain)
        expect(model.calls).toBe(0)
        expect(handlers.calls.lookup).toBe(0)
      }))
  }
})

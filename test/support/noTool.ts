/**
 * Fixtures of the no-tool policy tests (test/NoToolPolicy*.test.ts), after Langroid's
 * `test_handle_llm_no_tool`: the tools, scripted answers with and without tool calls, and the
 * expectations each row of the table is checked against.
 */
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, NoToolPolicy, Outcome } from "../../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures: Langroid's test_handle_llm_no_tool, adapted
//   user "1" → model calls sum({x:1,y:2}) → handler "3" → model answers "4" (no tool)
// -----------------------------------------------------------------------------

export const Sum = Tool.make("sum", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ x: Schema.Number, y: Schema.Number }),
  success: Schema.String
})
/** The "finish" tool, as Langroid's Done tools. */
export const FinalAnswer = Tool.make("final_answer", {
  description: "Gives the final answer",
  parameters: Schema.Struct({ answer: Schema.Number }),
  success: Schema.Number
})

export const toolkit = Toolkit.make(Sum, FinalAnswer)

/** Fresh handlers (and call counters) per test. */
export const makeHandlers = () => {
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

export const langroidChain = () => Chain.make({ system: "You add numbers.", user: "1", toolkit })

export const sumTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "sum", params: { x: 1, y: 2 } }] }
export const fourTurn: ChatModel.ScriptedReply = { text: "4" }
export const finalTurn = (answer: number): ChatModel.ScriptedReply => ({
  toolCalls: [{ name: "final_answer", params: { answer } }]
})

/** A one-line summary of a message: `role: part | part`. */
export const describeMessage = (message: Prompt.Message | undefined): string => {
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

export const lastMessages = (chain: Chain.Chain, n: number): ReadonlyArray<string> =>
  chain.messages.slice(-n).map(describeMessage)

/** The last message of every request the model received, oldest first. */
export const sentLast = (model: ChatModel.ScriptedModel): ReadonlyArray<string> =>
  model.requests.map((request) => describeMessage(request.prompt.content.at(-1)))

export const toolResult = (id: string, name: string, value: unknown) => ({
  id,
  name,
  isFailure: false,
  result: value,
  encoded: value
})

export const reminderFinal = NoToolPolicy.reminderFor(["final_answer"])

export const sumCall = "assistant: call sum {\"x\":1,\"y\":2}"
export const sumResult = "tool: result sum \"3\""

// -----------------------------------------------------------------------------
// Expectations
// -----------------------------------------------------------------------------

export type Expected =
  | { readonly _tag: "Ok"; readonly reason: Outcome.OkReason; readonly extra: unknown }
  | { readonly _tag: "Pause"; readonly reason: Outcome.PauseReason }
  | { readonly _tag: "Error"; readonly reason: string; readonly message: string }

export type Ended = Outcome.Final | LoopError.RunError

export const runEnded = <R>(effect: Effect.Effect<Outcome.Final, LoopError.RunError, R>): Effect.Effect<Ended, never, R> =>
  Effect.map(Effect.result(effect), (result) => result._tag === "Success" ? result.success : result.failure)

/** Asserts the outcome (or the run's error) and returns its chain. */
export const checkEnded = (ended: Ended, expected: Expected): Chain.Chain => {
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

/**
 * Fixtures of the priority tests (test/scenarios/Priority.test.ts, test/StopSignal.test.ts):
 * every condition of the priority table has a tool, in a TO_LLM and an IMMEDIATE flavour (`*_now`),
 * with handlers that can raise a stop, mark a direct return or wait for approval or an external result.
 */
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
Chain,DirectReturn,
ExternalTool,Outcome,
ReturnBehavior,
StopSignal
} from "../../src/index.ts"
import type { ToolCall } from "../../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
//
// Every condition of the priority table has a tool, in a TO_LLM and an
// IMMEDIATE flavour (`*_now`), so a round can be "all IMMEDIATE" whatever else
// it contains:
// - note / note_now: a plain local tool; in rows with a stop, its handler
//   raises the run's StopSignal (the stop is raised during the round).
// - review / review_now: needs approval.
// - browse / browse_now: external (no handler).
// - answer / answer_now: its handler marks its result as the final answer.
// -----------------------------------------------------------------------------

export const Topic = Schema.Struct({ topic: Schema.String })
export const Url = Schema.Struct({ url: Schema.String })

export const immediate = <T extends Tool.Any>(tool: T): T => tool.annotate(ReturnBehavior.Annotation, "IMMEDIATE") as T

export const Note = Tool.make("note", { parameters: Topic, success: Schema.String })
export const NoteNow = immediate(Tool.make("note_now", { parameters: Topic, success: Schema.String }))
export const Review = Tool.make("review", { parameters: Topic, success: Schema.String, needsApproval: true })
export const ReviewNow = immediate(Tool.make("review_now", { parameters: Topic, success: Schema.String, needsApproval: true }))
export const Answer = Tool.make("answer", { parameters: Topic, success: Schema.String })
export const AnswerNow = immediate(Tool.make("answer_now", { parameters: Topic, success: Schema.String }))
export const Browse = Tool.make("browse", { parameters: Url, success: Schema.String })
export const BrowseNow = immediate(Tool.make("browse_now", { parameters: Url, success: Schema.String }))

export const local = Toolkit.make(Note, NoteNow, Review, ReviewNow, Answer, AnswerNow)
export const toolkit = Toolkit.merge(local, Toolkit.make(ExternalTool.mark(Browse), ExternalTool.mark(BrowseNow)))
export const allToolNames = ["answer", "answer_now", "browse", "browse_now", "note", "note_now", "review", "review_now"]

export type ToolName = "note" | "note_now" | "review" | "review_now" | "answer" | "answer_now" | "browse" | "browse_now"

export const paramsOf = (name: ToolName): { readonly topic: string } | { readonly url: string } => {
  switch (name) {
    case "note":
    case "note_now":
      return { topic: "notes" }
    case "review":
    case "review_now":
      return { topic: "plan" }
    case "answer":
    case "answer_now":
      return { topic: "life" }
    case "browse":
    case "browse_now":
      return { url: "https://example.com" }
  }
}

export const isNote = (name: string) => name === "note" || name === "note_now"
export const isReview = (name: string) => name === "review" || name === "review_now"
export const isAnswer = (name: string) => name === "answer" || name === "answer_now"

export const rejectedText = (name: string) => `Tool call '${name}' was rejected by a human reviewer.`

/** What the model is shown for each call of a table round. */
export const expectedResult = (name: string, rejected: boolean): string =>
  isNote(name)
    ? "noted notes"
    : isReview(name)
    ? (rejected ? rejectedText(name) : "reviewed plan")
    : isAnswer(name)
    ? "answer about life"
    : "page of https://example.com"

export type Counts = Record<"note" | "note_now" | "review" | "review_now" | "answer" | "answer_now", number>

/** Fresh handlers and call counters; `raiseStop`: the note handlers raise `stop`. */
export const makeHandlers = (stop: StopSignal.StopSignal | undefined, raiseStop: boolean) => {
  const counts: Counts = { note: 0, note_now: 0, review: 0, review_now: 0, answer: 0, answer_now: 0 }
  const note = (name: "note" | "note_now") => ({ topic }: { readonly topic: string }) =>
    Effect.gen(function*() {
      counts[name]++
      if (raiseStop && stop !== undefined) yield* StopSignal.request(stop)
      return `noted ${topic}`
    })
  const review = (name: "review" | "review_now") => ({ topic }: { readonly topic: string }) =>
    Effect.sync(() => {
      counts[name]++
      return `reviewed ${topic}`
    })
  const answer = (name: "answer" | "answer_now") => ({ topic }: { readonly topic: string }) =>
    Effect.gen(function*() {
      counts[name]++
      return yield* DirectReturn.final(`answer about ${topic}`)
    })
  const layer = local.toLayer({
    note: note("note"),
    note_now: note("note_now"),
    review: review("review"),
    review_now: review("review_now"),
    answer: answer("answer"),
    answer_now: answer("answer_now")
  })
  return { counts, layer }
}

export const system = "You are careful."
export const user = "Do the work."
/**
 * Typed as the erased `Chain`: a chain typed with the merged toolkit makes
 * `Chain.run` ask for handlers of the external tools too (`HandlersOf` does
 * not leave out `ExternalTool.External` tools).
 */
export const freshChain = (): Chain.Chain => Chain.make({ system, user, toolkit })

export const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") {
    throw new globalThis.Error(`expected Ok, got Pause ${JSON.stringify(outcome.reason)}`)
  }
  return outcome
}

export const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got Ok ${outcome.reason}`)
  return outcome
}

export const asResults = (extra: unknown): ReadonlyArray<ToolCall.ToolResult> => {
  if (!Array.isArray(extra)) throw new globalThis.Error(`expected the round's results as extra, got ${String(extra)}`)
  return extra as ReadonlyArray<ToolCall.ToolResult>
}

export const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") {
    throw new globalThis.Error(`expected a tool message, got ${message?.role ?? "nothing"}`)
  }
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

export const toolCallParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolCallPart> => {
  if (message === undefined || message.role !== "assistant") {
    throw new globalThis.Error(`expected an assistant message, got ${message?.role ?? "nothing"}`)
  }
  return message.content.filter((part): part is Prompt.ToolCallPart => part.type === "tool-call")
}

export const lastRole = (chain: Chain.Chain) => chain.messages[chain.messages.length - 1]?.role

/**
 * Every call of the round is accounted for exactly once: either the round is
 * written (the last message is the tool message with a result per call, in
 * call order) or it is open (each call is pending or has a result waiting in
 * `roundResults`).
 */
export const expectRoundAccounted = (chain: Chain.Chain, calls: ReadonlyArray<ToolCall.ToolCall>) => {
  const ids = calls.map((call) => call.id)
  if (lastRole(chain) === "tool") {
    expect(toolResultParts(chain.messages[chain.messages.length - 1]).map((part) => part.id)).toEqual(ids)
    expect(chain.pendingToolCalls).toEqual([])
    expect(chain.roundResults).toEqual([])
    expect(chain.callStates).toEqual(new Map())
  } else {
    expect(toolCallParts(chain.messages[chain.messages.length - 1]).map((part) => part.id)).toEqual(ids)
    const pending = chain.pendingToolCalls.map((call) => call.id)
    const done = chain.roundResults.map((result) => result.id)
    expect([...pending, ...done].sort()).toEqual([...ids].sort())
    for (const id of pending) expect(chain.callStates.get(id)).toBeDefined()
  }
}

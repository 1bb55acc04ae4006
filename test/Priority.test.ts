import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  ExternalTool,
  LoopError,
  Mode,
  Outcome,
  ReturnBehavior,
  StopSignal
} from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"

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

const Topic = Schema.Struct({ topic: Schema.String })
const Url = Schema.Struct({ url: Schema.String })

const immediate = <T extends Tool.Any>(tool: T): T => tool.annotate(ReturnBehavior.Annotation, "IMMEDIATE") as T

const Note = Tool.make("note", { parameters: Topic, success: Schema.String })
const NoteNow = immediate(Tool.make("note_now", { parameters: Topic, success: Schema.String }))
const Review = Tool.make("review", { parameters: Topic, success: Schema.String, needsApproval: true })
const ReviewNow = immediate(Tool.make("review_now", { parameters: Topic, success: Schema.String, needsApproval: true }))
const Answer = Tool.make("answer", { parameters: Topic, success: Schema.String })
const AnswerNow = immediate(Tool.make("answer_now", { parameters: Topic, success: Schema.String }))
const Browse = Tool.make("browse", { parameters: Url, success: Schema.String })
const BrowseNow = immediate(Tool.make("browse_now", { parameters: Url, success: Schema.String }))

const local = Toolkit.make(Note, NoteNow, Review, ReviewNow, Answer, AnswerNow)
const toolkit = Toolkit.merge(local, Toolkit.make(ExternalTool.mark(Browse), ExternalTool.mark(BrowseNow)))
const allToolNames = ["answer", "answer_now", "browse", "browse_now", "note", "note_now", "review", "review_now"]

type ToolName = "note" | "note_now" | "review" | "review_now" | "answer" | "answer_now" | "browse" | "browse_now"

const paramsOf = (name: ToolName): { readonly topic: string } | { readonly url: string } => {
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

const isNote = (name: string) => name === "note" || name === "note_now"
const isReview = (name: string) => name === "review" || name === "review_now"
const isAnswer = (name: string) => name === "answer" || name === "answer_now"

const rejectedText = (name: string) => `Tool call '${name}' was rejected by a human reviewer.`

/** What the model is shown for each call of a table round. */
const expectedResult = (name: string, rejected: boolean): string =>
  isNote(name)
    ? "noted notes"
    : isReview(name)
    ? (rejected ? rejectedText(name) : "reviewed plan")
    : isAnswer(name)
    ? "answer about life"
    : "page of https://example.com"

type Counts = Record<"note" | "note_now" | "review" | "review_now" | "answer" | "answer_now", number>

/** Fresh handlers and call counters; `raiseStop`: the note handlers raise `stop`. */
const makeHandlers = (stop: StopSignal.StopSignal | undefined, raiseStop: boolean) => {
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

const system = "You are careful."
const user = "Do the work."
/**
 * Typed as the erased `Chain`: a chain typed with the merged toolkit makes
 * `Chain.run` ask for handlers of the external tools too (`HandlersOf` does
 * not leave out `ExternalTool.External` tools).
 */
const freshChain = (): Chain.Chain => Chain.make({ system, user, toolkit })

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") {
    throw new globalThis.Error(`expected Ok, got Pause ${JSON.stringify(outcome.reason)}`)
  }
  return outcome
}

const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got Ok ${outcome.reason}`)
  return outcome
}

const asResults = (extra: unknown): ReadonlyArray<ToolCall.ToolResult> => {
  if (!Array.isArray(extra)) throw new globalThis.Error(`expected the round's results as extra, got ${String(extra)}`)
  return extra as ReadonlyArray<ToolCall.ToolResult>
}

const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") {
    throw new globalThis.Error(`expected a tool message, got ${message?.role ?? "nothing"}`)
  }
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

const toolCallParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolCallPart> => {
  if (message === undefined || message.role !== "assistant") {
    throw new globalThis.Error(`expected an assistant message, got ${message?.role ?? "nothing"}`)
  }
  return message.content.filter((part): part is Prompt.ToolCallPart => part.type === "tool-call")
}

const lastRole = (chain: Chain.Chain) => chain.messages[chain.messages.length - 1]?.role

/**
 * Every call of the round is accounted for exactly once: either the round is
 * written (the last message is the tool message with a result per call, in
 * call order) or it is open (each call is pending or has a result waiting in
 * `roundResults`).
 */
const expectRoundAccounted = (chain: Chain.Chain, calls: ReadonlyArray<ToolCall.ToolCall>) => {
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

// -----------------------------------------------------------------------------
// 1. The priority table
// -----------------------------------------------------------------------------

type Expected =
  | { readonly pause: "StopRequested" }
  | { readonly pause: "ApprovalPending"; readonly calls: ReadonlyArray<ToolName> }
  | { readonly pause: "ExternalPending"; readonly calls: ReadonlyArray<ToolName> }
  | { readonly ok: "direct-return" | "return-behavior" | "done" }

interface Row {
  readonly name: string
  /** The tool calls of the one model turn, in call order. */
  readonly calls: ReadonlyArray<ToolName>
  /** The note handler raises the stop signal during the round. */
  readonly stop: boolean
  /** How the approval pause is answered (default: approve). */
  readonly decide?: "reject"
  /** The outcomes, run after run, resuming after each pause. */
  readonly outcomes: ReadonlyArray<Expected>
}

const Stop: Expected = { pause: "StopRequested" }
const approvals = (...calls: ReadonlyArray<ToolName>): Expected => ({ pause: "ApprovalPending", calls })
const externals = (...calls: ReadonlyArray<ToolName>): Expected => ({ pause: "ExternalPending", calls })
const DirectReturned: Expected = { ok: "direct-return" }
const ReturnBehaviorOk: Expected = { ok: "return-behavior" }
const Done: Expected = { ok: "done" }

// Columns: S = stop raised during the round, A = a call needing approval,
// E = a call to an external tool, D = a handler marking direct return,
// I = every tool of the round IMMEDIATE.
const rows: ReadonlyArray<Row> = [
  // nothing, then each condition alone
  { name: "-----: plain round → Ok done after a further model turn", calls: ["note"], stop: false, outcomes: [Done] },
  { name: "S----: stop → Pause StopRequested, then done", calls: ["note"], stop: true, outcomes: [Stop, Done] },
  {
    name: "-A---: approval → Pause ApprovalPending [review], then done",
    calls: ["review", "note"],
    stop: false,
    outcomes: [approvals("review"), Done]
  },
  {
    name: "--E--: external → Pause ExternalPending [browse], then done",
    calls: ["note", "browse"],
    stop: false,
    outcomes: [externals("browse"), Done]
  },
  { name: "---D-: direct return → Ok direct-return", calls: ["note", "answer"], stop: false, outcomes: [DirectReturned] },
  { name: "----I: IMMEDIATE → Ok return-behavior", calls: ["note_now"], stop: false, outcomes: [ReturnBehaviorOk] },
  // every pair
  {
    name: "SA---: stop > approval",
    calls: ["review", "note"],
    stop: true,
    outcomes: [Stop, approvals("review"), Done]
  },
  {
    name: "S-E--: stop > external",
    calls: ["browse", "note"],
    stop: true,
    outcomes: [Stop, externals("browse"), Done]
  },
  { name: "S--D-: stop > direct return", calls: ["answer", "note"], stop: true, outcomes: [Stop, DirectReturned] },
  { name: "S---I: stop > return behavior", calls: ["note_now"], stop: true, outcomes: [Stop, ReturnBehaviorOk] },
  {
    name: "-AE--: approval > external (the external call comes first in call order)",
    calls: ["browse", "review", "note"],
    stop: false,
    outcomes: [approvals("review"), externals("browse"), Done]
  },
  {
    name: "-A-D-: approval > direct return",
    calls: ["answer", "review", "note"],
    stop: false,
    outcomes: [approvals("review"), DirectReturned]
  },
  {
    name: "-A--I: approval > return behavior",
    calls: ["review_now", "note_now"],
    stop: false,
    outcomes: [approvals("review_now"), ReturnBehaviorOk]
  },
  {
    name: "--ED-: external > direct return",
    calls: ["note", "browse", "answer"],
    stop: false,
    outcomes: [externals("browse"), DirectReturned]
  },
  {
    name: "--E-I: external > return behavior",
    calls: ["browse_now", "note_now"],
    stop: false,
    outcomes: [externals("browse_now"), ReturnBehaviorOk]
  },
  {
    name: "---DI: direct return > return behavior",
    calls: ["note_now", "answer_now"],
    stop: false,
    outcomes: [DirectReturned]
  },
  // triples, quadruples, all on
  {
    name: "SAE--: stop > approval > external",
    calls: ["review", "browse", "note"],
    stop: true,
    outcomes: [Stop, approvals("review"), externals("browse"), Done]
  },
  {
    name: "-AED-: approval > external > direct return",
    calls: ["answer", "browse", "review", "note"],
    stop: false,
    outcomes: [approvals("review"), externals("browse"), DirectReturned]
  },
  {
    name: "S--DI: stop > direct return > return behavior",
    calls: ["answer_now", "note_now"],
    stop: true,
    outcomes: [Stop, DirectReturned]
  },
  {
    name: "-AE-I: approval > external > return behavior",
    calls: ["review_now", "browse_now", "note_now"],
    stop: false,
    outcomes: [approvals("review_now"), externals("browse_now"), ReturnBehaviorOk]
  },
  {
    name: "SAE-I: stop > approval > external > return behavior",
    calls: ["note_now", "browse_now", "review_now"],
    stop: true,
    outcomes: [Stop, approvals("review_now"), externals("browse_now"), ReturnBehaviorOk]
  },
  {
    name: "-AEDI: approval > external > direct return > return behavior",
    calls: ["review_now", "browse_now", "answer_now", "note_now"],
    stop: false,
    outcomes: [approvals("review_now"), externals("browse_now"), DirectReturned]
  },
  {
    name: "SAEDI: all on → stop, then approval, then external, then direct return",
    calls: ["review_now", "browse_now", "answer_now", "note_now"],
    stop: true,
    outcomes: [Stop, approvals("review_now"), externals("browse_now"), DirectReturned]
  },
  // a rejected approval blocks the early returns
  {
    name: "-A-D- rejected: a rejection blocks direct return → done",
    calls: ["answer", "review", "note"],
    stop: false,
    decide: "reject",
    outcomes: [approvals("review"), Done]
  },
  {
    name: "-A--I rejected: a rejection blocks return behavior → done",
    calls: ["review_now", "note_now"],
    stop: false,
    decide: "reject",
    outcomes: [approvals("review_now"), Done]
  },
  {
    name: "SAEDI rejected: stop, approval, external, then done",
    calls: ["review_now", "browse_now", "answer_now", "note_now"],
    stop: true,
    decide: "reject",
    outcomes: [Stop, approvals("review_now"), externals("browse_now"), Done]
  }
]

/** The calls the model makes in a row's turn (default ids `call_1_{i}`). */
const callsOf = (row: Row): ReadonlyArray<ToolCall.ToolCall> =>
  row.calls.map((name, i) => ({ id: `call_1_${i + 1}`, name, params: paramsOf(name) }))

const callsNamed = (
  calls: ReadonlyArray<ToolCall.ToolCall>,
  names: ReadonlyArray<ToolName>
): ReadonlyArray<ToolCall.ToolCall> => names.map((name) => calls.find((call) => call.name === name)!)

/** How a mode ends a plain round (no early return). */
interface ModeSpec {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  /** `step` mode: the first run is the model turn alone. */
  readonly modelStepFirst?: true
  /**
   * Asserts the end of a plain round; `rejected`: the row rejected its
   * approval; `afterStop`: the previous run paused for the stop.
   */
  readonly plainEnd: (outcome: Outcome.Final, context: PlainEndContext) => void
}

interface PlainEndContext {
  readonly model: ChatModel.ScriptedModel
  readonly calls: ReadonlyArray<ToolCall.ToolCall>
  readonly rejected: boolean
  readonly afterStop: boolean
}

/** The request after the round carries the whole round, in call order. */
const expectRoundSentToModel = (
  model: ChatModel.ScriptedModel,
  calls: ReadonlyArray<ToolCall.ToolCall>,
  rejected: boolean
) => {
  expect(model.calls).toBe(2)
  const prompt = model.requests[1].prompt.content
  expect(prompt.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"])
  expect(toolCallParts(prompt[2]).map((part) => [part.id, part.name, part.params])).toEqual(
    calls.map((call) => [call.id, call.name, call.params])
  )
  expect(toolResultParts(prompt[3]).map((part) => [part.id, part.name, part.result, part.isFailure])).toEqual(
    calls.map((call) => [call.id, call.name, expectedResult(call.name, rejected), false])
  )
}

const whileNeedsResponse: ModeSpec = {
  name: "whileNeedsResponse",
  mode: Mode.whileNeedsResponse,
  plainEnd: (outcome, { calls, model, rejected }) => {
    const ok = asOk(outcome)
    expect(ok.reason).toBe("done")
    expect(ok.extra).toBeUndefined()
    expect(Chain.text(ok.chain)).toBe("Final answer.")
    expect(ok.chain.runCount).toBe(2)
    expectRoundSentToModel(model, calls, rejected)
  }
}

const untilSuccess: ModeSpec = {
  name: "untilSuccess",
  mode: Mode.untilSuccess,
  plainEnd: (outcome, { calls, model, rejected }) => {
    const ok = asOk(outcome)
    if (rejected) {
      // a rejected call is not a success: the model gets its turn
      expect(ok.reason).toBe("done")
      expect(Chain.text(ok.chain)).toBe("Final answer.")
      expectRoundSentToModel(model, calls, rejected)
    } else {
      expect(ok.reason).toBe("tools-succeeded")
      expect(model.calls).toBe(1)
      expect(lastRole(ok.chain)).toBe("tool")
    }
  }
}

const untilNoteUsed: ModeSpec = {
  name: "untilToolUsed(note, note_now)",
  mode: Mode.untilToolUsed(["note", "note_now"]),
  plainEnd: (outcome, { calls, model }) => {
    const ok = asOk(outcome)
    expect(ok.reason).toBe("tool-used")
    const noteCall = calls.find((call) => isNote(call.name))!
    const result = ok.extra as ToolCall.ToolResult
    expect([result.id, result.name, result.encoded, result.isFailure]).toEqual([
      noteCall.id,
      noteCall.name,
      "noted notes",
      false
    ])
    expect(model.calls).toBe(1)
    expect(lastRole(ok.chain)).toBe("tool")
  }
}

const step: ModeSpec = {
  name: "step",
  mode: Mode.step,
  modelStepFirst: true,
  plainEnd: (outcome, { afterStop, calls, model, rejected }) => {
    const ok = asOk(outcome)
    expect(ok.reason).toBe("step")
    expect(ok.extra).toBeUndefined()
    if (afterStop) {
      // the round was written before the stop: the next step is the model turn
      expect(Chain.text(ok.chain)).toBe("Final answer.")
      expectRoundSentToModel(model, calls, rejected)
    } else {
      // this step ran (or completed) the round; the model turn is the next step
      expect(model.calls).toBe(1)
      expect(lastRole(ok.chain)).toBe("tool")
      expect(ok.chain.needsResponse).toBe(true)
      expect(toolResultParts(ok.chain.messages[ok.chain.messages.length - 1]).map((part) => part.result)).toEqual(
        calls.map((call) => expectedResult(call.name, rejected))
      )
    }
  }
}

/**
 * Runs a row's script in a mode: one model turn with the row's calls (and a
 * text turn after it), then run after run, resuming each pause (clear the
 * stop, approve or reject, supply), asserting each outcome of the row.
 */
const walk = (row: Row, spec: ModeSpec) =>
  Effect.gen(function*() {
    const stop = yield* StopSignal.make
    const calls = callsOf(row)
    const model = ChatModel.scripted([
      { toolCalls: calls.map(({ id, name, params }) => ({ id, name, params })) },
      { text: "Final answer." }
    ])
    const handlers = makeHandlers(stop, row.stop)
    const rejected = row.decide === "reject"
    const program = Effect.gen(function*() {
      let chain: Chain.Chain = freshChain()
      if (spec.modelStepFirst === true) {
        const first = asOk(yield* Chain.run(chain, { mode: spec.mode, stop }))
        expect(first.reason).toBe("step")
        expect(model.calls).toBe(1)
        expect(first.chain.pendingToolCalls).toEqual(calls)
        expect(Object.values(handlers.counts).every((count) => count === 0)).toBe(true)
        chain = first.chain
      }
      for (let index = 0; index < row.outcomes.length; index++) {
        const expected = row.outcomes[index]
        const outcome: Outcome.Final = yield* Chain.run(chain, { mode: spec.mode, stop })
        // the first request: the conversation so far and every tool on offer
        expect(model.requests[0].prompt.content.map((message) => message.role)).toEqual(["system", "user"])
        expect(model.requests[0].tools.map((tool) => tool.name).sort()).toEqual(allToolNames)
        if ("pause" in expected) {
          const paused = asPause(outcome)
          expect(paused.reason._tag).toBe(expected.pause)
          expect(model.calls).toBe(1)
          expectRoundAccounted(paused.chain, calls)
          switch (expected.pause) {
            case "StopRequested": {
              expect(paused.reason).toEqual({ _tag: "StopRequested" })
              expect(yield* StopSignal.isRequested(stop)).toBe(true)
              yield* StopSignal.clear(stop)
              chain = paused.chain
              break
            }
            case "ApprovalPending": {
              const waiting = callsNamed(calls, expected.calls)
              expect(paused.reason).toEqual({ _tag: "ApprovalPending", calls: waiting })
              expect(Approval.pending(paused.chain)).toEqual(waiting)
              for (const call of waiting) expect(paused.chain.callStates.get(call.id)).toEqual({ _tag: "AwaitingApproval" })
              const decision = rejected ? Approval.reject() : Approval.approve
              chain = yield* Approval.decide(
                paused.chain,
                Object.fromEntries(waiting.map((call) => [call.id, decision]))
              )
              break
            }
            case "ExternalPending": {
              const waiting = callsNamed(calls, expected.calls)
              expect(paused.reason).toEqual({ _tag: "ExternalPending", calls: waiting })
              expect(ExternalTool.pending(paused.chain)).toEqual(waiting)
              expect(Approval.pending(paused.chain)).toEqual([])
              for (const call of waiting) expect(paused.chain.callStates.get(call.id)).toEqual({ _tag: "AwaitingResult" })
              chain = yield* ExternalTool.supply(
                paused.chain,
                Object.fromEntries(waiting.map((call) => [call.id, { result: "page of https://example.com" }]))
              )
              break
            }
          }
          continue
        }
        expect(index).toBe(row.outcomes.length - 1)
        const final = outcome.chain
        expect(final.pendingToolCalls).toEqual([])
        expect(final.roundResults).toEqual([])
        expect(final.callStates).toEqual(new Map())
        if (expected.ok === "done") {
          const previous = row.outcomes[index - 1]
          const afterStop = previous !== undefined && "pause" in previous && previous.pause === "StopRequested"
          spec.plainEnd(outcome, { model, calls, rejected, afterStop })
        } else {
          const ok = asOk(outcome)
          expect(ok.reason).toBe(expected.ok)
          expect(model.calls).toBe(1)
          expect(final.runCount).toBe(1)
          expect(lastRole(final)).toBe("tool")
          // extra: every result of the round, in call order
          const results = asResults(ok.extra)
          expect(results.map((result) => [result.id, result.name, result.encoded, result.isFailure])).toEqual(
            calls.map((call) => [call.id, call.name, expectedResult(call.name, false), false])
          )
          expect(results.map((result) => result.directReturn === true)).toEqual(
            calls.map((call) => expected.ok === "direct-return" && isAnswer(call.name))
          )
          expect(toolResultParts(final.messages[final.messages.length - 1]).map((part) => part.result)).toEqual(
            calls.map((call) => expectedResult(call.name, false))
          )
        }
      }
      // every local call ran exactly once, across all the runs; rejected calls never
      for (const name of ["note", "note_now", "review", "review_now", "answer", "answer_now"] as const) {
        const called = calls.filter((call) => call.name === name).length
        expect(handlers.counts[name]).toBe(isReview(name) && rejected ? 0 : called)
      }
      expect(yield* StopSignal.isRequested(stop)).toBe(false)
    })
    yield* program.pipe(Effect.provide([model.layer, handlers.layer]))
  })

describe("priority table (Mode.whileNeedsResponse): stop > approval > external > direct return > return behavior > continue", () => {
  for (const row of rows) {
    it.effect(row.name, () => walk(row, whileNeedsResponse))
  }
})

describe("the same priority in the other modes", () => {
  for (const spec of [untilSuccess, untilNoteUsed, step]) {
    for (const row of rows) {
      it.effect(`${spec.name} ${row.name}`, () => walk(row, spec))
    }
  }
})

describe("approvals before externals, call by call", () => {
  it.effect("ApprovalPending lists exactly the calls still undecided; externals wait until none is left", () =>
    Effect.gen(function*() {
      const calls: ReadonlyArray<ToolCall.ToolCall> = [
        { id: "call_1_1", name: "browse", params: { url: "https://example.com" } },
        { id: "call_1_2", name: "review", params: { topic: "a" } },
        { id: "call_1_3", name: "review", params: { topic: "b" } },
        { id: "call_1_4", name: "answer", params: { topic: "life" } }
      ]
      const model = ChatModel.scripted([{ toolCalls: calls }, { text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const first = asPause(yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse }))
        expect(first.reason).toEqual({ _tag: "ApprovalPending", calls: [calls[1], calls[2]] })
        expect(handlers.counts.answer).toBe(1)
        expect(first.chain.roundResults.map((result) => result.id)).toEqual(["call_1_4"])

        // deciding one of two: the other is still the reason to pause (approval > external)
        const oneDecided = yield* Approval.decide(first.chain, { call_1_3: Approval.approve })
        const second = asPause(yield* Chain.run(oneDecided, { mode: Mode.whileNeedsResponse }))
        expect(second.reason).toEqual({ _tag: "ApprovalPending", calls: [calls[1]] })
        expect(handlers.counts.review).toBe(1)
        expect(second.chain.roundResults.map((result) => result.id)).toEqual(["call_1_4", "call_1_3"])
        expect(second.chain.callStates).toEqual(new Map(Object.entries({
          call_1_1: { _tag: "AwaitingResult" },
          call_1_2: { _tag: "AwaitingApproval" }
        })))

        const bothDecided = yield* Approval.decide(second.chain, { call_1_2: Approval.approve })
        const third = asPause(yield* Chain.run(bothDecided, { mode: Mode.whileNeedsResponse }))
        expect(third.reason).toEqual({ _tag: "ExternalPending", calls: [calls[0]] })
        expect(handlers.counts.review).toBe(2)

        const supplied = yield* ExternalTool.supply(third.chain, { call_1_1: { result: "page" } })
        const done = asOk(yield* Chain.run(supplied, { mode: Mode.whileNeedsResponse }))
        expect(done.reason).toBe("direct-return")
        expect(asResults(done.extra).map((result) => [result.id, result.encoded, result.directReturn === true])).toEqual([
          ["call_1_1", "page", false],
          ["call_1_2", "reviewed a", false],
          ["call_1_3", "reviewed b", false],
          ["call_1_4", "answer about life", true]
        ])
        expect(model.calls).toBe(1)
        expect(handlers.counts.answer).toBe(1)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

// -----------------------------------------------------------------------------
// 2. The stop signal
// -----------------------------------------------------------------------------

const noteTurn = (id: string, topic: string) => ({ id, name: "note", params: { topic } })

interface BeforeRunRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  /** What the run gives once the signal is cleared (script: a note call, then text). */
  readonly afterClear: { readonly reason: Outcome.OkReason; readonly modelCalls: number; readonly notes: number }
}

const beforeRunRows: ReadonlyArray<BeforeRunRow> = [
  {
    name: "whileNeedsResponse",
    mode: Mode.whileNeedsResponse,
    afterClear: { reason: "done", modelCalls: 2, notes: 1 }
  },
  { name: "untilSuccess", mode: Mode.untilSuccess, afterClear: { reason: "tools-succeeded", modelCalls: 1, notes: 1 } },
  {
    name: "untilToolUsed(note)",
    mode: Mode.untilToolUsed("note"),
    afterClear: { reason: "tool-used", modelCalls: 1, notes: 1 }
  },
  { name: "step", mode: Mode.step, afterClear: { reason: "step", modelCalls: 1, notes: 0 } }
]

describe("StopSignal raised before the run", () => {
  for (const row of beforeRunRows) {
    it.effect(`${row.name}: Pause StopRequested with no model call, again on rerun, and runs once cleared`, () =>
      Effect.gen(function*() {
        const stop = yield* StopSignal.make
        expect(yield* StopSignal.isRequested(stop)).toBe(false)
        yield* StopSignal.request(stop)
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        const model = ChatModel.scripted([{ toolCalls: [noteTurn("n1", "x")] }, { text: "Final answer." }])
        const handlers = makeHandlers(undefined, false)
        yield* Effect.gen(function*() {
          const chain = freshChain()
          const first = asPause(yield* Chain.run(chain, { mode: row.mode, stop }))
          expect(first.reason).toEqual({ _tag: "StopRequested" })
          expect(model.calls).toBe(0)
          expect(first.chain.messages).toEqual(chain.messages)
          expect(first.chain.runCount).toBe(0)
          expect(handlers.counts.note).toBe(0)

          // a raised signal stays raised: the rerun pauses again, still without a model call
          const again = asPause(yield* Chain.run(first.chain, { mode: row.mode, stop }))
          expect(again.reason).toEqual({ _tag: "StopRequested" })
          expect(model.calls).toBe(0)
          expect(yield* Chain.encode(again.chain)).toEqual(yield* Chain.encode(first.chain))
          // the paused chain remembers where its run's maxRuns budget started (see Resume tests)
          expect(again.chain.modeState).toEqual({ "loopwork/budgetStart": 0 })

          yield* StopSignal.clear(stop)
          const resumed = asOk(yield* Chain.run(again.chain, { mode: row.mode, stop }))
          expect(resumed.reason).toBe(row.afterClear.reason)
          expect(model.calls).toBe(row.afterClear.modelCalls)
          expect(handlers.counts.note).toBe(row.afterClear.notes)
          expect(model.requests[0].prompt.content.map((message) => message.role)).toEqual(["system", "user"])
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      }))
  }
})

/** Two note rounds, then a text answer; every model turn takes 1 second. */
const slowScript: ReadonlyArray<ChatModel.ScriptedReply> = [
  { toolCalls: [noteTurn("n1", "a"), noteTurn("n2", "b")], latency: "1 second" },
  { toolCalls: [noteTurn("n3", "c")], latency: "1 second" },
  { text: "All noted.", latency: "1 second" }
]

describe("StopSignal raised while the model call is in flight", () => {
  it.effect("the call's tool calls still run, every call has its result, then Pause; a rerun pauses again", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        expect(model.calls).toBe(1)
        expect(fiber.pollUnsafe()).toBeUndefined()
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("499 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        expect(handlers.counts.note).toBe(0)
        yield* TestClock.adjust("1 millis")
        // done without more time: the loop did not go on to the next (1 second) model call
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        const chain = paused.chain
        expect(chain.runCount).toBe(1)
        expect(chain.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"])
        expect(chain.pendingToolCalls).toEqual([])
        expect(chain.roundResults).toEqual([])
        // every tool call in the chain has its result
        const callIds = chain.messages.flatMap((message) => message.role === "assistant" ? toolCallParts(message) : [])
          .map((part) => part.id)
        const resultIds = chain.messages.flatMap((message) => message.role === "tool" ? toolResultParts(message) : [])
          .map((part) => part.id)
        expect(callIds).toEqual(["n1", "n2"])
        expect(resultIds).toEqual(callIds)
        expect(chain.lastToolResults.map((result) => [result.id, result.encoded])).toEqual([
          ["n1", "noted a"],
          ["n2", "noted b"]
        ])

        // still raised: the rerun pauses at once, without calling the model or the tools
        const again = asPause(yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, stop }))
        expect(again.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        expect(yield* Chain.encode(again.chain)).toEqual(yield* Chain.encode(chain))
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))

  it.effect("after StopSignal.clear the resumed run ends with exactly the chain of an uninterrupted run", () =>
    Effect.gen(function*() {
      // uninterrupted
      const straightModel = ChatModel.scripted(slowScript)
      const straightHandlers = makeHandlers(undefined, false)
      const straight = yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse }).pipe(Effect.forkChild)
        yield* TestClock.adjust("3 seconds")
        return asOk(yield* Fiber.join(fiber))
      }).pipe(Effect.provide([straightModel.layer, straightHandlers.layer]))
      expect(straight.reason).toBe("done")
      expect(straightModel.calls).toBe(3)

      // interrupted during the second model call, then resumed
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      const resumed = yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("1500 millis")
        expect(model.calls).toBe(2)
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("500 millis")
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(2)
        expect(handlers.counts.note).toBe(3)
        expect(paused.chain.messages.map((message) => message.role)).toEqual([
          "system",
          "user",
          "assistant",
          "tool",
          "assistant",
          "tool"
        ])
        expect(paused.chain.lastToolResults.map((result) => result.id)).toEqual(["n3"])

        yield* StopSignal.clear(stop)
        expect(yield* StopSignal.isRequested(stop)).toBe(false)
        const rerun = yield* Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("1 second")
        return asOk(yield* Fiber.join(rerun))
      }).pipe(Effect.provide([model.layer, handlers.layer]))

      expect(resumed.reason).toBe("done")
      expect(model.calls).toBe(3)
      expect(handlers.counts.note).toBe(straightHandlers.counts.note)
      expect(Chain.text(resumed.chain)).toBe("All noted.")
      expect(resumed.chain.runCount).toBe(3)
      expect(yield* Chain.encode(resumed.chain)).toEqual(yield* Chain.encode(straight.chain))
      // the model saw the same conversation on its last turn
      expect(model.requests[2].prompt).toEqual(straightModel.requests[2].prompt)
    }))

  it.effect("a stop raised during a final text answer has nothing to pause: Ok done, the signal stays raised", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      const model = ChatModel.scripted([{ text: "Hello.", latency: "1 second" }, { text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        yield* StopSignal.request(stop)
        yield* TestClock.adjust("500 millis")
        const ok = asOk(yield* Fiber.join(fiber))
        expect(ok.reason).toBe("done")
        expect(Chain.text(ok.chain)).toBe("Hello.")
        expect(model.calls).toBe(1)
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        // the next question pauses before its model call
        const next = asPause(yield* Chain.run(ok.chain.pipe(Chain.addUser("And?")), { mode: Mode.whileNeedsResponse, stop }))
        expect(next.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

describe("StopSignal.fromAbortSignal", () => {
  it.effect("an already aborted signal: the run pauses before any model call", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      controller.abort()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      expect(StopSignal.isStopSignal(stop)).toBe(true)
      expect(yield* StopSignal.isRequested(stop)).toBe(true)
      const model = ChatModel.scripted([{ text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      const paused = asPause(
        yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(paused.reason).toEqual({ _tag: "StopRequested" })
      expect(model.calls).toBe(0)
    }))

  it.effect("a controller never aborted does not stop the run", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      expect(yield* StopSignal.isRequested(stop)).toBe(false)
      const model = ChatModel.scripted([{ toolCalls: [noteTurn("n1", "a")] }, { text: "Final answer." }])
      const handlers = makeHandlers(undefined, false)
      const ok = asOk(
        yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(ok.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(handlers.counts.note).toBe(1)
    }))

  it.effect("abort() while the model call is in flight: the round runs, then Pause; cleared, the run finishes", () =>
    Effect.gen(function*() {
      const controller = new AbortController()
      const stop = StopSignal.fromAbortSignal(controller.signal)
      const model = ChatModel.scripted(slowScript)
      const handlers = makeHandlers(undefined, false)
      yield* Effect.gen(function*() {
        const fiber = yield* Chain.run(freshChain(), { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("500 millis")
        controller.abort()
        expect(yield* StopSignal.isRequested(stop)).toBe(true)
        yield* TestClock.adjust("500 millis")
        expect(fiber.pollUnsafe()).toBeDefined()
        const paused = asPause(yield* Fiber.join(fiber))
        expect(paused.reason).toEqual({ _tag: "StopRequested" })
        expect(model.calls).toBe(1)
        expect(handlers.counts.note).toBe(2)
        expect(paused.chain.pendingToolCalls).toEqual([])
        expect(toolResultParts(paused.chain.messages[paused.chain.messages.length - 1]).map((part) => part.id))
          .toEqual(["n1", "n2"])

        yield* StopSignal.clear(stop)
        const rerun = yield* Chain.run(paused.chain, { mode: Mode.whileNeedsResponse, stop }).pipe(Effect.forkChild)
        yield* TestClock.adjust("2 seconds")
        const ok = asOk(yield* Fiber.join(rerun))
        expect(ok.reason).toBe("done")
        expect(Chain.text(ok.chain)).toBe("All noted.")
        expect(model.calls).toBe(3)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

// -----------------------------------------------------------------------------
// 3. An invalid `stop` option
// -----------------------------------------------------------------------------

interface InvalidStopRow {
  readonly name: string
  readonly value: unknown
  readonly shown: string
}

const invalidStopRows: ReadonlyArray<InvalidStopRow> = [
  { name: "a look-alike object", value: { requested: true }, shown: "{\"requested\":true}" },
  { name: "an AbortSignal (not wrapped with fromAbortSignal)", value: new AbortController().signal, shown: "{}" },
  { name: "a string", value: "stop", shown: "\"stop\"" },
  { name: "a boolean", value: true, shown: "true" },
  { name: "null", value: null, shown: "null" }
]

describe("an invalid stop option", () => {
  for (const row of invalidStopRows) {
    it.effect(`${row.name} → RunError InvalidInput naming stop, before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "never reached" }])
        const handlers = makeHandlers(undefined, false)
        const chain = freshChain()
        const error = yield* Chain.run(chain, {
          mode: Mode.whileNeedsResponse,
          stop: row.value as StopSignal.StopSignal
        }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
        expect(error._tag).toBe("RunError")
        expect(error.reason._tag).toBe("InvalidInput")
        const reason = error.reason
        if (!(reason instanceof LoopError.InvalidInput)) throw new globalThis.Error("expected InvalidInput")
        expect(reason.field).toBe("stop")
        expect(reason.rule).toBe("must be a StopSignal (yield* StopSignal.make)")
        expect(reason.value).toBe(row.value)
        expect(error.message).toBe(`Invalid stop: must be a StopSignal (yield* StopSignal.make) (got ${row.shown})`)
        expect(error.chain).toBe(chain)
        expect(model.calls).toBe(0)
      }))
  }

  it.effect("the StopSignal.make effect itself (not yielded) is rejected too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never reached" }])
      const handlers = makeHandlers(undefined, false)
      const error = yield* Chain.run(freshChain(), {
        mode: Mode.untilSuccess,
        stop: StopSignal.make as unknown as StopSignal.StopSignal
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      expect(error.reason._tag).toBe("InvalidInput")
      expect(error.message.startsWith("Invalid stop: must be a StopSignal (yield* StopSignal.make) (got ")).toBe(true)
      expect(model.calls).toBe(0)
    }))
})

/**
 * The priority of what can end a tool round, as a table over every combination: a stop requested
 * by a human > calls waiting for approval > external calls > a direct return > ReturnBehavior >
 * continue; the same order in every mode, and approvals before externals call by call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
Approval,
Chain,
ChatModel,ExternalTool,Mode,
Outcome,StopSignal
} from "../../src/index.ts"
import type { ToolCall } from "../../src/index.ts"
import {
  allToolNames, paramsOf, isNote, isReview, isAnswer, expectedResult, makeHandlers, freshChain, asOk, asPause,
  asResults, toolResultParts, toolCallParts, lastRole, expectRoundAccounted, type ToolName
} from "../support/priority.ts"

// -----------------------------------------------------------------------------
// The priority table
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

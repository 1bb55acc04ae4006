/**
 * External tools in a round with other rules: approval first, then the external result; once
 * the round is complete the usual early returns apply (direct return, ReturnBehavior, untilToolUsed);
 * and a pending external call survives `Chain.encode` / JSON / `Chain.decode`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
Approval,
Chain,
ChatModel,ExternalTool,Mode,
type Outcome,type ToolCall
} from "../src/index.ts"
import {
  tools, makeHandlers, start, whileNeeds, runWith, asPause, asOk, roles, toolParts, callParts, lastOf,
  onlyPrompt, measureA, measureB, searchResult, pausedOnMeasure, type ResultTuple
} from "./support/externalTool.ts"

// -----------------------------------------------------------------------------
// Approval, then external
// -----------------------------------------------------------------------------

interface ApprovalRow {
  readonly name: string
  readonly decision: Approval.Decision
  /** The params the ExternalPending pause lists; undefined: no such pause. */
  readonly externalParams: unknown
  readonly supplied?: ExternalTool.Supplied
  readonly finalResults: ReadonlyArray<ResultTuple>
  readonly finalCalls: ReadonlyArray<readonly [string, string, unknown]>
}

const approvalTurn: ChatModel.ScriptedReply = {
  toolCalls: [{ name: "search", params: { q: "balance" } }, { name: "transfer", params: { to: "bob", amount: 5 } }]
}
const transferCall: ToolCall.ToolCall = { id: "call_1_2", name: "transfer", params: { to: "bob", amount: 5 } }

const approvalRows: ReadonlyArray<ApprovalRow> = [
  {
    name: "approved: ApprovalPending, then ExternalPending, then the supplied result reaches the model",
    decision: Approval.approve,
    externalParams: { to: "bob", amount: 5 },
    supplied: { result: "1001" },
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", false, "1001"]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "bob", amount: 5 }]]
  },
  {
    name: "edited: ExternalPending lists the edited arguments, and the transcript shows them",
    decision: Approval.edit({ to: "carol", amount: 3 }),
    externalParams: { to: "carol", amount: 3 },
    supplied: { failure: "Bank offline." },
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", true, "Bank offline."]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "carol", amount: 3 }]]
  },
  {
    name: "rejected: never awaits a result; the model is told of the rejection",
    decision: Approval.reject("Not today."),
    externalParams: undefined,
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", false, "Not today."]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "bob", amount: 5 }]]
  }
]

describe("ExternalTool with approval", () => {
  for (const row of approvalRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const handlers = makeHandlers()
        const first = yield* runWith(start(), [approvalTurn], handlers)
        const approval = asPause(first.outcome)
        expect(approval.reason).toEqual({ _tag: "ApprovalPending", calls: [transferCall] })
        expect(approval.chain.callStates).toEqual(new Map(Object.entries({ call_1_2: { _tag: "AwaitingApproval" } })))
        expect(ExternalTool.pending(approval.chain)).toEqual([])
        expect(approval.chain.roundResults.map((result) => result.id)).toEqual(["call_1_1"])
        // a call awaiting approval does not take a result
        const early = yield* ExternalTool.supply(approval.chain, { call_1_2: { result: "1" } }).pipe(Effect.flip)
        expect(early._tag).toBe("CallNotAwaiting")
        expect(early.message).toBe("No call with id 'call_1_2' is awaiting result; awaiting result: (none)")

        const decided = yield* Approval.decide(approval.chain, { call_1_2: row.decision })
        let ready: Chain.Chain = decided
        if (row.externalParams !== undefined && row.supplied !== undefined) {
          const second = yield* runWith(decided, [], handlers)
          expect(second.model.calls).toBe(0)
          const external = asPause(second.outcome)
          const waiting = { id: "call_1_2", name: "transfer", params: row.externalParams }
          expect(external.reason).toEqual({ _tag: "ExternalPending", calls: [waiting] })
          expect(ExternalTool.pending(external.chain)).toEqual([waiting])
          expect(Approval.pending(external.chain)).toEqual([])
          expect(external.chain.callStates).toEqual(new Map(Object.entries({ call_1_2: { _tag: "AwaitingResult" } })))
          ready = yield* ExternalTool.supply(external.chain, { call_1_2: row.supplied })
        }

        const last = yield* runWith(ready, [{ text: "Done." }], handlers)
        const ok = asOk(last.outcome)
        expect(ok.reason).toBe("done")
        const prompt = onlyPrompt(last.model)
        expect(roles(prompt)).toEqual(["system", "user", "assistant", "tool"])
        expect(callParts(prompt[2])).toEqual(row.finalCalls)
        expect(toolParts(prompt[3])).toEqual(row.finalResults)
        expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      }))
  }

  it.effect("approval pauses first while another call awaits a result; that result can be given meanwhile", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const turn: ChatModel.ScriptedReply = {
        toolCalls: [
          { name: "measure", params: { url: "https://a.example" } },
          { name: "transfer", params: { to: "bob", amount: 5 } }
        ]
      }
      const first = yield* runWith(start(), [turn], handlers)
      const approval = asPause(first.outcome)
      const measureCall = { id: "call_1_1", name: "measure", params: { url: "https://a.example" } }
      expect(approval.reason).toEqual({ _tag: "ApprovalPending", calls: [transferCall] })
      expect(approval.chain.callStates).toEqual(new Map(Object.entries({
        call_1_1: { _tag: "AwaitingResult" },
        call_1_2: { _tag: "AwaitingApproval" }
      })))
      expect(ExternalTool.pending(approval.chain)).toEqual([measureCall])

      const measured = yield* ExternalTool.supply(approval.chain, { call_1_1: { result: "4" } })
      expect(Approval.pending(measured)).toEqual([transferCall])
      const approved = yield* Approval.decide(measured, { call_1_2: Approval.approve })

      const second = yield* runWith(approved, [], handlers)
      expect(second.model.calls).toBe(0)
      const external = asPause(second.outcome)
      expect(external.reason).toEqual({ _tag: "ExternalPending", calls: [transferCall] })

      const ready = yield* ExternalTool.supply(external.chain, { call_1_2: { result: "1001" } })
      const last = yield* runWith(ready, [{ text: "Done." }], handlers)
      expect(asOk(last.outcome).reason).toBe("done")
      expect(toolParts(lastOf(onlyPrompt(last.model)))).toEqual([
        ["call_1_1", "measure", false, "4"],
        ["call_1_2", "transfer", false, "1001"]
      ])
      expect(handlers.calls.external).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// Early returns once the round is complete
// -----------------------------------------------------------------------------

interface ReturnRow {
  readonly name: string
  readonly calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>
  readonly supplied: Readonly<Record<string, ExternalTool.Supplied>>
  readonly options?: Chain.RunOptions<ChatModel.ChatModel>
  /** The model's reply after the round, when it gets a turn. */
  readonly answer?: string
  readonly reason: Outcome.OkReason
  readonly extra: unknown
  /** The tool message written for the round. */
  readonly round: ReadonlyArray<ResultTuple>
}

const submitted = (id: string): ToolCall.ToolResult => ({
  id,
  name: "submit",
  isFailure: false,
  result: { receipt: 9 },
  encoded: { receipt: "9" }
})

const returnRows: ReadonlyArray<ReturnRow> = [
  {
    name: "an IMMEDIATE external tool alone: Ok return-behavior with its result, no model call",
    calls: [{ name: "submit", params: { answer: "42" } }],
    supplied: { call_1_1: { result: { receipt: "9" } } },
    reason: "return-behavior",
    extra: [submitted("call_1_1")],
    round: [["call_1_1", "submit", false, { receipt: "9" }]]
  },
  {
    name: "two IMMEDIATE external calls: Ok return-behavior with both results in call order",
    calls: [{ name: "submit", params: { answer: "1" } }, { name: "submit", params: { answer: "2" } }],
    supplied: { call_1_2: { result: { receipt: "9" } }, call_1_1: { result: { receipt: "9" } } },
    reason: "return-behavior",
    extra: [submitted("call_1_1"), submitted("call_1_2")],
    round: [["call_1_1", "submit", false, { receipt: "9" }], ["call_1_2", "submit", false, { receipt: "9" }]]
  },
  {
    name: "an IMMEDIATE external call given a failure: the model answers",
    calls: [{ name: "submit", params: { answer: "42" } }],
    supplied: { call_1_1: { failure: "Form closed." } },
    answer: "I could not submit.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "submit", true, "Form closed."]]
  },
  {
    name: "an IMMEDIATE external call next to a TO_LLM local call: the model answers",
    calls: [{ name: "submit", params: { answer: "42" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: { receipt: "9" } } },
    answer: "Submitted.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "submit", false, { receipt: "9" }], ["call_1_2", "search", false, "found x"]]
  },
  {
    name: "IMMEDIATE_IF_LAST external call last: Ok return-behavior with the round's results",
    calls: [{ name: "search", params: { q: "x" } }, { name: "publish", params: { text: "hi" } }],
    supplied: { call_1_2: { result: "77" } },
    reason: "return-behavior",
    extra: [
      { id: "call_1_1", name: "search", isFailure: false, result: "found x", encoded: "found x" },
      { id: "call_1_2", name: "publish", isFailure: false, result: 77, encoded: "77" }
    ],
    round: [["call_1_1", "search", false, "found x"], ["call_1_2", "publish", false, "77"]]
  },
  {
    name: "IMMEDIATE_IF_LAST external call first: the model answers",
    calls: [{ name: "publish", params: { text: "hi" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: "77" } },
    answer: "Published.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "publish", false, "77"], ["call_1_2", "search", false, "found x"]]
  },
  {
    name: "a direct-return local call and an external result: Ok direct-return once the round is complete",
    calls: [{ name: "finish", params: { note: "n" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { result: "5" } },
    reason: "direct-return",
    extra: [
      { id: "call_1_1", name: "finish", isFailure: false, result: "finished: n", encoded: "finished: n", directReturn: true },
      { id: "call_1_2", name: "measure", isFailure: false, result: 5, encoded: "5" }
    ],
    round: [["call_1_1", "finish", false, "finished: n"], ["call_1_2", "measure", false, "5"]]
  },
  {
    name: "a direct-return local call and an external failure: the model answers",
    calls: [{ name: "finish", params: { note: "n" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { failure: "No browser." } },
    answer: "Partly done.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "finish", false, "finished: n"], ["call_1_2", "measure", true, "No browser."]]
  },
  {
    name: "untilToolUsed(measure): the supplied result ends the loop with Ok tool-used",
    calls: [{ name: "search", params: { q: "x" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { result: "5" } },
    options: { mode: Mode.untilToolUsed("measure") },
    reason: "tool-used",
    extra: { id: "call_1_2", name: "measure", isFailure: false, result: 5, encoded: "5" },
    round: [["call_1_1", "search", false, "found x"], ["call_1_2", "measure", false, "5"]]
  },
  {
    name: "untilToolUsed(measure): a supplied failure does not end the loop; the model answers",
    calls: [{ name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_1: { failure: "No browser." } },
    options: { mode: Mode.untilToolUsed("measure"), noTool: "done" },
    answer: "Cannot measure.",
    reason: "done",
    extra: "Cannot measure.",
    round: [["call_1_1", "measure", true, "No browser."]]
  },
  {
    name: "untilSuccess: a supplied result completes a clean round, Ok tools-succeeded",
    calls: [{ name: "measure", params: { url: "https://a.example" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: "5" } },
    options: { mode: Mode.untilSuccess },
    reason: "tools-succeeded",
    extra: undefined,
    round: [["call_1_1", "measure", false, "5"], ["call_1_2", "search", false, "found x"]]
  }
]

describe("ExternalTool: the usual rules apply once the round is complete", () => {
  for (const row of returnRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const handlers = makeHandlers()
        const options = row.options ?? whileNeeds
        const first = yield* runWith(start(), [{ toolCalls: row.calls }], handlers, options)
        const paused = asPause(first.outcome)
        expect(paused.reason._tag).toBe("ExternalPending")
        expect(ExternalTool.pending(paused.chain).map((call) => call.id)).toEqual(Object.keys(row.supplied).sort())

        const supplied = yield* ExternalTool.supply(paused.chain, row.supplied)
        const turns: ReadonlyArray<ChatModel.ScriptedReply> = row.answer === undefined ? [] : [{ text: row.answer }]
        const { model, outcome } = yield* runWith(supplied, turns, handlers, options)
        const ok = asOk(outcome)
        expect(ok.reason).toBe(row.reason)
        expect(ok.extra).toEqual(row.extra)
        expect(handlers.calls.external).toBe(0)
        if (row.answer === undefined) {
          expect(model.calls).toBe(0)
          expect(toolParts(lastOf(ok.chain.messages))).toEqual(row.round)
        } else {
          expect(model.calls).toBe(1)
          expect(toolParts(lastOf(onlyPrompt(model)))).toEqual(row.round)
          expect(roles(ok.chain.messages)).toEqual(["system", "user", "assistant", "tool", "assistant"])
          expect(Chain.text(ok.chain)).toBe(row.answer)
        }
      }))
  }
})

// -----------------------------------------------------------------------------
// Across encode / JSON / decode
// -----------------------------------------------------------------------------

const roundTrip = (chain: Chain.Chain) =>
  Effect.gen(function*() {
    const json = JSON.stringify(yield* Chain.encode(chain))
    return yield* Chain.decode(json, { toolkit: tools })
  })

const results = { call_1_1: { failure: "The page did not load." }, call_1_3: { result: "7.5" } } as const
const answer: ChatModel.ScriptedReply = { text: "A failed; B is 7.5." }

interface RoundTripRow {
  readonly name: string
  readonly flow: (paused: Chain.Chain) => Effect.Effect<Chain.Chain, unknown>
}

const roundTripRows: ReadonlyArray<RoundTripRow> = [
  {
    name: "encoded while paused, decoded, then supplied",
    flow: (paused) => Effect.flatMap(roundTrip(paused), ExternalTool.supply(results))
  },
  {
    name: "supplied, then encoded and decoded before the run",
    flow: (paused) => Effect.flatMap(ExternalTool.supply(paused, results), roundTrip)
  },
  {
    name: "one result supplied, encoded and decoded, then the other",
    flow: (paused) =>
      ExternalTool.supply(paused, { call_1_3: results.call_1_3 }).pipe(
        Effect.flatMap(roundTrip),
        Effect.flatMap(ExternalTool.supply({ call_1_1: results.call_1_1 }))
      )
  }
]

describe("ExternalTool across Chain.encode / JSON / Chain.decode", () => {
  it.effect("the paused document keeps the awaiting calls and the round's results; decode restores pending", () =>
    Effect.gen(function*() {
      const paused = yield* pausedOnMeasure(makeHandlers())
      const document = yield* Chain.encode(paused)
      expect(document.pendingToolCalls).toEqual([measureA, measureB])
      expect(document.callStates).toEqual({ call_1_1: { _tag: "AwaitingResult" }, call_1_3: { _tag: "AwaitingResult" } })
      expect(document.roundResults).toEqual([
        { id: "call_1_2", name: "search", isFailure: false, encoded: "found page sizes" }
      ])
      const decoded = yield* roundTrip(paused)
      expect(ExternalTool.pending(decoded)).toEqual([measureA, measureB])
      expect(decoded.roundResults).toEqual([searchResult])
      expect(decoded.toolkit).toBe(tools)
    }))

  for (const row of roundTripRows) {
    it.effect(`${row.name}: the same final chain as without the round trip`, () =>
      Effect.gen(function*() {
        // reference: no round trip
        const refHandlers = makeHandlers()
        const refPaused = yield* pausedOnMeasure(refHandlers)
        const refSupplied = yield* ExternalTool.supply(refPaused, results)
        const reference = yield* runWith(refSupplied, [answer], refHandlers)
        const refDocument = yield* Chain.encode(reference.outcome.chain)

        const handlers = makeHandlers()
        const paused = yield* pausedOnMeasure(handlers)
        const ready = yield* row.flow(paused)
        expect(ExternalTool.pending(ready)).toEqual([])
        const resumed = yield* runWith(ready, [answer], handlers)
        const ok = asOk(resumed.outcome)
        expect(ok.reason).toBe("done")
        expect(yield* Chain.encode(ok.chain)).toEqual(refDocument)
        expect(onlyPrompt(resumed.model)).toEqual(onlyPrompt(reference.model))
        expect(toolParts(lastOf(onlyPrompt(resumed.model)))).toEqual([
          ["call_1_1", "measure", true, "The page did not load."],
          ["call_1_2", "search", false, "found page sizes"],
          ["call_1_3", "measure", false, "7.5"]
        ])
        // the typed result is rebuilt from its encoded form
        expect(ok.chain.lastToolResults.map((result) => result.result)).toEqual([
          "The page did not load.",
          "found page sizes",
          7.5
        ])
        expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      }))
  }
})

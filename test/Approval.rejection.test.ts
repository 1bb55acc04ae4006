/**
 * Approval after the decision: a rejected call blocks the early returns of its round (direct
 * return, ReturnBehavior), `rejected: "fail"` ends the run, and pending approvals survive
 * `Chain.encode` / `Chain.decode`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
Approval,
Chain,
ChatModel,Mode,
Outcome
} from "../src/index.ts"
import {
  makeKit, roles, asOk, approvalCalls, resultRows, lastPromptMessage, toolMessageCount, roundTrip, mixedTurn,
  mixedPending
} from "./support/approval.ts"

// -----------------------------------------------------------------------------
// A rejected call blocks early returns; rejected: "fail"
// -----------------------------------------------------------------------------

describe("rejection and the ways a round can end the loop", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly calls: ReadonlyArray<{ readonly name: string; readonly params?: unknown }>
    readonly decision: Approval.Decision
    readonly mode: Mode.Mode<ChatModel.ChatModel>
    readonly options?: Mode.Options
    /** Outcome: ["ok", reason, model calls] or ["fail", error tag]. */
    readonly expected: readonly ["ok", Outcome.OkReason, number] | readonly ["fail", string]
  }> = [
    {
      name: "IMMEDIATE round, approval approved: returns with return-behavior",
      calls: [{ name: "finish" }, { name: "publish" }],
      decision: Approval.approve,
      mode: Mode.whileNeedsResponse,
      expected: ["ok", "return-behavior", 1]
    },
    {
      name: "IMMEDIATE round, approval rejected: no return, the model answers",
      calls: [{ name: "finish" }, { name: "publish" }],
      decision: Approval.reject(),
      mode: Mode.whileNeedsResponse,
      expected: ["ok", "done", 2]
    },
    {
      name: "direct-return round, approval approved: returns with direct-return",
      calls: [{ name: "answer" }, { name: "delete_file", params: { path: "/x" } }],
      decision: Approval.approve,
      mode: Mode.whileNeedsResponse,
      expected: ["ok", "direct-return", 1]
    },
    {
      name: "direct-return round, approval rejected: no return, the model answers",
      calls: [{ name: "answer" }, { name: "delete_file", params: { path: "/x" } }],
      decision: Approval.reject("no"),
      mode: Mode.whileNeedsResponse,
      expected: ["ok", "done", 2]
    },
    {
      name: "untilSuccess, approval approved: tools-succeeded",
      calls: [{ name: "delete_file", params: { path: "/x" } }],
      decision: Approval.approve,
      mode: Mode.untilSuccess,
      expected: ["ok", "tools-succeeded", 1]
    },
    {
      name: "untilSuccess, approval rejected: not a success, the model answers",
      calls: [{ name: "delete_file", params: { path: "/x" } }],
      decision: Approval.reject(),
      mode: Mode.untilSuccess,
      expected: ["ok", "done", 2]
    },
    {
      name: "untilToolUsed(delete_file), approval approved: tool-used",
      calls: [{ name: "delete_file", params: { path: "/x" } }],
      decision: Approval.approve,
      mode: Mode.untilToolUsed("delete_file"),
      expected: ["ok", "tool-used", 1]
    },
    {
      name: "untilToolUsed(delete_file), approval rejected: a rejected call to the watched tool does not end the loop",
      calls: [{ name: "delete_file", params: { path: "/x" } }],
      decision: Approval.reject(),
      mode: Mode.untilToolUsed("delete_file"),
      options: { noTool: "done" },
      expected: ["ok", "done", 2]
    },
    {
      name: "onToolFailure rejected: \"fail\": the run fails with ToolCallFailed after the round is written",
      calls: [{ name: "finish" }, { name: "publish" }],
      decision: Approval.reject("Not now."),
      mode: Mode.whileNeedsResponse,
      options: { onToolFailure: { rejected: "fail" } },
      expected: ["fail", "ToolCallFailed"]
    }
  ]

  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = ChatModel.scripted([{ toolCalls: row.calls }, { text: "Understood." }])
        const options: Mode.Options = row.options ?? {}
        return yield* Effect.gen(function*() {
          const paused = yield* Chain.run(kit.chain, { mode: row.mode, ...options })
          const waiting = approvalCalls(paused)
          expect(waiting.length).toBe(1)
          const awaitingId = waiting[0].id
          const approvalIndex = row.calls.findIndex((call) => call.name === waiting[0].name)
          const decided = yield* Approval.decide(paused.chain, { [awaitingId]: row.decision })
          const result = yield* Effect.result(Chain.run(decided, { mode: row.mode, ...options }))
          const rejected = row.decision._tag === "Reject"
          const ranTools = kit.ran.map((r) => r.tool)
          expect(ranTools).toEqual(
            row.calls.map((call) => call.name).filter((_, i) => !(rejected && i === approvalIndex))
          )
          if (row.expected[0] === "ok") {
            if (result._tag !== "Success") throw new globalThis.Error(`expected success, got ${result.failure.message}`)
            const ok = asOk(result.success)
            expect(ok.reason).toBe(row.expected[1])
            expect(model.calls).toBe(row.expected[2])
            expect(ok.chain.failureCount).toBe(0)
            const round = ok.chain.lastToolResults
            expect(round.map((r) => r.id)).toEqual(row.calls.map((_, i) => `call_1_${i + 1}`))
            expect(round.map((r) => r.rejected === true)).toEqual(row.calls.map((_, i) => rejected && i === approvalIndex))
            if (row.expected[1] === "return-behavior" || row.expected[1] === "direct-return") {
              expect(ok.extra).toEqual(round)
            }
            if (row.expected[1] === "done") expect(Chain.text(ok.chain)).toBe("Understood.")
          } else {
            if (result._tag !== "Failure") throw new globalThis.Error("expected the run to fail")
            const error = result.failure
            expect(error.reason._tag).toBe(row.expected[1])
            expect(error.reason).toMatchObject({ kind: "rejected", callId: awaitingId, tool: waiting[0].name })
            expect(error.message.startsWith(`Tool 'publish' (call ${awaitingId}) failed (rejected): Not now.`)).toBe(true)
            expect(error.message).toContain(`The run's onToolFailure policy for "rejected" is "fail"`)
            expect(model.calls).toBe(1)
            // the round was written first: every call has its result
            expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
            expect(resultRows(error.chain.messages[3])).toEqual([
              ["call_1_1", "finish", false, "finished"],
              ["call_1_2", "publish", false, "Not now."]
            ])
            expect(error.chain.pendingToolCalls).toEqual([])
            expect(error.chain.callStates).toEqual(new Map())
          }
        }).pipe(Effect.provide([model.layer, kit.layer]))
      }))
  }

  // With another call still awaiting approval the round cannot be written; the run fails at once (the
  // user asked to fail on a rejection) and the chain it carries keeps everything: the results produced so
  // far wait in roundResults and the undecided call keeps its state, so the chain can still be resumed.
  it.effect("rejected: \"fail\" with another call still awaiting approval: fails at once, nothing lost, resumable", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn, { text: "Understood." }])
      const options: Mode.Options = { onToolFailure: { rejected: "fail" } }
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse, ...options })
        expect(approvalCalls(paused)).toEqual(mixedPending)
        const partly = yield* Approval.decide(paused.chain, { call_1_1: Approval.reject("Keep the file.") })

        const error = yield* Effect.flip(Chain.run(partly, { mode: Mode.whileNeedsResponse, ...options }))
        expect(error.reason).toMatchObject({ _tag: "ToolCallFailed", kind: "rejected", callId: "call_1_1", tool: "delete_file" })
        expect(error.message).toContain("failed (rejected): Keep the file. The run's onToolFailure policy")
        expect(model.calls).toBe(1)
        const carried = error.chain
        expect(roles(carried)).toEqual(["system", "user", "assistant"])
        expect(Approval.pending(carried)).toEqual([mixedPending[1]])
        expect(carried.roundResults.map((result) => [result.id, result.rejected === true, result.encoded])).toEqual([
          ["call_1_2", false, "found weather"],
          ["call_1_1", true, "Keep the file."]
        ])

        // Resumed without the "fail" policy, the round completes in call order and the model answers.
        const decided = yield* Approval.decide(carried, { call_1_3: Approval.approve })
        const ok = yield* Chain.run(decided, { mode: Mode.whileNeedsResponse })
        expect(ok._tag).toBe("Ok")
        expect(model.calls).toBe(2)
        expect(resultRows(ok.chain.messages[3])).toEqual([
          ["call_1_1", "delete_file", false, "Keep the file."],
          ["call_1_2", "lookup", false, "found weather"],
          ["call_1_3", "transfer", false, "sent 500 to bob"]
        ])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))
})

// -----------------------------------------------------------------------------
// Across Chain.encode / Chain.decode
// -----------------------------------------------------------------------------

describe("approval across Chain.encode / Chain.decode", () => {
  it.effect("the paused chain is JSON: states, pending calls and waiting results survive the round-trip", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn])
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, kit.layer])
      )
      const document = yield* Chain.encode(paused.chain)
      const json: unknown = JSON.parse(JSON.stringify(document))
      expect(json).toMatchObject({
        callStates: { call_1_1: { _tag: "AwaitingApproval" }, call_1_3: { _tag: "AwaitingApproval" } },
        pendingToolCalls: mixedPending,
        roundResults: [{ id: "call_1_2", name: "lookup", isFailure: false, encoded: "found weather" }]
      })
      const restored = yield* Chain.decode(JSON.stringify(document), { toolkit: kit.toolkit, trustUnsignedApprovals: true })
      expect(Approval.pending(restored)).toEqual(mixedPending)
      expect(restored.callStates).toEqual(paused.chain.callStates)
      expect(restored.roundResults).toEqual(paused.chain.roundResults)
      expect(restored.messages).toEqual(paused.chain.messages)
    }))

  it.effect("a rejection waiting in roundResults survives a round-trip between two partial decisions", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn, { text: "Handled." }])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        const partly = yield* Approval.decide(paused.chain, { call_1_1: Approval.reject() })
        const again = yield* Chain.run(partly, { mode: Mode.whileNeedsResponse, maxFailures: 1 })
        expect(approvalCalls(again)).toEqual([mixedPending[1]])

        const restored = yield* roundTrip(again.chain, kit.toolkit)
        expect(Approval.pending(restored)).toEqual([mixedPending[1]])
        expect(restored.roundResults.map((r) => [r.id, r.isFailure, r.rejected === true, r.encoded])).toEqual(
          again.chain.roundResults.map((r) => [r.id, r.isFailure, r.rejected === true, r.encoded])
        )
        expect(restored.roundResults.filter((r) => r.rejected === true).map((r) => r.id)).toEqual(["call_1_1"])

        const decided = yield* Approval.decide(restored, { call_1_3: Approval.approve })
        const done = asOk(yield* Chain.run(decided, { mode: Mode.whileNeedsResponse, maxFailures: 1 }))
        expect(done.reason).toBe("done")
        expect(model.calls).toBe(2)
        expect(kit.ran.map((r) => r.tool)).toEqual(["lookup", "transfer"])
        expect(resultRows(lastPromptMessage(model, 1))).toEqual([
          ["call_1_1", "delete_file", false, "Tool call 'delete_file' was rejected by a human reviewer."],
          ["call_1_2", "lookup", false, "found weather"],
          ["call_1_3", "transfer", false, "sent 500 to bob"]
        ])
        expect(done.chain.lastToolResults.map((r) => [r.id, r.rejected === true])).toEqual([
          ["call_1_1", true],
          ["call_1_2", false],
          ["call_1_3", false]
        ])
        expect(done.chain.failureCount).toBe(0)
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  // Each row decides the mixed round's two calls; with and without a JSON round-trip the run ends the same.
  const rows: ReadonlyArray<{
    readonly name: string
    readonly decisions: Readonly<Record<string, Approval.Decision>>
    /** Round-trip the chain after deciding (too) instead of only before. */
    readonly afterDecide: boolean
    readonly results: ReadonlyArray<readonly [string, string, boolean, unknown]>
  }> = [
    {
      name: "approve both after a round-trip",
      decisions: { call_1_1: Approval.approve, call_1_3: Approval.approve },
      afterDecide: false,
      results: [
        ["call_1_1", "delete_file", false, "deleted /tmp/a"],
        ["call_1_2", "lookup", false, "found weather"],
        ["call_1_3", "transfer", false, "sent 500 to bob"]
      ]
    },
    {
      name: "reject (default text) and reject (message) after a round-trip",
      decisions: { call_1_1: Approval.reject(), call_1_3: Approval.reject("Over the limit.") },
      afterDecide: false,
      results: [
        ["call_1_1", "delete_file", false, "Tool call 'delete_file' was rejected by a human reviewer."],
        ["call_1_2", "lookup", false, "found weather"],
        ["call_1_3", "transfer", false, "Over the limit."]
      ]
    },
    {
      name: "edit and approve after a round-trip",
      decisions: { call_1_1: Approval.approve, call_1_3: Approval.edit({ amount: "75", to: "bob" }) },
      afterDecide: false,
      results: [
        ["call_1_1", "delete_file", false, "deleted /tmp/a"],
        ["call_1_2", "lookup", false, "found weather"],
        ["call_1_3", "transfer", false, "sent 75 to bob"]
      ]
    },
    {
      name: "decisions made before the round-trip (edit and reject) survive it",
      decisions: { call_1_1: Approval.edit({ path: "/tmp/z" }), call_1_3: Approval.reject("No.") },
      afterDecide: true,
      results: [
        ["call_1_1", "delete_file", false, "deleted /tmp/z"],
        ["call_1_2", "lookup", false, "found weather"],
        ["call_1_3", "transfer", false, "No."]
      ]
    }
  ]

  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const script: ReadonlyArray<ChatModel.ScriptedTurn> = [mixedTurn, { text: "Round handled." }]
        const through = (roundTripIt: boolean) => {
          const kit = makeKit()
          const model = ChatModel.scripted(script)
          return Effect.gen(function*() {
            const paused = (yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })).chain
            let chain: Chain.Chain = paused
            if (roundTripIt && !row.afterDecide) chain = yield* roundTrip(chain, kit.toolkit)
            chain = yield* Approval.decide(chain, row.decisions)
            if (roundTripIt && row.afterDecide) chain = yield* roundTrip(chain, kit.toolkit)
            const done = asOk(yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }))
            return { done, kit, model }
          }).pipe(Effect.provide([model.layer, kit.layer]))
        }
        const plain = yield* through(false)
        const restored = yield* through(true)

        expect(resultRows(restored.done.chain.messages[3])).toEqual(row.results)
        expect(resultRows(plain.done.chain.messages[3])).toEqual(row.results)
        expect(restored.done.reason).toBe(plain.done.reason)
        expect(restored.done.chain.messages).toEqual(plain.done.chain.messages)
        expect(restored.done.chain.lastToolResults).toEqual(plain.done.chain.lastToolResults)
        expect(restored.done.chain.failureCount).toBe(plain.done.chain.failureCount)
        expect(restored.kit.ran).toEqual(plain.kit.ran)
        expect(restored.model.calls).toBe(2)
        expect(plain.model.calls).toBe(2)
        expect(restored.model.requests[1].prompt).toEqual(plain.model.requests[1].prompt)
        expect(toolMessageCount(restored.done.chain)).toBe(1)
      }))
  }
})

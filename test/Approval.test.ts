/**
 * Approval: `needsApproval` pauses a round for a human (pending calls, their states), a round
 * that mixes approved, rejected and ordinary calls, and `Approval.decide` (approve, reject, edit;
 * the decisions it refuses and why).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
Approval,
Chain,
ChatModel,LoopError,
Mode
} from "../src/index.ts"
import {
  makeKit, roles, asOk, approvalCalls, toolResultParts, resultRows, callRows, lastPromptMessage,
  toolMessageCount, snapshot, mixedTurn, mixedPending
} from "./support/approval.ts"

// -----------------------------------------------------------------------------
// needsApproval
// -----------------------------------------------------------------------------

describe("needsApproval", () => {
  it.effect("needsApproval: true pauses with ApprovalPending, the call is not run and no tool message is written", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([{ toolCalls: [{ name: "delete_file", params: { path: "/etc/passwd" } }] }])
      const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, kit.layer])
      )
      const calls = approvalCalls(outcome)
      expect(calls).toEqual([{ id: "call_1_1", name: "delete_file", params: { path: "/etc/passwd" } }])
      expect(kit.ran).toEqual([])
      expect(model.calls).toBe(1)
      const chain = outcome.chain
      expect(roles(chain)).toEqual(["system", "user", "assistant"])
      expect(chain.pendingToolCalls).toEqual(calls)
      expect(chain.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "AwaitingApproval" } })))
      expect(chain.roundResults).toEqual([])
      expect(chain.needsResponse).toBe(true)
      expect(Approval.pending(chain)).toEqual(calls)
    }))

  it.effect("a chain with nothing awaiting approval has no pending calls", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      expect(Approval.pending(kit.chain)).toEqual([])
      const model = ChatModel.scripted([{ toolCalls: [{ name: "lookup", params: { query: "q" } }] }, { text: "ok" }])
      const outcome = asOk(
        yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      )
      expect(Approval.pending(outcome.chain)).toEqual([])
      expect(kit.ran.map((r) => r.tool)).toEqual(["lookup"])
    }))

  // Each row: one call, whether the loop pauses for it, and what the predicate saw.
  const predicateRows: ReadonlyArray<{
    readonly name: string
    readonly call: { readonly name: string; readonly params?: unknown }
    readonly pauses: boolean
    readonly seen: ReadonlyArray<{ readonly tool: string; readonly params: unknown }>
  }> = [
    {
      name: "a function approves a small amount (decoded 50 <= 100): the call runs",
      call: { name: "transfer", params: { amount: "50", to: "bob" } },
      pauses: false,
      seen: [{ tool: "transfer", params: { amount: 50, to: "bob" } }]
    },
    {
      name: "a function asks for a large amount (decoded 250 > 100): the loop pauses",
      call: { name: "transfer", params: { amount: "250", to: "bob" } },
      pauses: true,
      seen: [{ tool: "transfer", params: { amount: 250, to: "bob" } }]
    },
    {
      name: "an Effect-returning function that yields false: the call runs",
      call: { name: "audit", params: { level: "low" } },
      pauses: false,
      seen: [{ tool: "audit", params: { level: "low" } }]
    },
    {
      name: "an Effect-returning function that yields true: the loop pauses",
      call: { name: "audit", params: { level: "high" } },
      pauses: true,
      seen: [{ tool: "audit", params: { level: "high" } }]
    },
    {
      name: "a throwing function fails closed: the loop pauses",
      call: { name: "throws" },
      pauses: true,
      seen: []
    },
    {
      name: "a function whose Effect dies fails closed: the loop pauses",
      call: { name: "dies" },
      pauses: true,
      seen: []
    },
    {
      name: "a function whose Effect throws inside fails closed: the loop pauses",
      call: { name: "dies_inside" },
      pauses: true,
      seen: []
    },
    {
      name: "needsApproval: false: the call runs",
      call: { name: "never" },
      pauses: false,
      seen: []
    }
  ]

  for (const row of predicateRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = ChatModel.scripted([{ toolCalls: [row.call] }, { text: "All done." }])
        const outcome = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, kit.layer])
        )
        expect(kit.seen.map(({ params, tool }) => ({ tool, params }))).toEqual(row.seen)
        // the predicate got the call id and the conversation so far
        for (const seen of kit.seen) {
          expect(seen.toolCallId).toBe("call_1_1")
          expect(seen.messages).toBe(3)
        }
        if (row.pauses) {
          expect(approvalCalls(outcome)).toEqual([{ id: "call_1_1", name: row.call.name, params: row.call.params ?? {} }])
          expect(kit.ran).toEqual([])
          expect(model.calls).toBe(1)
          expect(roles(outcome.chain)).toEqual(["system", "user", "assistant"])
        } else {
          const ok = asOk(outcome)
          expect(ok.reason).toBe("done")
          expect(kit.ran.map((r) => [r.tool, r.id])).toEqual([[row.call.name, "call_1_1"]])
          expect(model.calls).toBe(2)
          expect(roles(ok.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
          expect(ok.chain.callStates).toEqual(new Map())
        }
      }))
  }

  it.effect("the pause lists the arguments as the model sent them (encoded), the predicate and handler get them decoded", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { amount: "1000", to: "eve" } }] },
        { text: "Sent." }
      ])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        expect(approvalCalls(paused)).toEqual([{ id: "call_1_1", name: "transfer", params: { amount: "1000", to: "eve" } }])
        expect(kit.seen.map((s) => s.params)).toEqual([{ amount: 1000, to: "eve" }])
        const approved = yield* Approval.decide(paused.chain, { call_1_1: Approval.approve })
        const done = asOk(yield* Chain.run(approved, { mode: Mode.whileNeedsResponse }))
        expect(kit.ran).toEqual([{ tool: "transfer", id: "call_1_1", params: { amount: 1000, to: "eve" } }])
        // an approved call is not asked about again
        expect(kit.seen.length).toBe(1)
        expect(resultRows(done.chain.messages[3])).toEqual([["call_1_1", "transfer", false, "sent 1000 to eve"]])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  it.effect("invalid arguments never reach approval: a failed \"parameters\" result is fed back to the model", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { amount: "lots", to: "bob" } }, { name: "delete_file", params: {} }] },
        { text: "Sorry, bad arguments." }
      ])
      const outcome = asOk(
        yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, kit.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(kit.seen).toEqual([])
      expect(kit.ran).toEqual([])
      expect(model.calls).toBe(2)
      expect(outcome.chain.lastToolResults.map((r) => [r.id, r.isFailure, r.failureOrigin])).toEqual([
        ["call_1_1", true, "parameters"],
        ["call_1_2", true, "parameters"]
      ])
      const fedBack = toolResultParts(lastPromptMessage(model, 1))
      expect(fedBack.map((part) => [part.id, part.isFailure])).toEqual([["call_1_1", true], ["call_1_2", true]])
      expect(String(fedBack[0].result)).toContain("Invalid arguments for tool 'transfer'")
      expect(String(fedBack[1].result)).toContain("Invalid arguments for tool 'delete_file'")
      expect(outcome.chain.failureCount).toBe(1)
    }))
})

// -----------------------------------------------------------------------------
// A mixed round
// -----------------------------------------------------------------------------

describe("a mixed round", () => {
  it.effect("the other calls run, their results wait in roundResults, and the tool message is written once in call order", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn, { text: "Deleted, looked up, and did not transfer." }])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        expect(approvalCalls(paused)).toEqual(mixedPending)
        expect(Approval.pending(paused.chain)).toEqual(mixedPending)
        expect(kit.ran.map((r) => r.tool)).toEqual(["lookup"])
        expect(paused.chain.roundResults.map((r) => [r.id, r.name, r.isFailure, r.encoded])).toEqual([
          ["call_1_2", "lookup", false, "found weather"]
        ])
        expect(paused.chain.callStates).toEqual(new Map(Object.entries({
          call_1_1: { _tag: "AwaitingApproval" },
          call_1_3: { _tag: "AwaitingApproval" }
        })))
        expect(roles(paused.chain)).toEqual(["system", "user", "assistant"])
        expect(model.calls).toBe(1)

        const decided = yield* Approval.decide(paused.chain, {
          call_1_1: Approval.approve,
          call_1_3: Approval.reject("No transfers today.")
        })
        expect(decided.callStates).toEqual(new Map(Object.entries({
          call_1_1: { _tag: "Approved" },
          call_1_3: { _tag: "Rejected", message: "No transfers today." }
        })))
        expect(Approval.pending(decided)).toEqual([])

        const done = asOk(yield* Chain.run(decided, { mode: Mode.whileNeedsResponse }))
        expect(done.reason).toBe("done")
        expect(model.calls).toBe(2)
        // lookup ran once (not again on resume), delete_file ran, transfer did not
        expect(kit.ran.map((r) => [r.tool, r.id])).toEqual([["lookup", "call_1_2"], ["delete_file", "call_1_1"]])
        expect(roles(done.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
        expect(toolMessageCount(done.chain)).toBe(1)
        const expected = [
          ["call_1_1", "delete_file", false, "deleted /tmp/a"],
          ["call_1_2", "lookup", false, "found weather"],
          ["call_1_3", "transfer", false, "No transfers today."]
        ]
        expect(resultRows(done.chain.messages[3])).toEqual(expected)
        // the model received exactly that tool message
        expect(resultRows(lastPromptMessage(model, 1))).toEqual(expected)
        expect(done.chain.lastToolResults.map((r) => [r.id, r.rejected === true])).toEqual([
          ["call_1_1", false],
          ["call_1_2", false],
          ["call_1_3", true]
        ])
        expect(done.chain.roundResults).toEqual([])
        expect(done.chain.callStates).toEqual(new Map())
        expect(done.chain.pendingToolCalls).toEqual([])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  it.effect("undecided calls stay pending: deciding one then running pauses again listing only the other", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn, { text: "All three handled." }])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        const partly = yield* Approval.decide(paused.chain, { call_1_3: Approval.approve })
        expect(Approval.pending(partly)).toEqual([mixedPending[0]])

        const again = yield* Chain.run(partly, { mode: Mode.whileNeedsResponse })
        expect(approvalCalls(again)).toEqual([mixedPending[0]])
        expect(model.calls).toBe(1)
        // the approved call ran; its result waits with lookup's, still no tool message
        expect(kit.ran.map((r) => [r.tool, r.id])).toEqual([["lookup", "call_1_2"], ["transfer", "call_1_3"]])
        expect(again.chain.roundResults.map((r) => r.id).sort()).toEqual(["call_1_2", "call_1_3"])
        expect(again.chain.pendingToolCalls).toEqual([mixedPending[0]])
        expect(again.chain.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "AwaitingApproval" } })))
        expect(roles(again.chain)).toEqual(["system", "user", "assistant"])

        const last = yield* Approval.decide(again.chain, { call_1_1: Approval.reject() })
        const done = asOk(yield* Chain.run(last, { mode: Mode.whileNeedsResponse }))
        expect(model.calls).toBe(2)
        expect(kit.ran.map((r) => r.tool)).toEqual(["lookup", "transfer"])
        expect(toolMessageCount(done.chain)).toBe(1)
        expect(resultRows(done.chain.messages[3])).toEqual([
          ["call_1_1", "delete_file", false, "Tool call 'delete_file' was rejected by a human reviewer."],
          ["call_1_2", "lookup", false, "found weather"],
          ["call_1_3", "transfer", false, "sent 500 to bob"]
        ])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))
})

// -----------------------------------------------------------------------------
// Decisions
// -----------------------------------------------------------------------------

/** Runs to the approval pause of a single delete_file call (call_1_1). */
const pausedOnDelete = (kit: ReturnType<typeof makeKit>) =>
  Effect.map(Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }), (outcome) => {
    expect(approvalCalls(outcome)).toEqual([{ id: "call_1_1", name: "delete_file", params: { path: "/tmp/a" } }])
    return outcome.chain
  })
const deleteTurn: ChatModel.ScriptedReply = { toolCalls: [{ name: "delete_file", params: { path: "/tmp/a" } }] }

describe("Approval.decide", () => {
  it.effect("approve: the call runs on the next Chain.run and the model sees its result", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([deleteTurn, { text: "Deleted." }])
      return yield* Effect.gen(function*() {
        const paused = yield* pausedOnDelete(kit)
        const approved = yield* Approval.decide(paused, { call_1_1: Approval.approve })
        expect(approved.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "Approved" } })))
        expect(approved.messages).toEqual(paused.messages)
        expect(kit.ran).toEqual([])
        const done = asOk(yield* Chain.run(approved, { mode: Mode.whileNeedsResponse }))
        expect(kit.ran).toEqual([{ tool: "delete_file", id: "call_1_1", params: { path: "/tmp/a" } }])
        expect(resultRows(lastPromptMessage(model, 1))).toEqual([["call_1_1", "delete_file", false, "deleted /tmp/a"]])
        expect(Chain.text(done.chain)).toBe("Deleted.")
        expect(model.calls).toBe(2)
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  const rejectRows: ReadonlyArray<{ readonly name: string; readonly decision: Approval.Decision; readonly text: string }> = [
    {
      name: "reject without a message: the model sees the default text as a non-error result",
      decision: Approval.reject(),
      text: "Tool call 'delete_file' was rejected by a human reviewer."
    },
    {
      name: "reject with a message: the model sees the message as a non-error result",
      decision: Approval.reject("Never delete /tmp/a."),
      text: "Never delete /tmp/a."
    }
  ]
  for (const row of rejectRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = ChatModel.scripted([deleteTurn, { text: "Understood, not deleting." }])
        return yield* Effect.gen(function*() {
          const paused = yield* pausedOnDelete(kit)
          const rejected = yield* Approval.decide(paused, { call_1_1: row.decision })
          const done = asOk(yield* Chain.run(rejected, { mode: Mode.whileNeedsResponse, maxFailures: 1 }))
          expect(done.reason).toBe("done")
          expect(kit.ran).toEqual([])
          expect(model.calls).toBe(2)
          // the model's next request ends with the rejection as a tool result
          const parts = toolResultParts(lastPromptMessage(model, 1))
          expect(parts.map((p) => [p.id, p.name, p.isFailure, p.result])).toEqual([
            ["call_1_1", "delete_file", false, row.text]
          ])
          expect(done.chain.lastToolResults).toEqual([
            { id: "call_1_1", name: "delete_file", isFailure: false, result: row.text, encoded: row.text, rejected: true }
          ])
          // not a failure: failureCount stays 0 and maxFailures: 1 does not end the run
          expect(done.chain.failureCount).toBe(0)
          expect(Chain.text(done.chain)).toBe("Understood, not deleting.")
        }).pipe(Effect.provide([model.layer, kit.layer]))
      }))
  }

  it.effect("edit: checked now, the handler receives the edited arguments and the transcript shows them", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { amount: "900", to: "mallory" } }] },
        { text: "Sent 150 to alice." }
      ])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        expect(approvalCalls(paused)).toEqual([{ id: "call_1_1", name: "transfer", params: { amount: "900", to: "mallory" } }])
        const edited = yield* Approval.decide(paused.chain, {
          call_1_1: Approval.edit({ amount: "150", to: "alice" })
        })
        expect(edited.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "Approved" } })))
        expect(edited.pendingToolCalls).toEqual([{ id: "call_1_1", name: "transfer", params: { amount: "150", to: "alice" } }])
        expect(callRows(edited.messages[2])).toEqual([["call_1_1", "transfer", { amount: "150", to: "alice" }]])
        // the original chain is not modified
        expect(callRows(paused.chain.messages[2])).toEqual([["call_1_1", "transfer", { amount: "900", to: "mallory" }]])

        const done = asOk(yield* Chain.run(edited, { mode: Mode.whileNeedsResponse }))
        // the handler got the edited, decoded arguments; 150 > 100 but an edit is an approval
        expect(kit.ran).toEqual([{ tool: "transfer", id: "call_1_1", params: { amount: 150, to: "alice" } }])
        expect(kit.seen.map((s) => s.params)).toEqual([{ amount: 900, to: "mallory" }])
        expect(callRows(done.chain.messages[2])).toEqual([["call_1_1", "transfer", { amount: "150", to: "alice" }]])
        expect(resultRows(done.chain.messages[3])).toEqual([["call_1_1", "transfer", false, "sent 150 to alice"]])
        // the model's next request shows the edited call and its result
        const prompt = model.requests[1].prompt.content
        expect(callRows(prompt[prompt.length - 2])).toEqual([["call_1_1", "transfer", { amount: "150", to: "alice" }]])
        expect(resultRows(prompt[prompt.length - 1])).toEqual([["call_1_1", "transfer", false, "sent 150 to alice"]])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  it.effect("decide is pipeable: chain.pipe(Approval.decide({...})) equals the data-first call", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn])
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, kit.layer])
      )
      const decisions = { call_1_1: Approval.edit({ path: "/tmp/b" }), call_1_3: Approval.reject("no") }
      const piped = yield* paused.chain.pipe(Approval.decide(decisions))
      const direct = yield* Approval.decide(paused.chain, decisions)
      expect(piped.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "Approved" }, call_1_3: { _tag: "Rejected", message: "no" } })))
      expect(piped.callStates).toEqual(direct.callStates)
      expect(piped.pendingToolCalls).toEqual(direct.pendingToolCalls)
      expect(piped.messages).toEqual(direct.messages)
      expect(piped.pendingToolCalls[0]).toEqual({ id: "call_1_1", name: "delete_file", params: { path: "/tmp/b" } })
    }))

  it.effect("decisions are Schema data: JSON from a UI decodes and works", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn, { text: "ok" }])
      return yield* Effect.gen(function*() {
        const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })
        const fromUi: unknown = JSON.parse(
          "{\"call_1_1\":{\"_tag\":\"Approve\"},\"call_1_3\":{\"_tag\":\"Edit\",\"params\":{\"amount\":\"20\",\"to\":\"carol\"}}}"
        )
        const decisions = Schema.decodeUnknownSync(Schema.Record(Schema.String, Approval.Decision))(fromUi)
        expect(decisions).toEqual({
          call_1_1: Approval.approve,
          call_1_3: Approval.edit({ amount: "20", to: "carol" })
        })
        expect(Approval.reject("x")).toEqual(Schema.decodeUnknownSync(Approval.Decision)({ _tag: "Reject", message: "x" }))
        const decided = yield* Approval.decide(paused.chain, decisions)
        const done = asOk(yield* Chain.run(decided, { mode: Mode.whileNeedsResponse }))
        expect(kit.ran.map((r) => [r.tool, r.params])).toEqual([
          ["lookup", { query: "weather" }],
          ["delete_file", { path: "/tmp/a" }],
          ["transfer", { amount: 20, to: "carol" }]
        ])
        expect(resultRows(done.chain.messages[3])).toEqual([
          ["call_1_1", "delete_file", false, "deleted /tmp/a"],
          ["call_1_2", "lookup", false, "found weather"],
          ["call_1_3", "transfer", false, "sent 20 to carol"]
        ])
      }).pipe(Effect.provide([model.layer, kit.layer]))
    }))

  // Rejected decisions: the error, and the chain untouched.
  const errorRows: ReadonlyArray<{
    readonly name: string
    readonly decide: (chain: Chain.Chain) => ReturnType<typeof Approval.decide<{}>>
    readonly tag: "CallNotAwaiting" | "InvalidResumeValue" | "InvalidInput"
    readonly check: (error: LoopError.CallNotAwaiting | LoopError.InvalidResumeValue | LoopError.InvalidInput) => void
  }> = [
    {
      name: "an unknown id fails with CallNotAwaiting listing what is awaiting",
      decide: (chain) => Approval.decide(chain, { nope: Approval.approve }),
      tag: "CallNotAwaiting",
      check: (error) => {
        expect(error).toBeInstanceOf(LoopError.CallNotAwaiting)
        expect(error.message).toBe("No call with id 'nope' is awaiting approval; awaiting approval: call_1_1, call_1_3")
      }
    },
    {
      name: "the id of a call that does not need approval fails with CallNotAwaiting",
      decide: (chain) => Approval.decide(chain, { call_1_2: Approval.approve }),
      tag: "CallNotAwaiting",
      check: (error) => {
        expect(error.message).toBe("No call with id 'call_1_2' is awaiting approval; awaiting approval: call_1_1, call_1_3")
      }
    },
    {
      name: "a valid decision next to unknown ids is not applied either",
      decide: (chain) => Approval.decide(chain, { call_1_1: Approval.approve, x: Approval.reject(), y: Approval.approve }),
      tag: "CallNotAwaiting",
      check: (error) => {
        expect(error).toMatchObject({ ids: ["x", "y"], awaiting: "approval", waiting: ["call_1_1", "call_1_3"] })
        expect(error.message).toBe("No calls with ids 'x', 'y' are awaiting approval; awaiting approval: call_1_1, call_1_3")
      }
    },
    {
      name: "edited arguments that fail the parameters schema fail with InvalidResumeValue",
      decide: (chain) =>
        Approval.decide(chain, { call_1_1: Approval.approve, call_1_3: Approval.edit({ amount: 5 }) }),
      tag: "InvalidResumeValue",
      check: (error) => {
        expect(error).toMatchObject({ what: "arguments", callId: "call_1_3", tool: "transfer" })
        expect(error.message).toMatch(
          /^The edited arguments for call 'call_1_3' do not match the parameters schema of tool 'transfer': ./
        )
      }
    },
    {
      name: "a malformed decision ({ _tag: \"Maybe\" }) fails with InvalidInput",
      decide: (chain) => Approval.decide(chain, JSON.parse("{\"call_1_1\":{\"_tag\":\"Maybe\"}}")),
      tag: "InvalidInput",
      check: (error) => {
        expect(error).toMatchObject({ field: "approval decisions", value: { call_1_1: { _tag: "Maybe" } } })
        expect(error.message).toMatch(
          /^Invalid approval decisions: must map call ids to Approve, Reject or Edit decisions/
        )
      }
    },
    {
      name: "a decision that is not an object (\"approve\") fails with InvalidInput",
      decide: (chain) => Approval.decide(chain, JSON.parse("{\"call_1_3\":\"approve\"}")),
      tag: "InvalidInput",
      check: (error) => {
        expect(error).toMatchObject({ field: "approval decisions", value: { call_1_3: "approve" } })
      }
    }
  ]

  for (const row of errorRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const kit = makeKit()
        const model = ChatModel.scripted([mixedTurn, { text: "ok" }])
        return yield* Effect.gen(function*() {
          const paused = (yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse })).chain
          const before = snapshot(paused)
          const error = yield* Effect.flip(row.decide(paused))
          expect(error._tag).toBe(row.tag)
          row.check(error)
          // nothing changed: the chain still has the same states, and still pauses for the same calls
          expect(snapshot(paused)).toEqual(before)
          expect(before.pending).toEqual(mixedPending)
          const again = yield* Chain.run(paused, { mode: Mode.whileNeedsResponse })
          expect(approvalCalls(again)).toEqual(mixedPending)
          expect(kit.ran.map((r) => r.tool)).toEqual(["lookup"])
          expect(model.calls).toBe(1)
        }).pipe(Effect.provide([model.layer, kit.layer]))
      }))
  }

  it.effect("a call already decided is no longer awaiting: deciding it again fails with CallNotAwaiting", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const model = ChatModel.scripted([mixedTurn])
      const paused = yield* Chain.run(kit.chain, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, kit.layer])
      )
      const once = yield* Approval.decide(paused.chain, { call_1_1: Approval.approve })
      const error = yield* Effect.flip(Approval.decide(once, { call_1_1: Approval.reject() }))
      expect(error._tag).toBe("CallNotAwaiting")
      expect(error.message).toBe("No call with id 'call_1_1' is awaiting approval; awaiting approval: call_1_3")
      expect(once.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "Approved" }, call_1_3: { _tag: "AwaitingApproval" } })))
    }))

  it.effect("decide on a chain with nothing awaiting fails with CallNotAwaiting (none)", () =>
    Effect.gen(function*() {
      const kit = makeKit()
      const error = yield* Effect.flip(Approval.decide(kit.chain, { call_1_1: Approval.approve }))
      expect(error).toBeInstanceOf(LoopError.CallNotAwaiting)
      expect(error.message).toBe("No call with id 'call_1_1' is awaiting approval; awaiting approval: (none)")
    }))
})

import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  LoopError,
  Mode,
  Outcome,
  ReturnBehavior
} from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

interface Seen {
  readonly tool: string
  readonly params: unknown
  readonly toolCallId: string
  readonly messages: number
}

interface Ran {
  readonly tool: string
  readonly id: string | undefined
  readonly params: unknown
}

/**
 * Fresh tools, handlers and logs per test: `seen` records every evaluation of
 * a `needsApproval` function (with the arguments it got), `ran` every handler
 * invocation.
 */
const makeKit = () => {
  const seen: Array<Seen> = []
  const ran: Array<Ran> = []
  const see = (tool: string, params: unknown, context: Tool.NeedsApprovalContext) =>
    seen.push({ tool, params, toolCallId: context.toolCallId, messages: context.messages.length })

  /** No approval. */
  const Lookup = Tool.make("lookup", {
    parameters: Schema.Struct({ query: Schema.String }),
    success: Schema.String
  })
  /** Always needs approval. */
  const DeleteFile = Tool.make("delete_file", {
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    needsApproval: true
  })
  /** Needs approval above 100; the amount travels as a string and decodes to a finite number. */
  const Transfer = Tool.make("transfer", {
    parameters: Schema.Struct({ amount: Schema.FiniteFromString, to: Schema.String }),
    success: Schema.String,
    needsApproval: (params, context) => {
      see("transfer", params, context)
      return params.amount > 100
    }
  })
  /** Effect-returning predicate. */
  const Audit = Tool.make("audit", {
    parameters: Schema.Struct({ level: Schema.Literals(["low", "high"]) }),
    success: Schema.String,
    needsApproval: (params, context) =>
      Effect.sync(() => {
        see("audit", params, context)
        return params.level === "high"
      })
  })
  /** Predicates that throw, die, or throw inside an Effect: all fail closed. */
  const Throws = Tool.make("throws", {
    success: Schema.String,
    needsApproval: () => {
      throw new Error("predicate blew up")
    }
  })
  const Dies = Tool.make("dies", {
    success: Schema.String,
    needsApproval: () => Effect.die("predicate died")
  })
  const DiesInside = Tool.make("dies_inside", {
    success: Schema.String,
    needsApproval: () =>
      Effect.sync((): boolean => {
        throw new Error("predicate blew up inside an Effect")
      })
  })
  /** A predicate that says no: runs without approval. */
  const Never = Tool.make("never", { success: Schema.String, needsApproval: false })
  /** ReturnBehavior: IMMEDIATE, one without and one with approval. */
  const Finish = Tool.make("finish", { success: Schema.String }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")
  const Publish = Tool.make("publish", { success: Schema.String, needsApproval: true }).annotate(
    ReturnBehavior.Annotation,
    "IMMEDIATE"
  )
  /** A handler that marks its result as the final answer. */
  const Answer = Tool.make("answer", { success: Schema.String })

  const toolkit = Toolkit.make(
    Lookup,
    DeleteFile,
    Transfer,
    Audit,
    Throws,
    Dies,
    DiesInside,
    Never,
    Finish,
    Publish,
    Answer
  )
  const record = (tool: string, id: string | undefined, params: unknown) => ran.push({ tool, id, params })
  const layer = toolkit.toLayer({
    lookup: (params, { toolCallId }) =>
      Effect.sync(() => {
        record("lookup", toolCallId, params)
        return `found ${params.query}`
      }),
    delete_file: (params, { toolCallId }) =>
      Effect.sync(() => {
        record("delete_file", toolCallId, params)
        return `deleted ${params.path}`
      }),
    transfer: (params, { toolCallId }) =>
      Effect.sync(() => {
        record("transfer", toolCallId, params)
        return `sent ${params.amount} to ${params.to}`
      }),
    audit: (params, { toolCallId }) =>
      Effect.sync(() => {
        record("audit", toolCallId, params)
        return `audited ${params.level}`
      }),
    throws: (params, { toolCallId }) => Effect.sync(() => (record("throws", toolCallId, params), "threw?")),
    dies: (params, { toolCallId }) => Effect.sync(() => (record("dies", toolCallId, params), "died?")),
    dies_inside: (params, { toolCallId }) => Effect.sync(() => (record("dies_inside", toolCallId, params), "died?")),
    never: (params, { toolCallId }) => Effect.sync(() => (record("never", toolCallId, params), "never asked")),
    finish: (params, { toolCallId }) => Effect.sync(() => (record("finish", toolCallId, params), "finished")),
    publish: (params, { toolCallId }) => Effect.sync(() => (record("publish", toolCallId, params), "published")),
    answer: (params, { toolCallId }) =>
      Effect.suspend(() => {
        record("answer", toolCallId, params)
        return DirectReturn.final("the answer")
      })
  })
  const chain = Chain.make({ system: "You are careful.", user: "Do the work.", toolkit })
  return { seen, ran, toolkit, layer, chain }
}

const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)

const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got ${outcome._tag} (${outcome.reason})`)
  return outcome
}

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got Pause (${outcome.reason._tag})`)
  return outcome
}

/** The calls of an ApprovalPending pause (fails the test for any other reason). */
const approvalCalls = (outcome: Outcome.Final): ReadonlyArray<ToolCall.ToolCall> => {
  const pause = asPause(outcome)
  if (pause.reason._tag !== "ApprovalPending") {
    throw new globalThis.Error(`expected ApprovalPending, got ${pause.reason._tag}`)
  }
  return pause.reason.calls
}

/** The tool-result parts of a message (fails the test if it is not a tool message). */
const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

/** [id, name, isFailure, result] of each tool-result part of a message. */
const resultRows = (message: Prompt.Message | undefined) =>
  toolResultParts(message).map((part) => [part.id, part.name, part.isFailure, part.result])

/** [id, name, params] of each tool-call part of a message. */
const callRows = (message: Prompt.Message | undefined) => {
  if (message === undefined || message.role !== "assistant") throw new globalThis.Error("expected an assistant message")
  return message.content.flatMap((part) => part.type === "tool-call" ? [[part.id, part.name, part.params]] : [])
}

/** The last message of the prompt the model received in request `index`. */
const lastPromptMessage = (model: ChatModel.ScriptedModel, index: number): Prompt.Message | undefined =>
  model.requests[index]?.prompt.content.at(-1)

const toolMessageCount = (chain: Chain.Chain): number => chain.messages.filter((m) => m.role === "tool").length

/** What a test needs to show that a failed `decide` changed nothing. */
const snapshot = (chain: Chain.Chain) => ({
  messages: chain.messages,
  pendingToolCalls: chain.pendingToolCalls,
  callStates: new Map(chain.callStates),
  roundResults: chain.roundResults,
  pending: Approval.pending(chain)
})

const roundTrip = <Tools extends Record<string, Tool.Any>>(chain: Chain.Chain, toolkit: Toolkit.Toolkit<Tools>) =>
  Chain.encode(chain).pipe(
    Effect.map((document) => JSON.stringify(document)),
    Effect.flatMap((json) => Chain.decode(json, { toolkit }))
  )

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

/** delete_file (approval), lookup (none), transfer 500 (approval): ids call_1_1..3. */
const mixedTurn: ChatModel.ScriptedReply = {
  toolCalls: [
    { name: "delete_file", params: { path: "/tmp/a" } },
    { name: "lookup", params: { query: "weather" } },
    { name: "transfer", params: { amount: "500", to: "bob" } }
  ]
}
const mixedPending: ReadonlyArray<ToolCall.ToolCall> = [
  { id: "call_1_1", name: "delete_file", params: { path: "/tmp/a" } },
  { id: "call_1_3", name: "transfer", params: { amount: "500", to: "bob" } }
]

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
      const restored = yield* Chain.decode(JSON.stringify(document), { toolkit: kit.toolkit })
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

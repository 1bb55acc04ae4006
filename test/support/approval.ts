/**
 * Fixtures of the approval tests (test/Approval*.test.ts): tools that need approval (always, or
 * by their arguments) next to tools that do not, recording handlers, scripted turns, and a JSON round
 * trip of a chain.
 */
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
Approval,
Chain,
ChatModel,
DirectReturn,Outcome,
ReturnBehavior
} from "../../src/index.ts"
import type { ToolCall } from "../../src/index.ts"
import { DeleteFile, Finish } from "./tools.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

export interface Seen {
  readonly tool: string
  readonly params: unknown
  readonly toolCallId: string
  readonly messages: number
}

export interface Ran {
  readonly tool: string
  readonly id: string | undefined
  readonly params: unknown
}

/**
 * Fresh tools, handlers and logs per test: `seen` records every evaluation of
 * a `needsApproval` function (with the arguments it got), `ran` every handler
 * invocation.
 */
export const makeKit = () => {
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
  /** ReturnBehavior IMMEDIATE with approval (Finish, from tools.ts, is the one without). */
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

export const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)

export const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got ${outcome._tag} (${outcome.reason})`)
  return outcome
}

export const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got Pause (${outcome.reason._tag})`)
  return outcome
}

/** The calls of an ApprovalPending pause (fails the test for any other reason). */
export const approvalCalls = (outcome: Outcome.Final): ReadonlyArray<ToolCall.ToolCall> => {
  const pause = asPause(outcome)
  if (pause.reason._tag !== "ApprovalPending") {
    throw new globalThis.Error(`expected ApprovalPending, got ${pause.reason._tag}`)
  }
  return pause.reason.calls
}

/** The tool-result parts of a message (fails the test if it is not a tool message). */
export const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

/** [id, name, isFailure, result] of each tool-result part of a message. */
export const resultRows = (message: Prompt.Message | undefined) =>
  toolResultParts(message).map((part) => [part.id, part.name, part.isFailure, part.result])

/** [id, name, params] of each tool-call part of a message. */
export const callRows = (message: Prompt.Message | undefined) => {
  if (message === undefined || message.role !== "assistant") throw new globalThis.Error("expected an assistant message")
  return message.content.flatMap((part) => part.type === "tool-call" ? [[part.id, part.name, part.params]] : [])
}

/** The last message of the prompt the model received in request `index`. */
export const lastPromptMessage = (model: ChatModel.ScriptedModel, index: number): Prompt.Message | undefined =>
  model.requests[index]?.prompt.content.at(-1)

export const toolMessageCount = (chain: Chain.Chain): number => chain.messages.filter((m) => m.role === "tool").length

/** What a test needs to show that a failed `decide` changed nothing. */
export const snapshot = (chain: Chain.Chain) => ({
  messages: chain.messages,
  pendingToolCalls: chain.pendingToolCalls,
  callStates: new Map(chain.callStates),
  roundResults: chain.roundResults,
  pending: Approval.pending(chain)
})

export const roundTrip = <Tools extends Record<string, Tool.Any>>(chain: Chain.Chain, toolkit: Toolkit.Toolkit<Tools>) =>
  Chain.encode(chain).pipe(
    Effect.map((document) => JSON.stringify(document)),
    Effect.flatMap((json) => Chain.decode(json, { toolkit, trustUnsignedApprovals: true }))
  )


/** delete_file (approval), lookup (none), transfer 500 (approval): ids call_1_1..3. */
export const mixedTurn: ChatModel.ScriptedReply = {
  toolCalls: [
    { name: "delete_file", params: { path: "/tmp/a" } },
    { name: "lookup", params: { query: "weather" } },
    { name: "transfer", params: { amount: "500", to: "bob" } }
  ]
}
export const mixedPending: ReadonlyArray<ToolCall.ToolCall> = [
  { id: "call_1_1", name: "delete_file", params: { path: "/tmp/a" } },
  { id: "call_1_3", name: "transfer", params: { amount: "500", to: "bob" } }
]

/**
 * The chain itself: immutable loop state (messages, the last response,
 * pending calls, results, counters, mode state, context) and the small
 * functions on it. The public `Chain` module re-exports what users see.
 *
 * @internal
 */
import { Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import * as Response from "effect/ai/Response"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Tool from "effect/ai/Tool"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as CallIds from "./callIds.ts"
import { CallState, ToolCall, type ToolResult } from "../ToolCall.ts"

/** @internal the marker every chain carries */
export const ChainTypeId = "~loopwork/Chain" as const

/**
 * JSON data: the type of `context` and `modeState` values.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const context: Record<string, Chain.Json> = { userId: "u1", flags: [1, 2] }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Json = Schema.Json

/**
 * The last model response, summarised: its text, tool calls, finish reason
 * and usage. The full assistant message is the last one in `messages`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const response: Chain.ModelResponse = { text: "Done", toolCalls: [], finishReason: "stop" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const ModelResponse = Schema.Struct({
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  finishReason: Response.FinishReason,
  usage: Schema.optionalKey(Response.Usage)
}).annotate({ identifier: "ModelResponse" })

/**
 * @category models
 * @since 0.1.0
 */
export interface ModelResponse extends Schema.Schema.Type<typeof ModelResponse> {}

/**
 * Every field of a chain.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const runs = (fields: Chain.Fields) => fields.runCount
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Fields {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly toolkit: Toolkit.Any
  readonly lastResponse: ModelResponse | undefined
  readonly pendingToolCalls: ReadonlyArray<ToolCall>
  readonly lastToolResults: ReadonlyArray<ToolResult>
  readonly roundResults: ReadonlyArray<ToolResult>
  readonly callStates: ReadonlyMap<string, CallState>
  readonly runCount: number
  readonly failureCount: number
  readonly modeState: Readonly<Record<string, Json>>
  readonly context: Readonly<Record<string, Json>>
}

/**
 * An immutable chain. `Tools` records the toolkit's tools so that `run`
 * requires exactly their handlers; steps work on the erased `Chain`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const chain = Chain.make({ system: "Be brief.", user: "Hi" })
 * chain.messages.length // 2
 * chain.needsResponse // true
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Chain<Tools extends Record<string, Tool.Any> = {}> implements Fields {
  declare readonly [ChainTypeId]: typeof ChainTypeId
  /** Phantom: the toolkit's tools, for typing `run`. */
  declare readonly "~tools"?: Tools
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly toolkit: Toolkit.Any
  readonly lastResponse: ModelResponse | undefined
  readonly pendingToolCalls: ReadonlyArray<ToolCall>
  readonly lastToolResults: ReadonlyArray<ToolResult>
  readonly roundResults: ReadonlyArray<ToolResult>
  readonly callStates: ReadonlyMap<string, CallState>
  readonly runCount: number
  readonly failureCount: number
  readonly modeState: Readonly<Record<string, Json>>
  readonly context: Readonly<Record<string, Json>>

  /** The tool-call ids of the transcript, cached along the chain's history (internal/callIds.ts). */
  #callIds: CallIds.Entry | undefined = undefined
  static {
    CallIds.register((chain) => (chain as Chain).#callIds, (chain, entry) => {
      ;(chain as Chain).#callIds = entry
    })
  }

  constructor(fields: Fields) {
    this.messages = fields.messages
    this.toolkit = fields.toolkit
    this.lastResponse = fields.lastResponse
    this.pendingToolCalls = fields.pendingToolCalls
    this.lastToolResults = fields.lastToolResults
    this.roundResults = fields.roundResults
    this.callStates = fields.callStates
    this.runCount = fields.runCount
    this.failureCount = fields.failureCount
    this.modeState = fields.modeState
    this.context = fields.context
  }

  /**
   * `true` when the loop has work to do: tool calls are pending, a tool round
   * has results waiting to be written, or the last message is from the user
   * or a tool.
   */
  get needsResponse(): boolean {
    if (this.pendingToolCalls.length > 0 || this.roundResults.length > 0) return true
    const last = this.messages[this.messages.length - 1]
    return last !== undefined && (last.role === "user" || last.role === "tool")
  }

  /** A copy with some fields replaced. */
  copy(patch: Partial<Fields>): Chain<Tools> {
    const next = new Chain<Tools>({
      messages: patch.messages ?? this.messages,
      toolkit: patch.toolkit ?? this.toolkit,
      lastResponse: "lastResponse" in patch ? patch.lastResponse : this.lastResponse,
      pendingToolCalls: patch.pendingToolCalls ?? this.pendingToolCalls,
      lastToolResults: patch.lastToolResults ?? this.lastToolResults,
      roundResults: patch.roundResults ?? this.roundResults,
      callStates: patch.callStates ?? this.callStates,
      runCount: patch.runCount ?? this.runCount,
      failureCount: patch.failureCount ?? this.failureCount,
      modeState: patch.modeState ?? this.modeState,
      context: patch.context ?? this.context
    })
    // Handed on as is: it is used only while its owner is still the chain's last assistant message.
    next.#callIds = this.#callIds
    return next
  }

}
/** `chain.pipe(f, g)`: the chain through `f`, then `g`. */
export interface Chain<Tools extends Record<string, Tool.Any> = {}> extends Pipeable {}
Object.defineProperty(Chain.prototype, ChainTypeId, { value: ChainTypeId })
Object.defineProperty(Chain.prototype, "pipe", {
  value: function(this: Chain) {
    return pipeArguments(this, arguments)
  }
})

/**
 * `true` when `u` is a chain.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.isChain(Chain.make({ user: "Hi" })) // true
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isChain = (u: unknown): u is Chain => {
  try {
    return u instanceof Chain
  } catch {
    return false // a revoked proxy
  }
}

/** @internal the toolkit of a chain made without one */
export const emptyToolkit: Toolkit.Any = Toolkit.empty
/** @internal */
export const noCallStates: ReadonlyMap<string, CallState> = new Map()

/** @internal a chain that has made no model call yet */
export const freshChain = <Tools extends Record<string, Tool.Any>>(
  messages: ReadonlyArray<Prompt.Message>,
  toolkit: Toolkit.Any,
  context: Readonly<Record<string, Json>>
): Chain<Tools> =>
  new Chain<Tools>({
    messages,
    toolkit,
    lastResponse: undefined,
    pendingToolCalls: [],
    lastToolResults: [],
    roundResults: [],
    callStates: noCallStates,
    runCount: 0,
    failureCount: 0,
    modeState: {},
    context
  })

/** @internal a new chain with these messages and nothing else */
export const bareChain = <Tools extends Record<string, Tool.Any>>(messages: ReadonlyArray<Prompt.Message>): Chain<Tools> =>
  freshChain(messages, emptyToolkit, {})


/** @internal the text of the last model response ("" if there is none); `Chain.text` checks its argument first */
export const text = (chain: Chain): string => chain.lastResponse?.text ?? ""

/**
 * A tool call the model asked for, and the result the loop produced for it.
 *
 * Both are plain data with a Schema, so they travel inside a serialized chain.
 * Calls keep the model's raw (encoded) arguments: the loop validates them
 * against the tool's parameters schema when it runs the call.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * One tool call from a model turn: `id` (provider-assigned), tool `name` and
 * the raw `params` the model sent.
 *
 * @example
 * ```ts
 * import { ToolCall } from "loopwork"
 *
 * const call: ToolCall.ToolCall = { id: "call_1", name: "search", params: { query: "effect" } }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  params: Schema.Unknown
}).annotate({ identifier: "ToolCall" })

/**
 * @category models
 * @since 0.1.0
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * Where a failed tool result came from: the model named a tool the toolkit
 * does not have, its arguments failed the tool's schema, the handler failed,
 * the handler's result could not be encoded, or the handler ran past its
 * timeout.
 *
 * @example
 * ```ts
 * import { ToolCall } from "loopwork"
 *
 * const origin: ToolCall.FailureOrigin = "parameters"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const FailureOrigin = Schema.Literals(["unknown-tool", "parameters", "handler", "result", "timeout"])

/**
 * @category models
 * @since 0.1.0
 */
export type FailureOrigin = typeof FailureOrigin.Type

/**
 * The outcome of running one tool call.
 *
 * - `result`: the typed value (the handler's success or failure value, or a
 *   message for unknown tools and bad arguments).
 * - `encoded`: what the model is shown (the result encoded through the tool's
 *   schema; a readable message for loop-level failures).
 * - `rejected`: a human rejected the call (`Approval.reject`); not a failure.
 * - `directReturn`: the handler marked the result as the final answer.
 *
 * @example
 * ```ts
 * import { ToolCall } from "loopwork"
 *
 * const result: ToolCall.ToolResult = {
 *   id: "call_1", name: "search", isFailure: false, result: ["a"], encoded: ["a"]
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolResult {
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  readonly result: unknown
  readonly encoded: unknown
  readonly failureOrigin?: FailureOrigin | undefined
  /** A human rejected the call; the model sees the rejection as a non-error result. */
  readonly rejected?: boolean | undefined
  /** The handler marked this result as the final answer (`DirectReturn.final`). */
  readonly directReturn?: boolean | undefined
}

/**
 * The serialized form of a {@link ToolResult}: the typed `result` is not
 * stored; decoding rebuilds it from `encoded` with the tool's schema.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ToolCall } from "loopwork"
 *
 * Schema.decodeUnknownSync(ToolCall.ToolResultEncoded)({ id: "1", name: "t", isFailure: false, encoded: 1 })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const ToolResultEncoded = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  isFailure: Schema.Boolean,
  encoded: Schema.Unknown,
  failureOrigin: Schema.optionalKey(FailureOrigin),
  rejected: Schema.optionalKey(Schema.Boolean),
  directReturn: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ToolResult" })

/**
 * Where a pending call of the current round stands:
 * - `AwaitingApproval`: its tool needs approval and no one has decided yet.
 * - `Approved`: approved (possibly with edited arguments); runs on resume.
 * - `Rejected`: rejected; on resume the model is told, with `message` if given.
 * - `AwaitingResult`: an external tool; the caller supplies the result.
 *
 * A pending call without a state has not been looked at yet.
 *
 * @example
 * ```ts
 * import { ToolCall } from "loopwork"
 *
 * const state: ToolCall.CallState = { _tag: "Rejected", message: "Not on a Friday." }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const CallState = Schema.Union([
  Schema.TaggedStruct("AwaitingApproval", {}),
  Schema.TaggedStruct("Approved", {}),
  Schema.TaggedStruct("Rejected", { message: Schema.optionalKey(Schema.String) }),
  Schema.TaggedStruct("AwaitingResult", {})
]).annotate({ identifier: "CallState" })

/**
 * @category models
 * @since 0.1.0
 */
export type CallState = typeof CallState.Type

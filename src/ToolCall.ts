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
 * @since 0.1.0
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  params: Schema.Unknown
}).annotate({ identifier: "ToolCall" })

/**
 * @since 0.1.0
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * Where a failed tool result came from: the model named a tool the toolkit
 * does not have, its arguments failed the tool's schema, the handler failed,
 * or the handler's result could not be encoded.
 *
 * @example
 * ```ts
 * import { ToolCall } from "loopwork"
 *
 * const origin: ToolCall.FailureOrigin = "parameters"
 * ```
 *
 * @since 0.1.0
 */
export const FailureOrigin = Schema.Literals(["unknown-tool", "parameters", "handler", "result"])

/**
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
 * @since 0.1.0
 */
export interface ToolResult {
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  readonly result: unknown
  readonly encoded: unknown
  readonly failureOrigin?: FailureOrigin | undefined
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
 * @since 0.1.0
 */
export const ToolResultEncoded = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  isFailure: Schema.Boolean,
  encoded: Schema.Unknown,
  failureOrigin: Schema.optionalKey(FailureOrigin)
}).annotate({ identifier: "ToolResult" })

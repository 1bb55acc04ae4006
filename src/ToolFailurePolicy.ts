/**
 * What the loop does when a tool call fails: run-level policies, one per kind
 * of failure (run option `onToolFailure`).
 *
 * Kinds: `"unknown-tool"` (the model named a tool the toolkit does not have),
 * `"parameters"` (the arguments fail the tool's schema), `"handler"` (the
 * handler failed or died), `"result"` (the handler's result does not match
 * its success schema), `"timeout"` (the handler ran past its timeout, see
 * `ToolTimeout`), and `"rejected"` (a human rejected the call with
 * `Approval.reject`).
 *
 * Policies:
 * - `"feed-back"` (the default for every kind): the model sees the failure as
 *   a failed tool result (a rejection as a non-error result) and may correct
 *   itself. The text is `format(failure)` when you give a formatter,
 *   otherwise a message naming the tool and what went wrong.
 * - `"fail"`: every call of the round that can run still runs (so each gets
 *   its result and the chain stays valid), then the run fails with
 *   `ToolCallFailed`, carrying the chain. Calls of the round still waiting
 *   for approval or an external result keep their state.
 * - a function (repair): given the failure, it returns {@link retryWith}
 *   (run the call again once with corrected arguments; the transcript then
 *   shows those), {@link succeedWith} (use this as the call's result,
 *   checked against the success schema), {@link feedBack} or {@link fail}.
 *
 * ```ts
 * Chain.run(chain, {
 *   mode: Mode.whileNeedsResponse,
 *   onToolFailure: {
 *     "unknown-tool": "fail",
 *     parameters: (failure) => Effect.succeed(ToolFailurePolicy.retryWith(fixDates(failure.call.params))),
 *     format: (failure) => `Error from ${failure.call.name}: ${failure.message}`
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { ToolCall } from "./ToolCall.ts"

/**
 * A kind of tool failure.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const kind: ToolFailurePolicy.Kind = "timeout"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Kind = "unknown-tool" | "parameters" | "handler" | "result" | "timeout" | "rejected"

/**
 * Every kind, in a fixed order.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * ToolFailurePolicy.kinds.length // 6
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const kinds: ReadonlyArray<Kind> = ["unknown-tool", "parameters", "handler", "result", "timeout", "rejected"]

/**
 * One failed call, as a policy sees it: its kind, the call, the message the
 * model would see by default, and the underlying error when there is one
 * (the handler's failure, the schema issue).
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const describe = (failure: ToolFailurePolicy.ToolFailure) => `${failure.kind}: ${failure.message}`
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolFailure {
  readonly kind: Kind
  readonly call: ToolCall
  readonly message: string
  readonly error?: unknown
}

/**
 * What a repair function decides.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const decision: ToolFailurePolicy.Repair = ToolFailurePolicy.retryWith({ city: "Lisbon" })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Repair =
  | { readonly _tag: "RetryWith"; readonly params: unknown }
  | { readonly _tag: "SucceedWith"; readonly result: unknown }
  | { readonly _tag: "FeedBack" }
  | { readonly _tag: "Fail" }

/**
 * Run the call again, once, with these arguments (in the form the model
 * sends, i.e. encoded). They are checked against the tool's schema; a call
 * that fails again is fed back to the model.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const fixed = ToolFailurePolicy.retryWith({ city: "Lisbon" })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const retryWith = (params: unknown): Repair => ({ _tag: "RetryWith", params })

/**
 * Use `result` as the call's successful result (checked against the tool's
 * success schema).
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const cached = ToolFailurePolicy.succeedWith({ celsius: 20 })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const succeedWith = (result: unknown): Repair => ({ _tag: "SucceedWith", result })

/**
 * Let the model see the failure (the default).
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const decision = ToolFailurePolicy.feedBack
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const feedBack: Repair = { _tag: "FeedBack" }

/**
 * Fail the run with `ToolCallFailed` once the round is complete.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const decision = ToolFailurePolicy.fail
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const fail: Repair = { _tag: "Fail" }

/**
 * A policy for one kind of failure.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const policy: ToolFailurePolicy.Policy = (failure) =>
 *   Effect.succeed(failure.call.name === "search" ? ToolFailurePolicy.succeedWith([]) : ToolFailurePolicy.feedBack)
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Policy = "feed-back" | "fail" | ((failure: ToolFailure) => Effect.Effect<Repair>)

/**
 * The run option `onToolFailure`: a policy per kind (unset kinds feed back)
 * and an optional formatter for the text the model sees.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * const options: ToolFailurePolicy.Options = { "unknown-tool": "fail", timeout: "fail" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Options = { readonly [K in Kind]?: Policy | undefined } & {
  readonly format?: ((failure: ToolFailure) => string) | undefined
}

/**
 * The text the model sees for a rejected call when the reviewer gave no
 * message.
 *
 * @example
 * ```ts
 * import { ToolFailurePolicy } from "loopwork"
 *
 * ToolFailurePolicy.rejectedMessage("wire_transfer")
 * // "Tool call 'wire_transfer' was rejected by a human reviewer."
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const rejectedMessage = (tool: string): string => `Tool call '${tool}' was rejected by a human reviewer.`

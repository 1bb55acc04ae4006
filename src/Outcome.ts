/**
 * The result of every step and every mode.
 *
 * - `Continue`: keep going with this chain.
 * - `Ok`: finished; `extra` may carry data such as the result of the tool that
 *   ended the loop, `reason` says why it finished.
 * - `Pause`: a clean, resumable checkpoint; `reason` says why.
 * - `Error`: failed; the chain at the point of failure is kept.
 *
 * Outcomes are small classes (not Schema data): they live only while a loop
 * runs. The chain inside them is what you store.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { Chain } from "./internal/chain.ts"
import type { StepFailure } from "./LoopError.ts"
import type * as Tool from "effect/ai/Tool"
import { ToolCall, type ToolResult } from "./ToolCall.ts"

/**
 * Why a loop finished with `Ok`:
 * - `"done"`: the model answered and no further response is needed.
 * - `"return-behavior"`: a tool round matched the ReturnBehavior rule; `extra`
 *   holds the round's tool results in call order.
 * - `"tool-used"`: a watched tool was called (`untilToolUsed`); `extra` holds
 *   its result.
 * - `"step"`: the `step` mode finished its step(s).
 * - `"tools-succeeded"`: `untilSuccess` saw a tool round without failures.
 * - `"direct-return"`: a handler marked its result as the final answer
 *   (`DirectReturn.final`) in a round without failures; `extra` holds the
 *   round's tool results in call order.
 * - `"max-runs"`: `maxRuns` was reached with `onMaxRuns: "stop"`.
 * - `"final-answer"`: `maxRuns` was reached with `onMaxRuns: "final-answer"`
 *   and the model gave its final answer (`extra` = its text).
 * - `"no-tool-result"`: the model answered without a tool and the no-tool
 *   policy supplied a result (`extra`).
 *
 * A plain answer ended by the no-tool policy `"done"` has reason `"done"` and
 * the answer's text as `extra`.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const reason: Outcome.OkReason = "done"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type OkReason = keyof OkExtra

/**
 * What `extra` holds for each reason of `Ok`, so matching on `reason`
 * narrows `extra`.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const watched = (outcome: Outcome.Final) =>
 *   outcome._tag === "Ok" && outcome.reason === "tool-used" ? outcome.extra.encoded : undefined
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface OkExtra {
  /**
   * The answer's text when the no-tool policy `"done"` ended the loop; a
   * custom mode or step may put anything here.
   */
  readonly done: unknown
  /** The returned round's results, in call order. */
  readonly "return-behavior": ReadonlyArray<ToolResult>
  /** The watched tool's result. */
  readonly "tool-used": ToolResult
  /** Nothing from `Mode.step`; a custom mode may put anything here. */
  readonly step: unknown
  readonly "tools-succeeded": unknown
  /** The returned round's results, in call order. */
  readonly "direct-return": ReadonlyArray<ToolResult>
  /** The last response's text with `onMaxRuns: "stop"`; what a handler of yours put there otherwise. */
  readonly "max-runs": unknown
  /** The final answer's text. */
  readonly "final-answer": string
  /** What the no-tool policy supplied. */
  readonly "no-tool-result": unknown
}

/** The tool records a chain's type carries. */
type Tools = Record<string, Tool.Any>

/**
 * Why a loop paused. Serializable, so it can be stored next to the chain.
 *
 * - `StopRequested`: the caller raised the run's `StopSignal` (or a
 *   `checkPause` predicate said so).
 * - `ApprovalPending`: calls whose tool needs approval wait for decisions
 *   (`Approval.decide`); `calls` lists them (id, tool, arguments).
 * - `ExternalPending`: calls to external tools wait for their results
 *   (`ExternalTool.supply`).
 * - `UserInputWanted`: the model answered without a tool and the no-tool
 *   policy is `"user"`; add a user message (`Chain.addUser`) and run again.
 * - `Requested`: a custom step paused with its own message.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const reason: Outcome.PauseReason = { _tag: "StopRequested" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const PauseReason = Schema.Union([
  Schema.TaggedStruct("StopRequested", {}),
  Schema.TaggedStruct("ApprovalPending", { calls: Schema.Array(ToolCall) }),
  Schema.TaggedStruct("ExternalPending", { calls: Schema.Array(ToolCall) }),
  Schema.TaggedStruct("UserInputWanted", {}),
  Schema.TaggedStruct("Requested", { message: Schema.String })
]).annotate({ identifier: "PauseReason" })

/**
 * @category models
 * @since 0.1.0
 */
export type PauseReason = typeof PauseReason.Type

/**
 * Keep going with `chain`.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * declare const chain: import("loopwork").Chain.Chain
 * const next = new Outcome.Continue(chain)
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Continue<T extends Tools = {}> {
  readonly _tag = "Continue" as const
  readonly chain: Chain<T>
  constructor(chain: Chain<T>) {
    this.chain = chain
  }
}

/**
 * The loop finished.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * declare const chain: import("loopwork").Chain.Chain
 * const done = new Outcome.Ok(chain, "done")
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Ok<Reason extends OkReason = OkReason, T extends Tools = {}> {
  readonly _tag = "Ok" as const
  readonly chain: Chain<T>
  readonly reason: Reason
  readonly extra: OkExtra[Reason]
  /** The decoded answer of a run with an `output` Schema (`StructuredOutput`); `undefined` otherwise. */
  readonly output: unknown
  constructor(chain: Chain<T>, reason: Reason, extra?: OkExtra[Reason], output?: unknown) {
    this.chain = chain
    this.reason = reason
    this.extra = extra as OkExtra[Reason]
    this.output = output
  }
}

/**
 * An `Ok` of any reason, as a union over the reasons, so that matching on
 * `reason` narrows `extra` (see {@link OkExtra}).
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const results = (ok: Outcome.AnyOk) => ok.reason === "return-behavior" ? ok.extra.length : 0
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type AnyOk<T extends Tools = {}> = { readonly [R in OkReason]: Ok<R, T> }[OkReason]

/**
 * The loop stopped at a clean, resumable checkpoint.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * declare const chain: import("loopwork").Chain.Chain
 * const paused = new Outcome.Pause(chain, { _tag: "StopRequested" })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Pause<T extends Tools = {}> {
  readonly _tag = "Pause" as const
  readonly chain: Chain<T>
  readonly reason: PauseReason
  constructor(chain: Chain<T>, reason: PauseReason) {
    this.chain = chain
    this.reason = reason
  }
}

/**
 * The loop failed; `chain` is the chain at the point of failure.
 *
 * @example
 * ```ts
 * import { LoopError, Outcome } from "loopwork"
 *
 * declare const chain: import("loopwork").Chain.Chain
 * const failed = new Outcome.Error(chain, new LoopError.MaxRunsExceeded({ runs: 3, maxRuns: 3 }))
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class Error<T extends Tools = {}> {
  readonly _tag = "Error" as const
  readonly chain: Chain<T>
  readonly error: StepFailure
  constructor(chain: Chain<T>, error: StepFailure) {
    this.chain = chain
    this.error = error
  }
}

/**
 * Any outcome.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const isDone = (outcome: Outcome.Outcome) => outcome._tag === "Ok"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Outcome<T extends Tools = {}> = Continue<T> | AnyOk<T> | Pause<T> | Error<T>

/**
 * An outcome that ends a loop.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const chainOf = (outcome: Outcome.Terminal) => outcome.chain
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Terminal<T extends Tools = {}> = AnyOk<T> | Pause<T> | Error<T>

/**
 * What `Chain.run` succeeds with: finished or paused. Its chain keeps the
 * tool types of the chain that ran, so running it again requires the same
 * handlers.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * const describe = (outcome: Outcome.Final) => outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Final<T extends Tools = {}> = AnyOk<T> | Pause<T>

/**
 * `true` for `Ok`, `Pause` and `Error`; `false` for `Continue` and for anything that is not an outcome.
 *
 * @example
 * ```ts
 * import { Outcome } from "loopwork"
 *
 * declare const chain: import("loopwork").Chain.Chain
 * Outcome.isTerminal(new Outcome.Continue(chain)) // false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isTerminal = (outcome: Outcome): outcome is Terminal =>
  outcome instanceof Ok || outcome instanceof Pause || outcome instanceof Error

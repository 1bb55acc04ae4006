/**
 * The typed failures a loop can end with.
 *
 * Every failure is a `Schema.TaggedError` whose `message` tells the user what
 * happened and what to change. A failing step never throws: it returns an
 * `Outcome.Error` that carries one of these errors together with the chain as
 * it stood, and `Chain.run` fails with a {@link RunError} wrapping both.
 *
 * Messages never hold a credential: whatever a provider, a tool or a value
 * brings into them goes through `Privacy.redactSecrets`. Printed, a
 * `RunError` shows its message and a summary of its chain, and a
 * `ModelCallFailed` leaves out its `cause`.
 *
 * @since 0.1.0
 */
import { Inspectable, Redactable, Schema } from "effect"
import type { Chain } from "./internal/chain.ts"
import { isChain } from "./internal/chain.ts"
import { describeValue, headStack, hide, listed, printed, shownId, untaggedFailure } from "./internal/errorText.ts"
import { redactSecrets } from "./internal/redact.ts"
import { OutputInvalid } from "./internal/structured/outputInvalid.ts"

export { OutputInvalid }

/**
 * The model port failed to produce a turn (network, provider or decoding
 * error). `cause` keeps the original error for inspection. Providers that
 * speak HTTP fill in what a retry needs:
 *
 * - `status`: the HTTP status code, when there was a response;
 * - `retryAfterMillis`: how long the provider asked to wait
 *   (`retry-after-ms` / `retry-after` headers);
 * - `retryable`: whether trying again can help (false for 400, 401, 404…).
 *
 * `ModelRetry.schedule` reads them.
 *
 * The `description` is stored with credentials redacted (a provider's error
 * may echo the request's `Authorization` header). Printed (`console.log`,
 * `String`, `JSON.stringify`, Effect's logger), the error shows its message
 * and retry fields, never its `cause`, which may hold the provider's request.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * const error = new LoopError.ModelCallFailed({ description: "rate limited", cause: undefined })
 * error.message // "The model call failed: rate limited"
 * new LoopError.ModelCallFailed({ description: "Rate limit reached", cause: undefined, status: 429, retryable: true }).message
 * // "The model call failed (HTTP 429): Rate limit reached"
 * new LoopError.ModelCallFailed({ description: "Invalid header: Bearer sk-proj-4f9a8b7c6d5e4f3a2b1c", cause: undefined }).description
 * // "Invalid header: Bearer [REDACTED]"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ModelCallFailed extends Schema.TaggedError<ModelCallFailed>()("ModelCallFailed", {
  description: Schema.String,
  cause: Schema.Defect(),
  status: Schema.optionalKey(Schema.Int),
  retryAfterMillis: Schema.optionalKey(Schema.Number),
  retryable: Schema.optionalKey(Schema.Boolean)
}) {
  constructor(
    props: {
      readonly description: string
      readonly cause: unknown
      readonly status?: number
      readonly retryAfterMillis?: number
      readonly retryable?: boolean
    },
    options?: Schema.MakeOptions
  ) {
    super(props, options)
    const description = redactSecrets(this.description)
    if (description !== this.description) (this as { description: string }).description = description
    hide(this, "cause")
  }

  override get message(): string {
    return this.status === undefined
      ? `The model call failed: ${this.description}`
      : `The model call failed (HTTP ${this.status}): ${this.description}`
  }

  /** The error's tag, message and retry fields; never its `cause`. */
  override toJSON(): ModelCallFailedJson {
    const json: { -readonly [K in keyof ModelCallFailedJson]: ModelCallFailedJson[K] } = {
      _tag: "ModelCallFailed",
      message: this.message
    }
    if (this.status !== undefined) json.status = this.status
    if (this.retryAfterMillis !== undefined) json.retryAfterMillis = this.retryAfterMillis
    if (this.retryable !== undefined) json.retryable = this.retryable
    return json
  }

  override toString(): string {
    return `ModelCallFailed: ${this.message}`
  }

  override [Inspectable.NodeInspectSymbol](): string {
    const fields: Array<string> = []
    if (this.retryable !== undefined) fields.push(`retryable: ${this.retryable}`)
    if (this.retryAfterMillis !== undefined) fields.push(`retryAfterMillis: ${this.retryAfterMillis}`)
    return printed(this.toString(), fields, this.stack)
  }

  [Redactable.symbolRedactable](): ModelCallFailedJson {
    return this.toJSON()
  }
}

/**
 * What `JSON.stringify` and Effect's formatting show of a
 * {@link ModelCallFailed}.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * const json: LoopError.ModelCallFailedJson = new LoopError.ModelCallFailed({ description: "busy", cause: undefined }).toJSON()
 * // { _tag: "ModelCallFailed", message: "The model call failed: busy" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ModelCallFailedJson {
  readonly _tag: "ModelCallFailed"
  readonly message: string
  readonly status?: number
  readonly retryAfterMillis?: number
  readonly retryable?: boolean
}

/**
 * The loop reached its `maxRuns` budget of model calls while the chain still
 * needed a response.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.MaxRunsExceeded({ runs: 25, maxRuns: 25 }).message
 * // "Exceeded maximum number of runs (25/25)"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class MaxRunsExceeded extends Schema.TaggedError<MaxRunsExceeded>()("MaxRunsExceeded", {
  runs: Schema.Number,
  maxRuns: Schema.Number
}) {
  override get message(): string {
    return `Exceeded maximum number of runs (${this.runs}/${this.maxRuns})`
  }
}

/**
 * Consecutive tool rounds with at least one failed tool call reached
 * `maxFailures`.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.MaxFailuresExceeded({ failures: 3, maxFailures: 3 }).message
 * // "exceeded max failure count (3)"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class MaxFailuresExceeded extends Schema.TaggedError<MaxFailuresExceeded>()("MaxFailuresExceeded", {
  failures: Schema.Number,
  maxFailures: Schema.Number
}) {
  override get message(): string {
    return `exceeded max failure count (${this.maxFailures})`
  }
}

/**
 * A mode was asked to watch for tools the chain's toolkit does not have.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.ToolNamesNotFound({ names: ["x"], available: ["search"] }).message
 * // "Tool name 'x' not found in available tools"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ToolNamesNotFound extends Schema.TaggedError<ToolNamesNotFound>()("ToolNamesNotFound", {
  names: Schema.Array(Schema.String),
  available: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return this.names.length === 1
      ? `Tool name '${this.names[0]}' not found in available tools`
      : `Tool names '${this.names.join(", ")}' not found in available tools`
  }
}

/**
 * A run was started with options or a chain that cannot work; `field` names
 * what is wrong and `rule` the rule it broke.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.InvalidInput({ field: "maxRuns", rule: "must be a positive integer", value: -1 }).message
 * // "Invalid maxRuns: must be a positive integer (got -1)"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  field: Schema.String,
  rule: Schema.String,
  value: Schema.Unknown
}) {
  override get message(): string {
    return redactSecrets(`Invalid ${this.field}: ${this.rule} (got ${describeValue(this.value)})`)
  }

  /** The error's tag, field, rule and message; the value only as the message shows it (redacted, cut). */
  override toJSON(): { readonly _tag: "InvalidInput"; readonly field: string; readonly rule: string; readonly message: string } {
    return { _tag: "InvalidInput", field: redactSecrets(this.field), rule: redactSecrets(this.rule), message: this.message }
  }
}

/**
 * A tool call failed and the run's `onToolFailure` policy for that kind is
 * `"fail"`. Every call of the round that could run has run first, so nothing
 * is lost: when the round is complete, the chain carried by the run's error
 * ends with the tool message holding every result; when other calls of the
 * round still wait for approval or an external result, the results so far
 * are in `roundResults` and the waiting calls keep their state (the chain can
 * still be resumed).
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.ToolCallFailed({ kind: "timeout", callId: "call_1", tool: "search", detail: "timed out after 5s" }).message
 * // "Tool 'search' (call call_1) failed (timeout): timed out after 5s. The run's onToolFailure policy for \"timeout\" is \"fail\"; use \"feed-back\" to let the model see the failure instead"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ToolCallFailed extends Schema.TaggedError<ToolCallFailed>()("ToolCallFailed", {
  kind: Schema.String,
  callId: Schema.String,
  tool: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return redactSecrets(
      `Tool '${this.tool}' (call ${this.callId}) failed (${this.kind}): ${this.detail.replace(/\.$/, "")}. The run's onToolFailure policy for "${this.kind}" is "fail"; use "feed-back" to let the model see the failure instead`
    )
  }
}

/**
 * Decisions or results were given for call ids that are not waiting for
 * them. Nothing was changed.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.CallNotAwaiting({ ids: ["call_9"], awaiting: "approval", waiting: ["call_1"] }).message
 * // "No call with id 'call_9' is awaiting approval; awaiting approval: call_1"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class CallNotAwaiting extends Schema.TaggedError<CallNotAwaiting>()("CallNotAwaiting", {
  ids: Schema.Array(Schema.String),
  awaiting: Schema.Literals(["approval", "result"]),
  waiting: Schema.Array(Schema.String)
}) {
  override get message(): string {
    // The ids are the client's: each shown cut, at most a few of them, credentials redacted.
    const ids = listed(this.ids, (id) => `'${shownId(id)}'`)
    const subject = this.ids.length === 1 ? `No call with id ${ids} is` : `No calls with ids ${ids} are`
    const waiting = this.waiting.length === 0 ? "(none)" : listed(this.waiting, shownId)
    return redactSecrets(`${subject} awaiting ${this.awaiting}; awaiting ${this.awaiting}: ${waiting}`)
  }

  /** The error's tag, what was awaited and its message; the ids only as the message shows them (redacted, cut). */
  override toJSON(): { readonly _tag: "CallNotAwaiting"; readonly awaiting: "approval" | "result"; readonly message: string } {
    return { _tag: "CallNotAwaiting", awaiting: this.awaiting, message: this.message }
  }
}

/**
 * Edited arguments (`Approval.edit`) or an external tool's result
 * (`ExternalTool.supply`) do not match the tool's schema. Nothing was
 * changed.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.InvalidResumeValue({ what: "arguments", callId: "call_1", tool: "transfer", issue: "Missing key [\"amount\"]" }).message
 * // "The edited arguments for call 'call_1' do not match the parameters schema of tool 'transfer': Missing key [\"amount\"]"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidResumeValue extends Schema.TaggedError<InvalidResumeValue>()("InvalidResumeValue", {
  what: Schema.Literals(["arguments", "result"]),
  callId: Schema.String,
  tool: Schema.String,
  issue: Schema.String
}) {
  override get message(): string {
    return redactSecrets(
      this.what === "arguments"
        ? `The edited arguments for call '${this.callId}' do not match the parameters schema of tool '${this.tool}': ${this.issue}`
        : `The result supplied for call '${this.callId}' does not match the success schema of tool '${this.tool}': ${this.issue}`
    )
  }
}

/**
 * A function you gave the loop (a `noTool` policy, an `onMaxRuns` handler, a
 * `shouldContinue` or `checkPause` predicate) threw or failed. The loop ends
 * with this error and the chain as it stood.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.PolicyFailed({ policy: "noTool", detail: "boom" }).message
 * // "The noTool function failed: boom"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class PolicyFailed extends Schema.TaggedError<PolicyFailed>()("PolicyFailed", {
  policy: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return redactSecrets(`The ${this.policy} function failed: ${this.detail}`)
  }
}

/**
 * A custom mode returned `Continue` instead of a terminal outcome.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.ModeDidNotFinish({}).message.startsWith("The mode returned Continue") // true
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ModeDidNotFinish extends Schema.TaggedError<ModeDidNotFinish>()("ModeDidNotFinish", {}) {
  override get message(): string {
    return "The mode returned Continue instead of Ok, Pause or Error; end the pipeline with Step.continueOrDone or another terminal step"
  }
}

/**
 * Any error a step can put in an `Outcome.Error`: the built-in errors and any
 * tagged error a custom step produces.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * const describe = (error: LoopError.StepFailure) => `${error._tag}: ${error.message}`
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface StepFailure {
  readonly _tag: string
  readonly message: string
}

/**
 * The scripted model was called more often than it has turns.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.ScriptExhausted({ scripted: 2, request: 3, lastMessage: "user: hi" }).message
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ScriptExhausted extends Schema.TaggedError<ScriptExhausted>()("ScriptExhausted", {
  scripted: Schema.Number,
  request: Schema.Number,
  lastMessage: Schema.String
}) {
  override get message(): string {
    return redactSecrets(
      `The scripted model has ${this.scripted} turn(s) but received request #${this.request} ` +
        `(last message: ${this.lastMessage}); add a turn to the script or find why the loop called the model again`
    )
  }
}

/**
 * A custom step's or mode's own failure (any tagged error that is not one of
 * the loop's), as `Chain.run` reports it: `failure` is the original.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * new LoopError.StepFailed({ failure: { _tag: "AuditFailed", message: "the audit log is full" } }).message
 * // "the audit log is full"
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", {
  failure: Schema.declare((u): u is StepFailure => isStepFailure(u))
}) {
  /** The failure's own message (its tag is `failure._tag`). */
  override get message(): string {
    return redactSecrets(this.failure.message)
  }
}

const isStepFailure = (u: unknown): u is StepFailure =>
  typeof u === "object" && u !== null && typeof (u as StepFailure)._tag === "string" &&
  typeof (u as StepFailure).message === "string"

/**
 * Why a run failed: one of the loop's errors, or `StepFailed` wrapping a
 * custom step's own failure, so a `switch` on `_tag` is exhaustive.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * const retryable = (reason: LoopError.Reason): boolean => {
 *   switch (reason._tag) {
 *     case "ModelCallFailed":
 *       return reason.retryable === true
 *     case "MaxRunsExceeded":
 *     case "MaxFailuresExceeded":
 *     case "ToolNamesNotFound":
 *     case "InvalidInput":
 *     case "ToolCallFailed":
 *     case "PolicyFailed":
 *     case "ModeDidNotFinish":
 *     case "OutputInvalid":
 *     case "ScriptExhausted":
 *     case "StepFailed":
 *       return false
 *   }
 * }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type Reason =
  | ModelCallFailed
  | ScriptExhausted
  | MaxRunsExceeded
  | MaxFailuresExceeded
  | ToolNamesNotFound
  | InvalidInput
  | ToolCallFailed
  | PolicyFailed
  | ModeDidNotFinish
  | OutputInvalid
  | StepFailed

const reasons = [ModelCallFailed, MaxRunsExceeded, MaxFailuresExceeded, ToolNamesNotFound, InvalidInput, ToolCallFailed, PolicyFailed, ModeDidNotFinish, OutputInvalid] as const

/**
 * `failure` as a run's reason: itself when it is one of the loop's errors,
 * otherwise wrapped in `StepFailed`.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * LoopError.reasonOf({ _tag: "AuditFailed", message: "full" })._tag // "StepFailed"
 * ```
 *
 * @category utils
 * @since 0.2.0
 */
export const reasonOf = (failure: StepFailure): Reason => {
  try {
    if (failure instanceof ScriptExhausted || failure instanceof StepFailed || reasons.some((C) => failure instanceof C)) return failure as Reason
    if (isStepFailure(failure)) return new StepFailed({ failure })
  } catch {
    // a revoked proxy, or a getter that throws: not a failure it can keep
  }
  return new StepFailed({ failure: untaggedFailure(failure) })
}

/**
 * What `Chain.run` fails with: the error that ended the loop (`reason`) and
 * the chain at the point of failure, so nothing is lost.
 *
 * Its `message` is the reason's, with credentials redacted. Printed — with
 * `console.log`, `String`, `JSON.stringify`, Effect's logger, or as an
 * uncaught failure — it shows its tag, its message, the reason's tag and a
 * summary of the chain (message count, `runCount`), never the chain's
 * content or a provider's request: read `error.chain` for those.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const recovered = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.catchTag("RunError", (error) => Effect.succeed(error.chain))
 * )
 * // String(error): "RunError: The model call failed (HTTP 401): Bearer [REDACTED] (reason: ModelCallFailed; chain: 2 messages, runCount 0)"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class RunError extends Schema.TaggedError<RunError>()("RunError", {
  // The loop's own errors (`reasonOf` wraps anything else in `StepFailed`).
  reason: Schema.declare((u): u is Reason => isStepFailure(u)),
  chain: Schema.declare((u): u is Chain => isChain(u))
}) {
  constructor(props: { readonly reason: Reason; readonly chain: Chain }, options?: Schema.MakeOptions) {
    super(props, options)
    // Kept out of spreads and Object.keys, so a copy of the error (as Effect's Cause.prettyErrors makes) has no chain.
    hide(this, "reason")
    hide(this, "chain")
    headStack(this)
  }

  override get message(): string {
    return redactSecrets(this.reason.message)
  }

  /** The error's tag and message, the reason's tag and message, and the chain's size. */
  override toJSON(): RunErrorJson {
    return {
      _tag: "RunError",
      message: this.message,
      reason: { _tag: this.reason._tag, message: this.message },
      chain: { messages: this.chain.messages.length, runCount: this.chain.runCount }
    }
  }

  override toString(): string {
    return `RunError: ${this.message} (${summaryOf(this)})`
  }

  override [Inspectable.NodeInspectSymbol](): string {
    return this.stack ?? this.toString()
  }

  [Redactable.symbolRedactable](): RunErrorJson {
    return this.toJSON()
  }
}

/** "reason: ModelCallFailed; chain: 2 messages, runCount 0" */
const summaryOf = (error: RunError): string => {
  const messages = error.chain.messages.length
  return `reason: ${error.reason._tag}; chain: ${messages} message${messages === 1 ? "" : "s"}, runCount ${error.chain.runCount}`
}

/**
 * What `JSON.stringify` and Effect's formatting show of a {@link RunError}:
 * no content of the chain, only its size.
 *
 * @example
 * ```ts
 * import { LoopError } from "loopwork"
 *
 * const json: LoopError.RunErrorJson = {
 *   _tag: "RunError",
 *   message: "Exceeded maximum number of runs (3/3)",
 *   reason: { _tag: "MaxRunsExceeded", message: "Exceeded maximum number of runs (3/3)" },
 *   chain: { messages: 7, runCount: 3 }
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface RunErrorJson {
  readonly _tag: "RunError"
  readonly message: string
  readonly reason: { readonly _tag: string; readonly message: string }
  readonly chain: { readonly messages: number; readonly runCount: number }
}

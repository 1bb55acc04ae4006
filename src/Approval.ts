/**
 * Tool approval: calls to tools that need a human's approval are not run;
 * the loop pauses until someone decides.
 *
 * A tool needs approval when it says so with `effect/ai`'s `needsApproval`
 * (`Tool.make(name, { needsApproval: true })`, or a function of the decoded
 * arguments, possibly an Effect). When the model calls it, the round's other
 * calls run, then the loop pauses with
 * `Pause { reason: { _tag: "ApprovalPending", calls } }` listing each waiting
 * call (id, tool, arguments). Decide by call id with {@link decide}, then run
 * the chain again:
 *
 * - {@link approve}: the call runs as the model asked.
 * - {@link reject}: the call does not run; the model sees a non-error result
 *   saying it was rejected (your message if you give one). The run's
 *   `onToolFailure.rejected` policy can instead fail the run.
 * - {@link edit}: the call runs with new arguments, checked against the
 *   tool's parameters schema now; the transcript shows the edited arguments.
 *
 * Calls you do not decide stay pending (the next run pauses again for them).
 * Decisions are plain data (a Schema), so they can come from a UI as JSON.
 *
 * @since 0.1.0
 */
import { Effect, Function, Result, Schema } from "effect"
import type * as Tool from "effect/ai/Tool"
import type { Chain } from "./internal/chain.ts"
import { isChain } from "./internal/chain.ts"
import { chainOrThrow } from "./internal/chainInput.ts"
import { checkParamsFor, unstorable, waitingIds, withEdits } from "./internal/round.ts"
import { recordSnapshot } from "./internal/snapshot.ts"
import { CallNotAwaiting, InvalidInput, InvalidResumeValue } from "./LoopError.ts"
import type { CallState, ToolCall } from "./ToolCall.ts"

/**
 * A decision on one call: `{ _tag: "Approve" }`, `{ _tag: "Reject", message? }`
 * or `{ _tag: "Edit", params }` (arguments in the form the model sends).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Approval } from "loopwork"
 *
 * const fromUi = Schema.decodeUnknownSync(Approval.Decision)({ _tag: "Reject", message: "Too much." })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Decision = Schema.Union([
  Schema.TaggedStruct("Approve", {}),
  Schema.TaggedStruct("Reject", { message: Schema.optionalKey(Schema.String) }),
  Schema.TaggedStruct("Edit", { params: Schema.Unknown })
]).annotate({ identifier: "ApprovalDecision" })

/**
 * @category models
 * @since 0.1.0
 */
export type Decision = typeof Decision.Type

/**
 * Approve: run the call as the model asked.
 *
 * @example
 * ```ts
 * import { Approval } from "loopwork"
 *
 * const decisions = { call_1: Approval.approve }
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const approve: Decision = { _tag: "Approve" }

/**
 * Reject: do not run the call. The model sees `message` (or "Tool call 'x'
 * was rejected by a human reviewer.") as a non-error result.
 *
 * @example
 * ```ts
 * import { Approval } from "loopwork"
 *
 * const decisions = { call_2: Approval.reject("Transfers need a ticket number.") }
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const reject = (message?: string): Decision =>
  message === undefined ? { _tag: "Reject" } : { _tag: "Reject", message }

/**
 * Edit: run the call with these arguments instead.
 *
 * @example
 * ```ts
 * import { Approval } from "loopwork"
 *
 * const decisions = { call_3: Approval.edit({ amount: 100, currency: "EUR" }) }
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const edit = (params: unknown): Decision => ({ _tag: "Edit", params })

/**
 * The calls of a chain waiting for a decision. Given something that is not a chain (from
 * JavaScript), it throws `InvalidInput` (`chain`).
 *
 * @example
 * ```ts
 * import { Approval, Chain } from "loopwork"
 *
 * declare const paused: Chain.Chain
 * for (const call of Approval.pending(paused)) console.log(call.id, call.name, call.params)
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const pending = (chain: Chain): ReadonlyArray<ToolCall> =>
  chainOrThrow(chain).pendingToolCalls.filter((call) => chain.callStates.get(call.id)?._tag === "AwaitingApproval")

const decodeDecisions = Schema.decodeUnknownEffect(Schema.Record(Schema.String, Decision))

/**
 * Records decisions, by call id, on a chain paused for approval. Every
 * decision is checked first: ids that are not awaiting approval fail with
 * `CallNotAwaiting`, edited arguments that do not match the tool's schema
 * fail with `InvalidResumeValue`, and in either case nothing changes. Run the
 * returned chain again to carry them out. Input from JSON or JavaScript that
 * is not a chain, or not a record of decisions, fails with `InvalidInput`
 * (`chain`, `approval decisions`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Approval, Chain, Mode } from "loopwork"
 *
 * declare const paused: Chain.Chain
 * const resumed = Approval.decide(paused, {
 *   call_1: Approval.approve,
 *   call_2: Approval.reject("Not today."),
 *   call_3: Approval.edit({ amount: 100 })
 * }).pipe(Effect.flatMap((chain) => Chain.run(chain, { mode: Mode.whileNeedsResponse })))
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const decide: {
  (decisions: Readonly<Record<string, Decision>>): <Tools extends Record<string, Tool.Any>>(
    chain: Chain<Tools>
  ) => Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput>
  <Tools extends Record<string, Tool.Any>>(
    chain: Chain<Tools>,
    decisions: Readonly<Record<string, Decision>>
  ): Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput>
} = Function.dual(2, <Tools extends Record<string, Tool.Any>>(
  chain: Chain<Tools>,
  input: Readonly<Record<string, Decision>>
): Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput> =>
  Effect.gen(function*() {
    if (!isChain(chain)) {
      return yield* new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: chain })
    }
    // Checked and kept as copied now: the caller's object may change after this call, or answer differently when read again.
    const copied = recordSnapshot(input)
    if (Result.isFailure(copied)) {
      return yield* new InvalidInput({ field: "approval decisions", rule: `must be plain data: ${copied.failure}`, value: "(not shown)" })
    }
    // A key no decision has (`{ _tag: "Reject", mesage: "…" }`) is refused, not dropped: the human meant something by it.
    const decisions = yield* decodeDecisions(copied.success, { onExcessProperty: "error" }).pipe(
      Effect.mapError((error) =>
        new InvalidInput({
          field: "approval decisions",
          rule: `must map call ids to Approve, Reject or Edit decisions (${error.message})`,
          value: copied.success
        })
      )
    )
    const waiting = pending(chain)
    const byId = new Map(waiting.map((call) => [call.id, call]))
    const unknown = Object.keys(decisions).filter((id) => !byId.has(id))
    if (unknown.length > 0) {
      return yield* new CallNotAwaiting({ ids: unknown, awaiting: "approval", waiting: waitingIds(waiting) })
    }
    const edits = new Map<string, unknown>()
    for (const [id, decision] of Object.entries(decisions)) {
      if (decision._tag === "Reject" && decision.message !== undefined) {
        // Kept in the chain and shown to the model: bounded like every value a chain keeps.
        const problem = unstorable("rejection message", decision.message)
        if (problem !== undefined) return yield* new InvalidInput({ field: `approval decisions[${JSON.stringify(id)}].message`, rule: problem, value: "(not shown)" })
      }
      if (decision._tag !== "Edit") continue
      const call = byId.get(id)!
      yield* checkParamsFor(chain.toolkit, call.name, decision.params).pipe(
        Effect.mapError((issue) => new InvalidResumeValue({ what: "arguments", callId: id, tool: call.name, issue }))
      )
      edits.set(id, decision.params)
    }
    const callStates = new Map<string, CallState>(chain.callStates)
    for (const [id, decision] of Object.entries(decisions)) {
      callStates.set(
        id,
        decision._tag === "Reject"
          ? (decision.message === undefined ? { _tag: "Rejected" } : { _tag: "Rejected", message: decision.message })
          : { _tag: "Approved" }
      )
    }
    return withEdits(chain, edits).copy({ callStates })
  }))

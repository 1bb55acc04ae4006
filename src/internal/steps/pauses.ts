/**
 * Pausing at a clean point: `checkStop` (a human asked), `checkAwaiting` (approvals, external results), `checkPause` (a predicate of your own).
 *
 * @internal
 */
import { Effect } from "effect"
import type { Chain } from "../chain.ts"
import { checkFunction, checkPauseReason, checkStop as stopProblem } from "../checks.ts"
import { guarded } from "../guarded.ts"
import * as Outcome from "../../Outcome.ts"
import { isRaised, type StopSignal as Signal } from "../stopSignal.ts"
import { waiting } from "./roundState.ts"
import { continued, lift, refused, type Step } from "../step.ts"

/**
 * Pauses with reason `StopRequested` when `signal` has been raised. Place it
 * after `executeTools`: the loop then stops between rounds, never between a
 * tool call and its result, and a stop raised during a model call takes
 * effect once that call's tools have run.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Step, StopSignal } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   return yield* Step.start(chain).pipe(Step.executeTools, Step.checkStop(stop))
 * })
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkStop = (signal: Signal): Step => {
  const invalid = stopProblem(signal, "checkStop signal")
  if (invalid !== undefined) return refused(invalid)
  return lift((chain) =>
    isRaised(signal) ? Effect.succeed(new Outcome.Pause(chain, { _tag: "StopRequested" })) : continued(chain)
  )
}

/**
 * Pauses when calls of the current round wait: `ApprovalPending` (listing the
 * calls) when any waits for approval, otherwise `ExternalPending` when any
 * waits for an external result. Place it after `executeTools`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkAwaiting)
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkAwaiting: Step = lift((chain) => {
  if (chain.pendingToolCalls.length === 0) return continued(chain)
  return Effect.succeed(waiting(chain) ?? new Outcome.Continue(chain))
})

/**
 * Pauses (a clean, resumable checkpoint) when `predicate` says so. The
 * predicate may be a plain function or return an Effect; `reason` defaults to
 * `StopRequested`.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * let draining = false
 * const drain = Step.checkPause(() => draining)
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkPause = <R = never>(
  predicate: (chain: Chain) => boolean | Effect.Effect<boolean, never, R>,
  reason: Outcome.PauseReason = { _tag: "StopRequested" }
): Step<R> => {
  const invalid = checkFunction(predicate, "checkPause predicate", "must be a function of the chain") ??
    checkPauseReason(reason, "checkPause reason")
  if (invalid !== undefined) return refused(invalid)
  return lift((chain) =>
    guarded(
      chain,
      "checkPause",
      () => predicate(chain),
      (yes): Outcome.Outcome => yes ? new Outcome.Pause(chain, reason) : new Outcome.Continue(chain)
    )
  )
}

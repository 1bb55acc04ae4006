/**
 * The `maxRuns` budget of the run in progress, as a backstop every model call
 * of `Step.callLlm` honours: a custom mode whose `checkMaxRuns` sits where it
 * never fires (after `callLlm` while tool calls are pending, say), or that has
 * none, is still bounded. `Chain.run` provides it; at the limit the run's
 * `onMaxRuns` policy applies, exactly as `Step.checkMaxRuns` applies it.
 *
 * @internal
 */
import { Context, type Effect } from "effect"
import type { ChatModel } from "../ChatModel.ts"
import type { Outcome } from "../Outcome.ts"
import type { Chain } from "./chain.ts"

/** @internal */
export interface RunBudget {
  /** The chain's `runCount` when the run's budget started. */
  readonly since: number
  readonly maxRuns: number
  /** What the run does at the limit instead of another model call (its `onMaxRuns`). */
  readonly atLimit: (chain: Chain) => Effect.Effect<Outcome, never, ChatModel>
}

/**
 * The budget of the run in progress (`undefined` outside `Chain.run`, e.g. a
 * step tried on its own).
 *
 * @internal
 */
export const CurrentRunBudget = Context.Reference<RunBudget | undefined>("loopwork/RunBudget", {
  defaultValue: () => undefined
})

/** @internal whether `chain` has used up `budget` */
export const exhausted = (budget: RunBudget | undefined, chain: Chain): budget is RunBudget =>
  budget !== undefined && chain.runCount - budget.since >= budget.maxRuns

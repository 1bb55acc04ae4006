/**
 * The `maxRuns` budget of a run that spans pauses. A run's budget starts at
 * the chain's `runCount`; when the run pauses, the start is kept in the
 * chain's `modeState` (so it travels in the JSON document) and the resumed
 * run continues the same budget. A finished or failed run clears it, so the
 * next question gets a fresh budget.
 *
 * @internal
 */
import type { Chain } from "./chain.ts"

/** @internal where the budget start is kept in `modeState` */
export const budgetKey = "loopwork/budgetStart"
const key = budgetKey

/** @internal where the budget of a run on `chain` starts */
export const budgetStart = (chain: Chain): number => {
  const kept = chain.modeState[key]
  return typeof kept === "number" && Number.isInteger(kept) && kept >= 0 && kept <= chain.runCount ? kept : chain.runCount
}

/** @internal the paused chain, remembering where its run's budget started */
export const keepBudget = (chain: Chain, since: number): Chain =>
  chain.modeState[key] === since ? chain : chain.copy({ modeState: { ...chain.modeState, [key]: since } })

/** @internal the chain of a finished or failed run, with no budget kept */
export const clearBudget = (chain: Chain): Chain => {
  if (!Object.hasOwn(chain.modeState, key)) return chain
  const { [key]: _, ...rest } = chain.modeState
  return chain.copy({ modeState: rest })
}

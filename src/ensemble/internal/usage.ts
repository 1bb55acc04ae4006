/**
 * What a run has used of its budgets and its constraints' counts, as data.
 * A durable ensemble's child workflow (a task, a delegation) starts from
 * its parent's usage, and the parent adds what the child used (recorded
 * with the child's result, so a replay adds the same), so budgets
 * and constraints bound the whole ensemble, as in `Ensemble.run`, not each
 * workflow apart. Children that run side by side each start from the usage
 * at their start: between them, a cap can be passed by what they use at once.
 *
 * @internal
 */
import { Schema } from "effect"
import type { Budget } from "./budget.ts"
import type { Guard } from "./guard.ts"

/** @internal */
export const Usage = Schema.Struct({
  modelCalls: Schema.Int,
  delegations: Schema.Int,
  exceeded: Schema.optionalKey(Schema.Literals(["maxModelCalls", "maxDelegations"])),
  approved: Schema.Array(Schema.Tuple([Schema.String, Schema.Int])),
  completed: Schema.Array(Schema.String)
})

/** @internal */
export type Usage = typeof Usage.Type

interface Counted {
  readonly budget: Budget
  readonly guard: Guard
}

/** @internal what `d` has used so far */
export const usageOf = (d: Counted): Usage => ({
  modelCalls: d.budget.modelCalls,
  delegations: d.budget.delegations,
  ...(d.budget.exceeded === undefined ? {} : { exceeded: d.budget.exceeded }),
  ...d.guard.counts()
})

/** @internal a child's run starts where its parent's was */
export const startFrom = (d: Counted, usage: Usage): void => {
  d.budget.modelCalls = usage.modelCalls
  d.budget.delegations = usage.delegations
  if (usage.exceeded !== undefined) d.budget.exceeded = usage.exceeded
  d.guard.add(usage)
}

/** @internal what a run used between `start` and `end`: its counts' differences, the workers it saw complete */
export const used = (start: Usage, end: Usage): Usage => {
  const was = new Map(start.approved)
  return {
    modelCalls: Math.max(0, end.modelCalls - start.modelCalls),
    delegations: Math.max(0, end.delegations - start.delegations),
    ...(end.exceeded !== undefined && start.exceeded === undefined ? { exceeded: end.exceeded } : {}),
    approved: end.approved.flatMap(([key, n]) => n > (was.get(key) ?? 0) ? [[key, n - (was.get(key) ?? 0)] as const] : []),
    completed: end.completed
  }
}

/** @internal adds to `d` what a child used */
export const addUsed = (d: Counted, usage: Usage): void => {
  d.budget.modelCalls += usage.modelCalls
  d.budget.delegations += usage.delegations
  if (usage.exceeded !== undefined && d.budget.exceeded === undefined) d.budget.exceeded = usage.exceeded
  d.guard.add(usage)
}

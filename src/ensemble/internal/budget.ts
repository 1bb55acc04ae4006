/**
 * The run-wide budgets of one `Ensemble.run`: model calls (every agent's,
 * the manager's, structured-output retries, workers reached by delegation)
 * and approved delegations (manager and peer). Once a budget is used up the
 * run stops: every later model call and delegation is refused, the agents
 * still working fail at once, and the run fails with `BudgetExceededError`
 * carrying the outputs completed so far.
 *
 * @internal
 */
import { Effect, Stream } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import { infoOf } from "../../internal/chatModel.ts"
import type { DelegationRecord } from "../Delegation.ts"
import { BudgetExceededError } from "../EnsembleError.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { ModelCallFailed } from "../../LoopError.ts"
import type { Durability } from "../../internal/durability.ts"
import { generateNow, withGenerateNow } from "../../internal/generateNow.ts"
import { streamedTurn, withStreamedTurn } from "../../internal/streamedTurn.ts"

/** @internal which budget a run used up */
export type Kind = "maxModelCalls" | "maxDelegations"

/** @internal one run's budgets and what it has used */
export interface Budget {
  readonly maxModelCalls: number
  readonly maxDelegations: number
  modelCalls: number
  delegations: number
  /** The budget that ran out, once one has. */
  exceeded: Kind | undefined
}

/** @internal a fresh budget for one run */
export const make = (limits: { readonly maxModelCalls: number; readonly maxDelegations: number }): Budget => ({
  maxModelCalls: limits.maxModelCalls,
  maxDelegations: limits.maxDelegations,
  modelCalls: 0,
  delegations: 0,
  exceeded: undefined
})

/** @internal what a refused model call or delegation says */
export const refusal = (budget: Budget): string => {
  const kind = budget.exceeded ?? "maxModelCalls"
  return `the run's budget ${kind} (${limitOf(budget, kind)}) is used up; the run stops`
}

const limitOf = (budget: Budget, kind: Kind): number =>
  kind === "maxModelCalls" ? budget.maxModelCalls : budget.maxDelegations

/** Takes one model call from the budget; `false` when the run may make no more. */
const takeModelCall = (budget: Budget): boolean => {
  if (budget.exceeded !== undefined) return false
  if (budget.modelCalls >= budget.maxModelCalls) {
    budget.exceeded = "maxModelCalls"
    return false
  }
  budget.modelCalls++
  return true
}

/** @internal takes one delegation from the budget; `false` when the run may make no more */
export const takeDelegation = (budget: Budget): boolean => {
  if (budget.exceeded !== undefined) return false
  if (budget.delegations >= budget.maxDelegations) {
    budget.exceeded = "maxDelegations"
    return false
  }
  budget.delegations++
  return true
}

/**
 * @internal `model` with every call taken from the budget (refused ones fail
 * without reaching the model): when the call runs, or, for the loop, which
 * runs it at once, when it is made (no step of the runtime; see generateNow.ts
 * and, for a streamed answer that is whole when asked, streamedTurn.ts)
 */
export const counted = (budget: Budget, model: ChatModel["Service"]): ChatModel["Service"] => {
  const refused = () => new ModelCallFailed({ description: refusal(budget), cause: undefined, retryable: false })
  const now: ChatModel["Service"]["generate"] = (request) =>
    takeModelCall(budget) ? generateNow(model, request) : Effect.fail(refused())
  const service = withGenerateNow({
    info: infoOf(model),
    generate: (request) => Effect.suspend(() => now(request)),
    stream: (request) => Stream.suspend(() => (takeModelCall(budget) ? model.stream(request) : Stream.fail(refused())))
  }, now)
  const turn = streamedTurn(model)
  return turn === undefined
    ? service
    : withStreamedTurn(service, (request) => takeModelCall(budget) ? turn(request) : Effect.fail(refused()))
}

/**
 * @internal `durability` that takes each model call it replays (returns
 * recorded, without making it) from the budget, as the call was taken when
 * it was made: a replay rebuilds the budget's counts, refusals included
 */
export const replayed = (budget: Budget, durability: Durability): Durability => ({
  ...durability,
  modelCall: (call) =>
    Effect.suspend(() => {
      let made = false
      const making = Effect.suspend(() => {
        made = true
        return call
      })
      return Effect.ensuring(durability.modelCall(making), Effect.sync(() => made || takeModelCall(budget)))
    })
})

/** @internal the run's error once a budget ran out */
export const exceededError = (
  budget: Budget,
  kind: Kind,
  completedOutputs: ReadonlyArray<TaskOutput>,
  delegations: ReadonlyArray<DelegationRecord>
): BudgetExceededError =>
  new BudgetExceededError({ budget: kind, limit: limitOf(budget, kind), completedOutputs, delegations })

/**
 * Where an ensemble's work runs: in the run's own fiber (the default), or
 * somewhere a durable engine chooses — `loopwork/durable` runs each task
 * and each approved delegation's worker as a child workflow. The reference
 * is absent unless a durable ensemble's body provides it, so `Ensemble.run`
 * pays nothing for it.
 *
 * @internal
 */
import { Context, DateTime, Effect } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import type { DelegationRecord } from "../Delegation.ts"
import type { Budget } from "./budget.ts"
import type { Guard } from "./guard.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { type Place, type Placed, placeAll, placeUnder } from "./recordOrder.ts"
import type { ResolvedTask, TaskFailure } from "./runTask.ts"
import { addUsed, type Usage, usageOf } from "./usage.ts"

/** @internal what work run elsewhere brings back besides its output */
export interface RemoteTask {
  readonly output: TaskOutput
  /** Delegations its agent made, for the run's records. */
  readonly delegations: ReadonlyArray<DelegationRecord>
  /** Where each of them goes, its path relative to the work's (see `recordOrder.ts`). */
  readonly places?: ReadonlyArray<Place> | undefined
  /** Tool calls of agents it reached through peer delegation. */
  readonly peerToolCalls: number
  /** What the work used of the run's budgets and constraints (from the usage it was given). */
  readonly usage: Usage
}

/** @internal an approved delegation's work, as a worker elsewhere is given it */
export interface DelegatedWork {
  /** The tool call that asked for it: with the n-th run of its handler, the key of the work. */
  readonly callId: string
  readonly work: ResolvedTask
  /** The ensemble's task the work is (a manager's numbered delegation), by position. */
  readonly taskIndex: number | undefined
  readonly context: ReadonlyArray<TaskOutput>
  readonly depth: number
}

/** @internal when a delegation attempt ended (epoch millis) and how long it took */
export interface Ended {
  readonly at: number
  readonly millis: number
}

/** @internal */
export interface TaskRunner {
  /**
   * Runs the ensemble's `index`-th task (`task`, templates filled) with the
   * outputs it depends on, starting from the run's `usage` of its budgets.
   */
  readonly run: (
    index: number,
    task: ResolvedTask,
    context: ReadonlyArray<TaskOutput>,
    usage: Usage
  ) => Effect.Effect<RemoteTask, TaskFailure, ChatModel>
  /** Runs an approved delegation's worker. */
  readonly delegate: (delegated: DelegatedWork, usage: Usage) => Effect.Effect<RemoteTask, TaskFailure, ChatModel>
  /**
   * When the delegation asked for at `started` by the tool call `callId`
   * (its record's place: `path`), which did not succeed, ended: a durable
   * body stores it under the call, so a replay gets the same.
   */
  readonly ended: (attempt: {
    readonly callId: string | undefined
    readonly path: ReadonlyArray<number>
    readonly started: number
  }) => Effect.Effect<Ended>
}

/** @internal */
export const CurrentTaskRunner = Context.Reference<TaskRunner | undefined>("loopwork/ensemble/TaskRunner", {
  defaultValue: () => undefined
})

/** @internal what work run elsewhere adds to: the run's budgets, guard, records and counters */
export interface Shared extends Placed {
  readonly budget: Budget
  readonly guard: Guard
  readonly counters: { peerToolCalls: number }
}

/**
 * Runs work elsewhere (`start`, given the run's usage so far), then adds to
 * the run what it used, the delegations it made, at their places under the
 * work's `path`, and the tool calls of the agents it reached — also when it
 * failed, as `Ensemble.run` keeps what a failing worker's delegations left.
 *
 * @internal
 */
export const remotely = <R>(
  d: Shared,
  path: ReadonlyArray<number>,
  start: (usage: Usage) => Effect.Effect<RemoteTask, TaskFailure, R>
): Effect.Effect<TaskOutput, TaskFailure, R> =>
  Effect.suspend(() =>
    Effect.matchEffect(start(usageOf(d)), {
      onFailure: (failure) => {
        if (failure.usage !== undefined) addUsed(d, failure.usage)
        if (failure.made !== undefined) {
          placeUnder(d, path, failure.made.delegations, failure.made.places)
          d.counters.peerToolCalls += failure.made.peerToolCalls
        }
        return Effect.fail(failure)
      },
      onSuccess: (remote) => {
        addUsed(d, remote.usage)
        placeAll(d, path, remote.delegations, remote.places, DateTime.toEpochMillis(remote.output.completedAt))
        d.counters.peerToolCalls += remote.peerToolCalls
        return Effect.succeed(remote.output)
      }
    })
  )

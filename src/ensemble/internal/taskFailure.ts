/**
 * Why a task failed, as the workflows carry it until it becomes the run's
 * error (`TaskExecutionError`, `ParallelExecutionError`, …).
 *
 * @internal
 */
import { redactSecrets } from "../../internal/redact.ts"
import type { DelegationRecord } from "../Delegation.ts"
import type { Place } from "./recordOrder.ts"
import type { Usage } from "./usage.ts"

/**
 * @internal what work run elsewhere made before it failed: the records of
 * the delegations its agent made, a place for each (its path relative to the
 * work's, see `recordOrder.ts`), and the tool calls of the agents it reached
 * through peer delegation — what `Ensemble.run` keeps of a failing worker
 */
export interface Made {
  readonly delegations: ReadonlyArray<DelegationRecord>
  /** Where each record goes, by position: as many as there are records. */
  readonly places: ReadonlyArray<Place>
  readonly peerToolCalls: number
}

/**
 * @internal why a task failed; from a durable ensemble's child, with what
 * the child used of the run's budgets and constraints and what it made. The
 * reason is redacted here, whatever its source: it reaches the run's error,
 * its events and a durable child's stored result, and some reasons quote
 * what a model or a tool said (a schema error quotes the answer it refused).
 */
export class TaskFailure {
  readonly reason: string
  readonly usage: Usage | undefined
  readonly made: Made | undefined
  constructor(reason: string, usage?: Usage, made?: Made) {
    this.reason = redactSecrets(reason)
    this.usage = usage
    this.made = made
  }
}

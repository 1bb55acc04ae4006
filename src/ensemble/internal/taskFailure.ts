/**
 * Why a task failed, as the workflows carry it until it becomes the run's
 * error (`TaskExecutionError`, `ParallelExecutionError`, …).
 *
 * @internal
 */
import type { Usage } from "./usage.ts"

/** @internal why a task failed; from a durable ensemble's child, with what the child used of the run's budgets and constraints */
export class TaskFailure {
  readonly reason: string
  readonly usage: Usage | undefined
  constructor(reason: string, usage?: Usage) {
    this.reason = reason
    this.usage = usage
  }
}

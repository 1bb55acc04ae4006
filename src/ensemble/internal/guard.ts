/**
 * The run-time guard of a run's delegations. In a HIERARCHICAL run it holds
 * the constraints and their counts, and every delegation made inside the run
 * (the manager's and the workers' peer delegations, at any depth) passes it,
 * in the specification's order: allowed workers, global cap, per-worker cap,
 * stage order. Every approved delegation counts toward the caps; completed
 * delegations of the manager open the next stage and satisfy required
 * workers. Other workflows have no constraints: their guard lets everything
 * through.
 *
 * @internal
 */
import type * as Agent from "../Agent.ts"
import type { HierarchicalConstraints } from "../HierarchicalConstraints.ts"
import * as Role from "../Role.ts"

/** @internal */
export interface Guard {
  /** Why a delegation to `worker` is refused, or `undefined`. */
  readonly refuse: (worker: Agent.Any) => string | undefined
  /** Counts an approved delegation to `worker`. */
  readonly approve: (worker: Agent.Any) => void
  /** The manager's delegation to `worker` completed. */
  readonly complete: (worker: Agent.Any) => void
  /** The required workers the manager has not delegated to (as configured). */
  readonly missing: () => ReadonlyArray<string>
  /** What the guard has counted: approvals per worker (by role key) and the workers whose delegation completed. */
  readonly counts: () => GuardCounts
  /** Adds counts made elsewhere (a durable ensemble's child workflow) to this guard's. */
  readonly add: (counts: GuardCounts) => void
}

/** @internal what a guard has counted, as data */
export interface GuardCounts {
  readonly approved: ReadonlyArray<readonly [string, number]>
  readonly completed: ReadonlyArray<string>
}

/** @internal the guard of a run without constraints */
export const open: Guard = {
  refuse: () => undefined,
  approve: () => {},
  complete: () => {},
  missing: () => [],
  counts: () => ({ approved: [], completed: [] }),
  add: () => {}
}

/** @internal a fresh guard for one HIERARCHICAL run */
export const make = (constraints: HierarchicalConstraints): Guard => {
  const allowed = new Set((constraints.allowedWorkers ?? []).map(Role.key))
  const caps = new Map(Object.entries(constraints.maxCallsPerWorker ?? {}).map(([role, cap]) => [Role.key(role), cap]))
  const globalCap = constraints.globalMaxDelegations ?? 0
  const stages = constraints.requiredStages ?? []
  const approved = new Map<string, number>()
  let approvedTotal = 0
  const completed = new Set<string>()

  const refuse = (worker: Agent.Any): string | undefined => {
    const key = Role.key(worker.role)
    if (allowed.size > 0 && !allowed.has(key)) {
      return `Worker '${worker.role}' is not in the allowed workers list. Allowed: [${(constraints.allowedWorkers ?? []).join(", ")}]`
    }
    if (globalCap > 0 && approvedTotal >= globalCap) {
      return `Global delegation cap of ${globalCap} reached. No further delegations are permitted in this run.`
    }
    const cap = caps.get(key)
    if (cap !== undefined && (approved.get(key) ?? 0) >= cap) {
      return `Worker '${worker.role}' has reached its per-worker delegation cap of ${cap}.`
    }
    const stage = stages.findIndex((roles) => roles.some((role) => Role.same(role, worker.role)))
    for (let earlier = 0; earlier < stage; earlier++) {
      const waiting = stages[earlier].find((role) => !completed.has(Role.key(role)))
      if (waiting !== undefined) {
        return `Worker '${worker.role}' cannot be delegated to yet: stage ${earlier + 1} worker '${waiting}' has not yet completed. All workers in earlier stages must complete before this stage can begin.`
      }
    }
    return undefined
  }

  return {
    refuse,
    approve: (worker) => {
      const key = Role.key(worker.role)
      approved.set(key, (approved.get(key) ?? 0) + 1)
      approvedTotal++
    },
    complete: (worker) => {
      completed.add(Role.key(worker.role))
    },
    missing: () => (constraints.requiredWorkers ?? []).filter((role) => !completed.has(Role.key(role))),
    counts: () => ({ approved: [...approved], completed: [...completed] }),
    add: (counts) => {
      for (const [key, n] of counts.approved) {
        approved.set(key, (approved.get(key) ?? 0) + n)
        approvedTotal += n
      }
      for (const key of counts.completed) completed.add(key)
    }
  }
}

/**
 * Constraints on a HIERARCHICAL run: which workers the manager must use, may
 * use, how often, and in which order of stages.
 *
 * Checked when `Ensemble.make` / `run` starts (the specification's
 * cross-validation rules and messages), enforced on every `delegateTask`
 * call (the blocked attempt is returned to the manager as the tool's result,
 * in this order: allowed workers, global cap, per-worker cap, stage order),
 * and, for required workers, after the manager finishes
 * (`ConstraintViolationError`). Roles match as everywhere (`Role.same`:
 * trimmed, case-insensitive). Caps count approved attempts; stages and
 * required workers count completed delegations. Peer delegations between
 * workers do not count.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import * as Role from "./Role.ts"

/**
 * The constraints; every field is optional (empty: no constraint; a
 * `globalMaxDelegations` of 0: unlimited).
 *
 * @example
 * ```ts
 * import { HierarchicalConstraints } from "loopwork/ensemble"
 *
 * const constraints: HierarchicalConstraints.HierarchicalConstraints = {
 *   requiredWorkers: ["Researcher"],
 *   allowedWorkers: ["Researcher", "Writer"],
 *   maxCallsPerWorker: { Researcher: 3, Writer: 2 },
 *   globalMaxDelegations: 10,
 *   requiredStages: [["Researcher"], ["Writer"]]
 * }
 * ```
 *
 * @since 0.1.0
 */
export const HierarchicalConstraints = Schema.Struct({
  requiredWorkers: Schema.optionalKey(Schema.Array(Schema.String)),
  allowedWorkers: Schema.optionalKey(Schema.Array(Schema.String)),
  maxCallsPerWorker: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  globalMaxDelegations: Schema.optionalKey(Schema.Number),
  requiredStages: Schema.optionalKey(Schema.Array(Schema.Array(Schema.String)))
}).annotate({ identifier: "HierarchicalConstraints" })

/**
 * @since 0.1.0
 */
export interface HierarchicalConstraints extends Schema.Schema.Type<typeof HierarchicalConstraints> {}

/**
 * The first broken cross-validation rule, as the specification words it, or
 * `undefined`. `roles` are the roles of the ensemble's agents.
 *
 * @example
 * ```ts
 * import { HierarchicalConstraints } from "loopwork/ensemble"
 *
 * HierarchicalConstraints.check({ allowedWorkers: ["Editor"] }, ["Researcher"])
 * // "HierarchicalConstraints.allowedWorkers references unknown agent: 'Editor'"
 * ```
 *
 * @since 0.1.0
 */
export const check = (constraints: HierarchicalConstraints, roles: ReadonlyArray<string>): string | undefined => {
  const known = new Set(roles.map(Role.key))
  const isKnown = (role: string) => known.has(Role.key(role))
  const allowed = constraints.allowedWorkers ?? []
  const required = constraints.requiredWorkers ?? []
  for (const role of allowed) {
    if (!isKnown(role)) return `HierarchicalConstraints.allowedWorkers references unknown agent: '${role}'`
  }
  if (allowed.length > 0) {
    const allowedKeys = new Set(allowed.map(Role.key))
    for (const role of required) {
      if (!allowedKeys.has(Role.key(role))) {
        return `HierarchicalConstraints.requiredWorkers contains '${role}' which is not in allowedWorkers`
      }
    }
  }
  for (const role of required) {
    if (!isKnown(role)) return `HierarchicalConstraints.requiredWorkers references unknown agent: '${role}'`
  }
  const caps = constraints.maxCallsPerWorker ?? {}
  for (const role of Object.keys(caps)) {
    if (!isKnown(role)) return `HierarchicalConstraints.maxCallsPerWorker references unknown agent: '${role}'`
  }
  for (const [role, cap] of Object.entries(caps)) {
    if (!(Number.isInteger(cap) && cap > 0)) {
      return `HierarchicalConstraints.maxCallsPerWorker value for '${role}' must be > 0, got: ${cap}`
    }
  }
  const global = constraints.globalMaxDelegations ?? 0
  if (!(Number.isInteger(global) && global >= 0)) {
    return `HierarchicalConstraints.globalMaxDelegations must be >= 0, got: ${global}`
  }
  const stages = constraints.requiredStages ?? []
  for (const stage of stages) {
    for (const role of stage) {
      if (!isKnown(role)) return `HierarchicalConstraints.requiredStages references unknown agent: '${role}'`
    }
  }
  const stageOf = new Map<string, number>()
  for (const [index, stage] of stages.entries()) {
    for (const role of stage) {
      const seen = stageOf.get(Role.key(role))
      if (seen !== undefined && seen !== index) {
        return `HierarchicalConstraints.requiredStages contains duplicate agent role '${role}' in multiple stages`
      }
      stageOf.set(Role.key(role), index)
    }
  }
  return undefined
}

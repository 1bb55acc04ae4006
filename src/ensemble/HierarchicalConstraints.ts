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
 * trimmed, case-insensitive).
 *
 * The constraints bound every delegation made inside a HIERARCHICAL run: the
 * manager's `delegateTask` calls and the peer `delegate` calls of workers
 * with `allowDelegation`, at any depth. Each one passes the same guards
 * (allowed workers, global cap, per-worker cap, stage order) and every
 * approved one counts toward the caps, so the manager cannot reach a worker
 * it may not use through one it may. What the manager must get done
 * (required workers, and the completed stages that open the next stage)
 * counts the manager's own delegations only.
 *
 * A wrongly shaped value (from JSON, YAML or JavaScript) is reported by
 * `check` as well: `allowedWorkers: "Writer"` is not read letter by letter.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { type Check, count, isRecord, list, optional, problem, show } from "./internal/rules.ts"
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
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface HierarchicalConstraints extends Schema.Schema.Type<typeof HierarchicalConstraints> {}

const roleList = (field: string): Check => (u) =>
  u === undefined ? undefined : list(`HierarchicalConstraints.${field}`, "roles", (role) =>
    typeof role === "string" ? undefined : `must be a role, got: ${show(role)}`)(u)

const capsShape: Check = (u) => {
  if (u === undefined) return undefined
  if (!isRecord(u)) return `HierarchicalConstraints.maxCallsPerWorker must be an object of caps by role, got: ${show(u)}`
  for (const [role, cap] of Object.entries(u)) {
    if (typeof cap !== "number") {
      return `HierarchicalConstraints.maxCallsPerWorker value for '${role}' must be a number, got: ${show(cap)}`
    }
  }
  return undefined
}

const stagesShape: Check = (u) =>
  u === undefined ? undefined : list("HierarchicalConstraints.requiredStages", "stages, each an array of roles", (stage) =>
    Array.isArray(stage) && stage.every((role) => typeof role === "string")
      ? undefined
      : `must be an array of roles, got: ${show(stage)}`)(u)

/** The shape of the constraints, before the cross-validation rules. */
const Shape = Schema.Struct({
  requiredWorkers: optional<ReadonlyArray<string>>(roleList("requiredWorkers")),
  allowedWorkers: optional<ReadonlyArray<string>>(roleList("allowedWorkers")),
  maxCallsPerWorker: optional<Readonly<Record<string, number>>>(capsShape),
  globalMaxDelegations: optional<number>((u) =>
    u === undefined || typeof u === "number"
      ? undefined
      : `HierarchicalConstraints.globalMaxDelegations must be a number, got: ${show(u)}`
  ),
  requiredStages: optional<ReadonlyArray<ReadonlyArray<string>>>(stagesShape)
}).annotate({ message: "HierarchicalConstraints must be an object" })

/**
 * What is wrong with the shape of a value given as constraints (from JSON,
 * YAML or JavaScript), or `undefined`.
 *
 * @example
 * ```ts
 * import { HierarchicalConstraints } from "loopwork/ensemble"
 *
 * HierarchicalConstraints.shapeProblem({ allowedWorkers: "Writer" })
 * // "HierarchicalConstraints.allowedWorkers must be an array of roles, got: \"Writer\""
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const shapeProblem = (u: unknown): string | undefined =>
  u === undefined ? undefined : problem(Shape, u, "HierarchicalConstraints")

/**
 * The first broken rule, or `undefined`: first the shape of the value, then
 * the specification's cross-validation rules, as it words them. `roles` are
 * the roles of the ensemble's agents.
 *
 * @example
 * ```ts
 * import { HierarchicalConstraints } from "loopwork/ensemble"
 *
 * HierarchicalConstraints.check({ allowedWorkers: ["Editor"] }, ["Researcher"])
 * // "HierarchicalConstraints.allowedWorkers references unknown agent: 'Editor'"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const check = (constraints: HierarchicalConstraints, roles: ReadonlyArray<string>): string | undefined =>
  shapeProblem(constraints) ?? crossCheck(constraints ?? {}, roles)

const crossCheck = (constraints: HierarchicalConstraints, roles: ReadonlyArray<string>): string | undefined => {
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
    const wrong = count(`HierarchicalConstraints.maxCallsPerWorker value for '${role}'`, 1)(cap)
    if (wrong !== undefined) return wrong
  }
  const global = count("HierarchicalConstraints.globalMaxDelegations", 0)(constraints.globalMaxDelegations ?? 0)
  if (global !== undefined) return global
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

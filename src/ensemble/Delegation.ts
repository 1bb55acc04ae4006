/**
 * Delegation records: every attempt to hand work to another agent (a
 * manager's `delegateTask`, or a peer's `delegate`) yields a request and a
 * response with the same `taskId`, including attempts a guard blocked
 * (status `FAILURE`, the reason in `errors`). They are plain data for
 * observability and audit; the model only sees the worker's text or the
 * reason it was blocked.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * How a delegation ended.
 *
 * @example
 * ```ts
 * import { Delegation } from "loopwork/ensemble"
 *
 * const status: Delegation.DelegationStatus = "SUCCESS"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DelegationStatus = Schema.Literals(["SUCCESS", "FAILURE", "PARTIAL"]).annotate({ identifier: "DelegationStatus" })

/**
 * @category models
 * @since 0.1.0
 */
export type DelegationStatus = typeof DelegationStatus.Type

/**
 * A priority hint.
 *
 * @example
 * ```ts
 * import { Delegation } from "loopwork/ensemble"
 *
 * const priority: Delegation.DelegationPriority = "NORMAL"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DelegationPriority = Schema.Literals(["LOW", "NORMAL", "HIGH", "CRITICAL"]).annotate({
  identifier: "DelegationPriority"
})

/**
 * @category models
 * @since 0.1.0
 */
export type DelegationPriority = typeof DelegationPriority.Type

/**
 * A delegation as requested: the target role, the subtask, and the
 * specification's optional fields with their defaults (empty scope, priority
 * `NORMAL`, no output schema, `maxOutputRetries` 0, empty metadata). When the
 * work is held to a task's `outputType` (a manager's `delegateTask` with the
 * task's number), `expectedOutputSchema` is the JSON Schema the worker is
 * shown (as a JSON string) and `maxOutputRetries` the task's.
 *
 * @example
 * ```ts
 * import { Delegation } from "loopwork/ensemble"
 *
 * const request: Delegation.DelegationRequest = {
 *   taskId: "7c1f…", agentRole: "Writer", taskDescription: "Draft the intro",
 *   scope: {}, priority: "NORMAL", maxOutputRetries: 0, metadata: {}
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DelegationRequest = Schema.Struct({
  taskId: Schema.String,
  agentRole: Schema.String,
  taskDescription: Schema.String,
  scope: Schema.Record(Schema.String, Schema.Json),
  priority: DelegationPriority,
  expectedOutputSchema: Schema.optionalKey(Schema.String),
  maxOutputRetries: Schema.Int,
  metadata: Schema.Record(Schema.String, Schema.Json)
}).annotate({ identifier: "DelegationRequest" })

/**
 * @category models
 * @since 0.1.0
 */
export interface DelegationRequest extends Schema.Schema.Type<typeof DelegationRequest> {}

/**
 * A delegation's result: the worker's output (`rawOutput`, `null` on
 * failure; `parsedOutput`, the decoded value, when the work was held to an
 * `outputType`), the errors of a failed or blocked attempt, and how long it
 * took.
 *
 * @example
 * ```ts
 * import { Delegation } from "loopwork/ensemble"
 *
 * const ok = (response: Delegation.DelegationResponse) => response.status === "SUCCESS"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DelegationResponse = Schema.Struct({
  taskId: Schema.String,
  status: DelegationStatus,
  workerRole: Schema.String,
  rawOutput: Schema.NullOr(Schema.String),
  parsedOutput: Schema.optionalKey(Schema.Unknown),
  artifacts: Schema.Record(Schema.String, Schema.Json),
  errors: Schema.Array(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.Json),
  duration: Schema.DurationFromMillis
}).annotate({ identifier: "DelegationResponse" })

/**
 * @category models
 * @since 0.1.0
 */
export interface DelegationResponse extends Schema.Schema.Type<typeof DelegationResponse> {}

/**
 * One delegation attempt: who delegated, at what depth, the request and the
 * response.
 *
 * @example
 * ```ts
 * import { Delegation } from "loopwork/ensemble"
 *
 * const line = (record: Delegation.DelegationRecord) =>
 *   `${record.delegatingRole} → ${record.request.agentRole}: ${record.response.status}`
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const DelegationRecord = Schema.Struct({
  kind: Schema.Literals(["manager", "peer"]),
  delegatingRole: Schema.String,
  depth: Schema.Int,
  request: DelegationRequest,
  response: DelegationResponse
}).annotate({ identifier: "DelegationRecord" })

/**
 * @category models
 * @since 0.1.0
 */
export interface DelegationRecord extends Schema.Schema.Type<typeof DelegationRecord> {}

/**
 * Events of an ensemble run, published to an optional sink: tasks started,
 * completed and failed; delegations started, completed, failed and rejected
 * (by a guard); tools called. Events are Schema data, so they can be
 * forwarded as JSON (e.g. over SSE to a UI).
 *
 * Provide a sink to receive them (the default drops them):
 *
 * ```ts
 * const events: Array<EnsembleEvent.EnsembleEvent> = []
 * const program = Ensemble.run(ensemble).pipe(
 *   Effect.provideService(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => events.push(event)) })
 * )
 * ```
 *
 * A sink that fails or dies does not stop the run. `ToolCalled` events of a
 * task are published when the agent's run for that task ends, in call order.
 *
 * @since 0.1.0
 */
import { Context, Effect, Schema } from "effect"

/**
 * Any event.
 *
 * @example
 * ```ts
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const line = (event: EnsembleEvent.EnsembleEvent) => event._tag
 * ```
 *
 * @since 0.1.0
 */
export const EnsembleEvent = Schema.Union([
  Schema.TaggedStruct("TaskStarted", { taskDescription: Schema.String, agentRole: Schema.String }),
  Schema.TaggedStruct("TaskCompleted", {
    taskDescription: Schema.String,
    agentRole: Schema.String,
    durationMillis: Schema.Number,
    toolCallCount: Schema.Int
  }),
  Schema.TaggedStruct("TaskFailed", { taskDescription: Schema.String, agentRole: Schema.String, reason: Schema.String }),
  Schema.TaggedStruct("DelegationStarted", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    taskDescription: Schema.String,
    depth: Schema.Int
  }),
  Schema.TaggedStruct("DelegationCompleted", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("DelegationFailed", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    workerRole: Schema.String,
    reason: Schema.String
  }),
  Schema.TaggedStruct("DelegationRejected", {
    taskId: Schema.String,
    delegatingRole: Schema.String,
    agentRole: Schema.String,
    reason: Schema.String
  }),
  Schema.TaggedStruct("ToolCalled", {
    agentRole: Schema.String,
    taskDescription: Schema.String,
    tool: Schema.String,
    callId: Schema.String,
    isFailure: Schema.Boolean
  })
]).annotate({ identifier: "EnsembleEvent" })

/**
 * @since 0.1.0
 */
export type EnsembleEvent = typeof EnsembleEvent.Type

/**
 * Where events go. The default drops them.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const logged = Effect.provideService(EnsembleEvent.Sink, { publish: (event) => Effect.log(event._tag) })
 * ```
 *
 * @since 0.1.0
 */
export const Sink = Context.Reference<{ readonly publish: (event: EnsembleEvent) => Effect.Effect<void> }>(
  "loopwork/ensemble/EventSink",
  { defaultValue: () => ({ publish: () => Effect.void }) }
)

/**
 * Publishes an event to the current sink; a failing sink is ignored.
 *
 * @example
 * ```ts
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const started = EnsembleEvent.publish({ _tag: "TaskStarted", taskDescription: "Write", agentRole: "Writer" })
 * ```
 *
 * @since 0.1.0
 */
export const publish = (event: EnsembleEvent): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(Sink), (sink) => Effect.catchCause(Effect.suspend(() => sink.publish(event)), () => Effect.void))

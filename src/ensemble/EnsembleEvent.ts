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
 * task are published when the agent's run for that task ends, in call order;
 * `AgentRun` events carry the agent's run as it happens (model calls, text
 * deltas, tool calls: a `RunEvent`). The run ends with `EnsembleCompleted`
 * (the output) or `EnsembleFailed`. `Ensemble.stream` gives all of them as a
 * `Stream`.
 *
 * With `Privacy.OmitContent` on, events carry no content: task descriptions
 * are `""` (they are filled from run inputs), outputs are `""` with no
 * parsed output, delegation records keep ids, roles, statuses and durations
 * only, failure reasons and messages are content-free
 * (`"details omitted (Privacy.OmitContent)"`), and `AgentRun` events carry
 * run events without content (a text delta is not sent). A
 * `DelegationRejected` reason stays: the library writes it from roles and
 * numbers.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import { ensembleEventWithoutContent } from "./internal/eventContent.ts"
import { EnsembleEvent } from "./internal/events.ts"
import { OmitContent } from "../Privacy.ts"

export { EnsembleEvent } from "./internal/events.ts"

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
 * @category services
 * @since 0.1.0
 */
export const Sink = Context.Reference<{ readonly publish: (event: EnsembleEvent) => Effect.Effect<void> }>(
  "loopwork/ensemble/EventSink",
  { defaultValue: () => dropAll }
)

const dropAll = { publish: (_: EnsembleEvent) => Effect.void }

/**
 * Whether a sink other than the default (which drops every event) is
 * provided. Agents' runs report their live events (`AgentRun`) only then.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const watched = Effect.map(Effect.service(EnsembleEvent.Sink), EnsembleEvent.isWatched)
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isWatched = (sink: { readonly publish: (event: EnsembleEvent) => Effect.Effect<void> }): boolean =>
  sink !== dropAll

/**
 * Publishes an event to the current sink; a failing sink is ignored. With
 * `Privacy.OmitContent` on, the sink gets the event without content (see
 * above); with it off, the event itself.
 *
 * @example
 * ```ts
 * import { EnsembleEvent } from "loopwork/ensemble"
 *
 * const started = EnsembleEvent.publish({ _tag: "TaskStarted", taskDescription: "Write", agentRole: "Writer" })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const publish = (event: EnsembleEvent): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const sink = fiber.getRef(Sink)
    if (sink === dropAll) return Effect.void
    if (!fiber.getRef(OmitContent)) return published(sink, event)
    const safe = ensembleEventWithoutContent(event)
    return safe === undefined ? Effect.void : published(sink, safe)
  })

/** `event` sent to `sink`, whose failures and defects are ignored. */
const published = (
  sink: { readonly publish: (event: EnsembleEvent) => Effect.Effect<void> },
  event: EnsembleEvent
): Effect.Effect<void> => Effect.catchCause(Effect.suspend(() => sink.publish(event)), ignore)

const ignore = () => Effect.void

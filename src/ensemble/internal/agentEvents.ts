/**
 * How a watched task reports what happens inside it: its agent run's events
 * (`AgentRun`) and every event published while it works (tool calls,
 * delegations, the tasks of delegated workers) go into the task's own
 * queue at once, and a fiber of the task hands them to the sink in order.
 * Nothing inside the task waits for the sink.
 *
 * It must not: a model answer's tool calls each report their start before
 * their handler runs, so a start that waited for a slow sink (or a full
 * `Ensemble.stream`) would let a later call's handler start first. The
 * delegation tools take the run's delegation budget, delegation ids and
 * record order as they start, so a durable ensemble's replay, whose sink
 * waits differently, would decide otherwise: refuse a delegation that ran,
 * or start one that was refused. Events still reach the sink in the order
 * they were published, all of them before this task's `TaskCompleted` or
 * `TaskFailed`. An interrupted task (a stopped stream, a suspended durable
 * body) drops what it had not handed on yet, as a sink waited on would.
 *
 * @internal
 */
import { Cause, Effect, Fiber, Queue } from "effect"
import { type EnsembleEvent, publish, Sink } from "../EnsembleEvent.ts"
import type { Observer } from "../../RunEvent.ts"

/**
 * Runs `work` with the sink queued (see above) and an observer that
 * publishes its agent run's events as `AgentRun`s of `agentRole` on
 * `taskDescription`; the queue is drained into the sink before this effect
 * succeeds or fails (not when it is interrupted). A failing sink is
 * ignored, as `publish` ignores it.
 *
 * @internal
 */
export const withQueuedEvents = <A, E, R>(
  agentRole: string,
  taskDescription: string,
  work: (observer: Observer) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const sink = fiber.getRef(Sink)
    const handOn = (event: EnsembleEvent) => Effect.catchCause(Effect.suspend(() => sink.publish(event)), () => Effect.void)
    return Effect.flatMap(Queue.unbounded<EnsembleEvent, Cause.Done>(), (queue) =>
      Effect.flatMap(
        Effect.forkChild(
          Effect.forever(Effect.flatMap(Queue.takeAll(queue), (events) => Effect.forEach(events, handOn, { discard: true })), {
            disableYield: true
          }).pipe(Effect.catch(() => Effect.void))
        ),
        (drainer) => {
          const queued = {
            publish: (event: EnsembleEvent) => {
              Queue.offerUnsafe(queue, event)
              return Effect.void
            }
          }
          const observer: Observer = {
            emit: (event) => publish({ _tag: "AgentRun", agentRole, taskDescription, event }),
            streaming: true
          }
          // Drained when the work succeeds or fails (an effect of its own, which can be interrupted); on an
          // interruption the fiber handing events on is interrupted with the task, its backlog dropped.
          const drained = Effect.andThen(Queue.end(queue), Fiber.join(drainer))
          return Effect.matchCauseEffect(Effect.provideService(work(observer), Sink, queued), {
            onFailure: (cause) => Cause.hasInterrupts(cause) ? Effect.failCause(cause) : Effect.andThen(drained, Effect.failCause(cause)),
            onSuccess: (value) => Effect.as(drained, value)
          })
        }
      ))
  })

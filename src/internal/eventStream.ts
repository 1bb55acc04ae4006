/**
 * A run turned into a stream of its events: `run` receives `offer`, which
 * puts each event into a bounded queue (the run waits when the consumer is
 * `bufferSize` events behind); the stream ends when the run succeeds and
 * fails with its cause otherwise. Interrupting the stream interrupts the run.
 *
 * An event that fits is put in the queue when `offer` is called, and `offer`
 * returns `Effect.void`: a run emits about four events per step, and the
 * queue's own `offer` would cost each of them an effect of its own.
 *
 * @internal
 */
import { type Cause, Effect, Exit, Queue, Stream } from "effect"

/**
 * Puts `event` into the stream's buffer now and returns `Effect.void`, or,
 * when the buffer is full, returns the effect that waits for room. Call it
 * when the event is due, not before.
 *
 * @internal
 */
export type Offer<A> = (event: A) => Effect.Effect<void>

/** @internal */
export const eventStream = <A, E, R>(
  bufferSize: number,
  run: (offer: Offer<A>) => Effect.Effect<unknown, E, R>
): Stream.Stream<A, E, R> =>
  Stream.callback<A, E, R>(
    (queue) =>
      run((event) =>
        // `Queue.offer`'s first attempt, without its effect; its waiting path otherwise.
        Queue.offerUnsafe(queue, event) ? Effect.void : Effect.asVoid(Queue.offer(queue, event))
      ).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause as Cause.Cause<E>))
      ),
    { bufferSize, strategy: "suspend" }
  )

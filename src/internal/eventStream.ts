/**
 * A run turned into a stream of its events: `run` receives `emit`, which
 * offers each event to a bounded queue (the run waits when the consumer is
 * `bufferSize` events behind); the stream ends when the run succeeds and
 * fails with its cause otherwise. Interrupting the stream interrupts the run.
 *
 * @internal
 */
import { type Cause, Effect, Exit, Queue, Stream } from "effect"

/** @internal */
export const eventStream = <A, E, R>(
  bufferSize: number,
  run: (emit: (event: A) => Effect.Effect<void>) => Effect.Effect<unknown, E, R>
): Stream.Stream<A, E, R> =>
  Stream.callback<A, E, R>(
    (queue) =>
      run((event) => Effect.asVoid(Queue.offer(queue, event))).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause as Cause.Cause<E>))
      ),
    { bufferSize, strategy: "suspend" }
  )

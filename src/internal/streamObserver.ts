/**
 * The observer `Chain.stream` provides to its run: its events go into the
 * stream's buffer. `emitTo` recognises it and calls {@link StreamObserver.offer}
 * when an event is due, so an event that fits in the buffer costs no effect
 * of its own; `emit` (what any other caller of the `Observer` service sees)
 * does the same inside an effect.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Offer } from "./eventStream.ts"
import type { RunEvent } from "./runEvents.ts"

/** @internal */
export class StreamObserver {
  /** The stream's model calls stream, so their text deltas arrive as they are produced. */
  readonly streaming = true
  /**
   * Puts the event into the buffer now (`Effect.void`) or, when the buffer
   * is full, returns the effect that waits for room. Call it when the event
   * is due, not before.
   */
  readonly offer: Offer<RunEvent>
  constructor(offer: Offer<RunEvent>) {
    this.offer = offer
  }
  readonly emit = (event: RunEvent): Effect.Effect<void> => Effect.suspend(() => this.offer(event))
}

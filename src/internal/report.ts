/**
 * How the loop reports an event to the run's observer: the event made safe
 * (credentials redacted from failure messages; without content when
 * `Privacy.OmitContent` is on), then delivered. `Chain.stream`'s own
 * observer takes an event that fits in its buffer at once, so a run can
 * report it with a function call, not an effect of its own: {@link reporter}
 * returns `undefined` then, and the effect to wait on only when there is one
 * (the buffer is full, or the observer is a user's effectful one).
 *
 * @internal
 */
import { Effect } from "effect"
import { runEventWithoutContent } from "./contentFree.ts"
import { redactSecrets } from "./redact.ts"
import type { RunEvent } from "./runEvents.ts"
import type * as Events from "./runEvents.ts"
import { StreamObserver } from "./streamObserver.ts"

/** What an observer does with an event (`RunEvent.Observer`'s `emit`). */
interface Emitter {
  readonly emit: (event: RunEvent) => Effect.Effect<void>
}

const withSafeMessage = <E extends typeof Events.ModelCallFailed.Type | typeof Events.RunFailed.Type>(event: E): E => {
  const message = redactSecrets(event.message)
  return message === event.message ? event : { ...event, message }
}

/** @internal `event` as an observer may see it, or nothing. No allocation unless something is taken out. */
export const visible = (event: RunEvent, omitContent: boolean): RunEvent | undefined =>
  omitContent
    ? runEventWithoutContent(event)
    : event._tag === "ModelCallFailed" || event._tag === "RunFailed"
    ? withSafeMessage(event)
    : event

/** @internal reports an event now; the effect to wait on, or `undefined` when it is done */
export type Report = (event: RunEvent) => Effect.Effect<void> | undefined

const ignore = () => Effect.void

/** @internal how events reach `observer` (a defect of `visible` or of the observer is ignored) */
export const reporter = (observer: Emitter, omitContent: boolean): Report => {
  if (observer instanceof StreamObserver) {
    return (event) => {
      let safe: RunEvent | undefined
      try {
        safe = visible(event, omitContent)
      } catch {
        return undefined
      }
      if (safe === undefined) return undefined
      const wait = observer.offer(safe)
      return wait === Effect.void ? undefined : wait
    }
  }
  return (event) =>
    Effect.catchCause(
      Effect.suspend(() => {
        const safe = visible(event, omitContent)
        return safe === undefined ? Effect.void : observer.emit(safe)
      }),
      ignore
    )
}

/**
 * @internal `report(event)`, then `next()`: called at once when the event
 * was taken in, after the wait otherwise (so what `next` reads, such as the
 * clock, is read once the event is out)
 */
export const reportThen = <A, E, R>(report: Report, event: RunEvent, next: () => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const wait = report(event)
  return wait === undefined ? next() : Effect.andThen(wait, Effect.suspend(next))
}

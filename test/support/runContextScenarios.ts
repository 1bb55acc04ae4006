/**
 * What the run-context scenarios (test/scenarios/RunContext.*.test.ts)
 * share: observers that keep what they see, rows of events and spans that
 * say everything a reader could compare, and a clock of its own.
 */
import { Clock, Effect, Exit, Option, type Tracer } from "effect"
import type { RunEvent } from "../../src/index.ts"

export const observerInto = (seen: Array<RunEvent.RunEvent>): RunEvent.Observer => ({
  emit: (event) => Effect.sync(() => void seen.push(event)),
  streaming: false
})

/** An event as JSON (chain documents left out: long, and compared through their text). */
export const eventJson = (event: RunEvent.RunEvent): string => {
  const { chain: _chain, ...rest } = event as unknown as Record<string, unknown>
  return JSON.stringify(rest)
}

const parentOf = (span: Tracer.AnySpan): Tracer.AnySpan | undefined =>
  span._tag === "Span" ? Option.getOrUndefined(span.parent) : undefined

/** Each span: name, parent's name, attributes, status, start and end (TestClock makes them exact). */
export const spanRows = (spans: ReadonlyArray<Tracer.NativeSpan>) =>
  spans.map((span) => {
    const parent = parentOf(span)
    const status = span.status._tag === "Started"
      ? "open"
      : Exit.isSuccess(span.status.exit)
      ? "success"
      : `failure ${span.status.exit.cause.reasons.map((reason) => reason._tag).join(",")}`
    return {
      name: span.name,
      parent: parent === undefined ? null : parent._tag === "Span" ? parent.name : "external",
      attributes: Object.fromEntries([...span.attributes].map(([k, v]) => [k, typeof v === "bigint" ? String(v) : v])),
      status,
      start: String(span.status.startTime),
      end: span.status._tag === "Ended" ? String(span.status.endTime) : null
    }
  })

/** A clock that reads 1000 s plus 7 ms more at each read (its sleeps end at once): durations measured by it are 7 ms. */
export const oddClock = () => {
  let now = 1_000_000
  const reads = { count: 0 }
  const millis = () => {
    reads.count++
    return (now += 7)
  }
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    monotonicTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
    monotonicTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
    currentTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
    sleep: () => Effect.void
  }
  return { clock, reads }
}

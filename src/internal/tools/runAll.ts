/**
 * Runs a round's calls as `Effect.forEach` with a concurrency does —
 * starting them in order, each as soon as the one before it has ended or is
 * waiting, at most `concurrency` running at once, failing (and interrupting
 * the others) as soon as one fails — with one difference in cost: a fiber
 * whose call ended without waiting takes the next call itself, if no one
 * has started it, instead of a new fiber being forked for it. A round of
 * calls that complete at once (the usual handler does its work
 * synchronously) then runs in one fiber instead of one per call.
 *
 * `forEach` walks the calls in order: a call a fiber has already taken
 * comes to it as done (its result is in `out`, or will be when that fiber
 * ends, which `forEach` waits for: its fiber counts as the one running it).
 *
 * @internal
 */
import { Effect } from "effect"

/** @internal The results of `run` for each of `items`, in their order. */
export const runAll = <A, B>(
  items: ReadonlyArray<A>,
  run: (item: A) => Effect.Effect<B>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<B>> =>
  Effect.suspend(() => {
    const out: Array<B> = new Array(items.length)
    /** Calls before this index have been started (by `forEach` or by a fiber that took them). */
    let taken = 0
    const from = (index: number): Effect.Effect<void> =>
      Effect.flatMap(run(items[index]), (result) => {
        out[index] = result
        return taken < items.length ? from(taken++) : Effect.void
      })
    const started = Effect.forEach(
      items,
      (_, index) => index < taken ? Effect.void : (taken = index + 1, from(index)),
      { concurrency, discard: true }
    )
    return Effect.as(started, out)
  })

/**
 * A new array of one array's items followed by another's: how the loop
 * grows a transcript by a turn or a tool message. `concat` copies a long
 * history as a block (twice as fast as a spread at 1,000 messages), but it
 * is a call into the runtime with ~130 ns of its own cost, more than
 * copying a short history item by item takes; below {@link blockCopyFrom}
 * items the copy is a loop.
 *
 * @internal
 */

/** The length from which `concat`'s block copy beats a loop (measured at ~100 to 200 items on Node 22). */
const blockCopyFrom = 128

/** @internal `items` then `more`, as a new array */
export const appended = <A>(items: ReadonlyArray<A>, more: ReadonlyArray<A>): Array<A> => {
  if (items.length >= blockCopyFrom) return items.concat(more)
  const length = items.length
  const out = new Array<A>(length + more.length)
  for (let i = 0; i < length; i++) out[i] = items[i]
  for (let i = 0; i < more.length; i++) out[length + i] = more[i]
  return out
}

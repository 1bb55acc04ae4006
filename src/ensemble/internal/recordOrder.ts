/**
 * The order of a run's delegation records: by when each delegation ended,
 * as the worker outputs of a HIERARCHICAL run are listed. Ties go in the
 * order the delegations were asked for: by their *path*, the positions of
 * the calls that led to them (the manager's 2nd delegation is `[2]`; the
 * 1st peer delegation its worker made, `[2, 1]`; a root task's peer
 * delegations start from the task's position). A delegation made inside
 * another one's work ended first, so it comes before it.
 *
 * Each agent's run counts the delegations it asks for as they start, in
 * call order, so the paths are the same however the work is scheduled. A
 * durable ensemble's child brings back the places of its records, its
 * paths relative to its delegation's, and records taken in its body keep
 * the time stored with them: a replay, whose children's results arrive in
 * whatever order, lists the records as the run it replays did.
 *
 * @internal
 */
import { Schema } from "effect"
import type { DelegationRecord } from "../Delegation.ts"

/** @internal where a record goes: when its delegation ended (epoch millis), and the path of calls that asked for it */
export const Place = Schema.Struct({ at: Schema.Number, path: Schema.Array(Schema.Int) })

/** @internal */
export type Place = typeof Place.Type

/** @internal a run's records, in order, with the place of each */
export interface Placed {
  readonly records: Array<DelegationRecord>
  readonly places: Array<Place>
}

/** @internal an agent's run that asks for delegations: its own path, and how many it has asked for */
export interface Asker {
  readonly path: ReadonlyArray<number>
  asked: number
}

/** @internal a fresh count of the delegations an agent's run at `path` asks for */
export const asker = (path: ReadonlyArray<number>): Asker => ({ path, asked: 0 })

/** @internal the path of the next delegation `from` asks for (call it as the delegation starts) */
export const nextPath = (from: Asker): ReadonlyArray<number> => [...from.path, ++from.asked]

/** @internal by path: by position where they differ, a path inside another before it */
export const comparePaths = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return b.length - a.length
}

/** @internal by when they ended, then by path */
export const compare = (a: Place, b: Place): number => a.at !== b.at ? a.at - b.at : comparePaths(a.path, b.path)

/** @internal adds `record` to `d` at its place: after every record placed before it or at the same place */
export const place = (d: Placed, record: DelegationRecord, at: Place): void => {
  let i = d.places.length
  while (i > 0 && compare(d.places[i - 1], at) > 0) i--
  d.records.splice(i, 0, record)
  d.places.splice(i, 0, at)
}

/**
 * @internal adds records brought back from work at `prefix` (a durable
 * ensemble's child), their paths relative to it. A record without a place
 * (a result stored before places were) goes where the work ended (`ended`),
 * inside it.
 */
export const placeAll = (
  d: Placed,
  prefix: ReadonlyArray<number>,
  records: ReadonlyArray<DelegationRecord>,
  places: ReadonlyArray<Place> | undefined,
  ended: number
): void => {
  records.forEach((record, index) => {
    const at = places?.[index]
    place(d, record, at === undefined ? { at: ended, path: [...prefix, 0] } : { at: at.at, path: [...prefix, ...at.path] })
  })
}

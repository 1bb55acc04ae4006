/**
 * The order of a run's delegation records: by when each delegation ended,
 * as the worker outputs of a HIERARCHICAL run are listed. Ties go in the
 * order the delegations were asked for: by their *path*, the positions of
 * the calls that led to them (the manager's 2nd delegation is `[2]`; the
 * 1st peer delegation its worker made, `[2, 1]`; a root task's peer
 * delegations start from the task's position). A delegation made inside
 * another one's work ended first, so it comes before it.
 *
 * Each agent's run counts the delegations it asks for as their handlers
 * start. The handlers of one answer start in call order: a watched task
 * queues its events rather than wait for the sink (`agentEvents.ts`), since
 * a call whose start report waited would let a later call start first. A
 * durable ensemble's child brings back the places of its records (also when
 * it failed), its paths relative to its work's, and a body stores when each
 * delegation that did not succeed ended, under its tool call: a replay,
 * whose children's results arrive in whatever order, gives every record the
 * time it had, so it lists them as the run it replays did.
 *
 * @internal
 */
import { Schema } from "effect"
import type { DelegationRecord } from "../Delegation.ts"

/** @internal where a record goes: when its delegation ended (epoch millis), and the path of calls that asked for it */
export const Place = Schema.Struct({ at: Schema.Finite, path: Schema.Array(Schema.Int) })

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
 * ensemble's child), each at its place in `places` (by position: as many
 * as there are records), its path relative to the work's
 */
export const placeUnder = (
  d: Placed,
  prefix: ReadonlyArray<number>,
  records: ReadonlyArray<DelegationRecord>,
  places: ReadonlyArray<Place>
): void => {
  records.forEach((record, index) => {
    const at = places[index]
    place(d, record, { at: at.at, path: [...prefix, ...at.path] })
  })
}

/**
 * @internal adds records brought back from the work at `prefix` that
 * succeeded (see `placeUnder`). A record without a place (a result stored
 * before places were) goes where the work ended (`ended`), inside it.
 */
export const placeAll = (
  d: Placed,
  prefix: ReadonlyArray<number>,
  records: ReadonlyArray<DelegationRecord>,
  places: ReadonlyArray<Place> | undefined,
  ended: number
): void => placeUnder(d, prefix, records, records.map((_, index) => places?.[index] ?? { at: ended, path: [0] }))

/**
 * A recorded step that does not match its schema when the engine reads it
 * back (a store edited by hand, or written by something else): effect's
 * engine dies with the schema error. Where a body reads a recorded step,
 * that defect is marked, so the body ends the run as `CorruptRecord` — and
 * only that defect: a schema error of anything else (a custom mode, a
 * layer) stays a defect.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { ClusterError } from "effect/cluster"

/** @internal the mark of a recorded step that could not be read back (or written) by its schema */
export class UnreadableRecord extends Error {
  readonly _tag = "UnreadableRecord"
  constructor(message: string) {
    // An Error, so where it is not turned into CorruptRecord (a durable ensemble's task) its message shows.
    super(`a recorded step does not match its schema (${message})`)
  }
}

/**
 * @internal `step`, with a schema error it dies with marked as an
 * {@link UnreadableRecord}; so is the engine's `MalformedMessage`, a stored
 * reply it cannot decode at all (its envelope edited), or a message it
 * cannot encode (loopwork records only values it checked it can). A `PersistenceError`
 * stays a defect: the store failing is not a record of the run.
 */
export const readable = <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchDefect(step, (defect) =>
    Effect.die(
      Schema.isSchemaError(defect)
        ? new UnreadableRecord(defect.message)
        : ClusterError.MalformedMessage.is(defect)
        ? new UnreadableRecord("the engine cannot decode the stored reply, or encode it")
        : defect
    ))

/**
 * The table of `WaitingCalls.layerSql` (`loopwork_waiting_calls`): made if
 * missing, by any number of processes at once, and brought up to date (the
 * `wait` column) without rights a process does not need.
 *
 * @internal
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** @internal the table, created if missing (its `wait` column added to a table made before it) */
export const createTable = (sql: SqlClient) =>
  Effect.gen(function*() {
    const create = sql`CREATE TABLE IF NOT EXISTS loopwork_waiting_calls (
      execution_id VARCHAR(255) NOT NULL,
      call_id VARCHAR(256) NOT NULL,
      position BIGINT NOT NULL,
      kind VARCHAR(16) NOT NULL,
      tool VARCHAR(256) NOT NULL,
      params TEXT NOT NULL,
      answer TEXT,
      wait INTEGER NOT NULL DEFAULT 1,
      PRIMARY KEY (execution_id, call_id)
    )`
    // Two PostgreSQL processes creating the table at once can both fail on its
    // type's name: one creates it under a lock while the other waits.
    yield* sql.onDialectOrElse({
      pg: () => sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(4242, 1)`, Effect.andThen(create, addWaitColumn(sql)))),
      orElse: () => Effect.andThen(create, addWaitColumn(sql))
    })
  })

/**
 * The `wait` column in a table made before it: added only when missing, so
 * a process opening a table that has it needs no right to alter it (nor,
 * on PostgreSQL, the exclusive lock an `ALTER TABLE` takes even when it
 * changes nothing). A process that adds it at the same time makes this
 * one's fail, which then finds it there.
 */
const addWaitColumn = (sql: SqlClient) => {
  const present = Effect.map(
    sql.onDialectOrElse({
      pg: () =>
        sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'loopwork_waiting_calls' AND column_name = 'wait'`,
      orElse: () => sql<{ name: string }>`SELECT name FROM pragma_table_info('loopwork_waiting_calls') WHERE name = 'wait'`
    }),
    (rows) => rows.length > 0
  )
  const add = sql`ALTER TABLE loopwork_waiting_calls ADD COLUMN wait INTEGER NOT NULL DEFAULT 1`
  // On PostgreSQL, processes add it one at a time (under the caller's lock), and a failed statement
  // aborts the transaction: its error is the one to give.
  const recheck = (error: SqlError) =>
    sql.onDialectOrElse({
      pg: () => Effect.fail(error),
      orElse: () => Effect.flatMap(present, (now) => now ? Effect.void : Effect.fail(error))
    })
  return Effect.flatMap(present, (yes) => yes ? Effect.void : Effect.catch(Effect.asVoid(add), recheck))
}

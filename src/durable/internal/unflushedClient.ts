/**
 * A second client of the store's database whose commits do not wait for
 * the disk (`synchronous_commit = off` on PostgreSQL, `synchronous = NORMAL`
 * on its own connection to a SQLite file), for the writes whose loss in a
 * crash of the database server (on SQLite: of the operating system) is
 * harmless. A runner opens one (`../postgres/pgSynchronous.ts`,
 * `./sqliteConnection.ts`'s `makeWithUnflushed`) when its commits are
 * flushed; nothing else does.
 *
 * What goes through it, and why losing it is harmless:
 *
 * - the reads of a runner's unprocessed messages, whose only write is the
 *   claim stamp `last_read`, which keeps the next reads (for ten minutes)
 *   from returning a message being processed. A lost stamp makes its
 *   message readable again, as after those ten minutes or after effect's
 *   own resets, and the runner skips a message it is processing;
 * - effect's runner storage: the runner's registration, its heartbeat
 *   before every reply, and its shard locks. Advisory locks live in the
 *   server's memory and end with it anyway; a lost heartbeat is one
 *   among many; a lost registration is written again at the next refresh
 *   of assignments, since a runner registers whenever it does not find
 *   itself among the runners.
 *
 * Whatever commits after such a write and is flushed (a recorded step)
 * flushes it too: the server's log is written in order. A killed runner
 * loses nothing: the server flushes its log on its own within a fraction
 * of a second. Messages and replies never go through it: the server can
 * crash alone while its runners go on (see `./messageStorage.ts`).
 *
 * @internal
 */
import { Context } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"

/** @internal the store's database, through connections that do not wait for the flush */
export class UnflushedClient extends Context.Service<UnflushedClient, SqlClient>()("loopwork/durable/UnflushedClient") {}

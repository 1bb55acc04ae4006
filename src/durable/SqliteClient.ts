/**
 * An effect/sql `SqlClient` over Node's built-in `node:sqlite`: the
 * embedded durable store, one file, no server. Several processes may share
 * the file (WAL journal; a writer waits up to `busyTimeout` for another's
 * lock). The published `@effect/sql-sqlite-node` does not load on effect
 * 4.1 (it imports the removed `effect/unstable/*` paths); this client will
 * give way to it once a release does.
 *
 * @stability unstable
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { Layer } from "effect"
import { Reactivity } from "effect/reactivity"
import * as Client from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { InvalidInput } from "../LoopError.ts"
import { make } from "./internal/sqliteConnection.ts"

/**
 * Options of {@link layer}.
 *
 * @example
 * ```ts
 * import type { SqliteClient } from "loopwork/durable"
 *
 * const options: SqliteClient.Options = { filename: "runs.db", busyTimeout: "5 seconds" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The database file (created if missing); `":memory:"` for a private in-memory database. */
  readonly filename: string
  /** How long a write waits for another process's lock (default 5 seconds). */
  readonly busyTimeout?: Duration.Input | undefined
  /**
   * `"full"` (default): every commit is on disk before it returns (a
   * `DurableSqlite` runner's claim stamps and heartbeats excepted: they go
   * through a second connection of its own that does not flush, since
   * losing them is harmless).
   * `"normal"`: commits are not flushed one by one; a process crash loses
   * nothing, a power loss or an operating-system crash may lose the last
   * commits (the file stays consistent).
   */
  readonly synchronous?: "full" | "normal" | undefined
}

/**
 * The `SqlClient` of a SQLite file.
 *
 * @example
 * ```ts
 * import { SqliteClient } from "loopwork/durable"
 *
 * const Sql = SqliteClient.layer({ filename: "runs.db" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Client.SqlClient, SqlError | InvalidInput> =>
  Layer.effect(Client.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))

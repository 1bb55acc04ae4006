/**
 * Durable runs on one SQLite file: the embedded store, no server, no
 * set-up. `runner` is a process that executes runs (it owns every shard;
 * one runner per file at a time — a restarted runner takes over at once);
 * `client` is a process that only starts runs, answers waiting calls and
 * polls results: its messages are written to the file and the runner picks
 * them up within `pollInterval`.
 *
 * @stability unstable (effect/cluster is)
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { WorkflowEngine } from "effect/workflow"
import type { InvalidInput } from "../LoopError.ts"
import { engine, type Role, type Timing } from "./internal/engine.ts"
import { makeWithUnflushed } from "./internal/sqliteConnection.ts"
import { UnflushedClient } from "./internal/unflushedClient.ts"
import * as Sqlite from "./SqliteClient.ts"
import { WaitingCalls, layerSql } from "./WaitingCalls.ts"

/**
 * Options of {@link runner} and {@link client}.
 *
 * @example
 * ```ts
 * import type { DurableSqlite } from "loopwork/durable"
 *
 * const options: DurableSqlite.Options = { filename: "runs.db", pollInterval: "250 millis" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends Sqlite.Options, Timing {
  /** How often a process looks for messages written by other processes (default 250 ms, at most 1 second). */
  readonly pollInterval?: Timing["pollInterval"]
  /** How long a runner that stopped stays owner of its runs (default 10 seconds). A restarted runner takes over at once. */
  readonly failoverAfter?: Timing["failoverAfter"]
}

/** @internal what every process on the file provides */
export type Services = WorkflowEngine.WorkflowEngine | WaitingCalls | SqlClient

/**
 * Whether a runner on `options` gets a second connection for its unflushed
 * writes: when every commit is flushed (`synchronous: "full"`, the default)
 * to a file (not a private in-memory or temporary database, which a second
 * connection would not share). A throwing read is left to the client's own
 * check of the options, which fails with `InvalidInput`.
 */
const splitsFlushes = (options: Options): boolean => {
  try {
    const synchronous: unknown = options.synchronous
    const filename: unknown = options.filename
    return (synchronous === undefined || synchronous === "full") && typeof filename === "string" && filename !== "" &&
      filename !== ":memory:" && !filename.startsWith("file:")
  } catch {
    return false
  }
}

/**
 * The file's `SqlClient`, with the engine given an `UnflushedClient` of the
 * same file (`makeWithUnflushed`, ./internal/sqliteConnection.ts): a
 * runner's claim stamps and heartbeats, one of each per recorded step, do
 * not wait for the disk, as on PostgreSQL. Both come from one build of
 * `both` (a layer is built once per build), so they share its lock.
 */
const runnerOn = (options: Options, role: Role): Layer.Layer<Services, SqlError | InvalidInput> => {
  const both = Layer.effectContext(Effect.map(
    makeWithUnflushed(options),
    ({ flushed, unflushed }) => Context.make(SqlClient, flushed).pipe(Context.add(UnflushedClient, unflushed))
  )).pipe(Layer.provide(Reactivity.layer))
  const sql = Layer.effect(SqlClient, Effect.service(SqlClient)).pipe(Layer.provide(both))
  const unflushed = Layer.effect(UnflushedClient, Effect.service(UnflushedClient)).pipe(Layer.provide(both))
  return engine(options, role).pipe(Layer.provide(unflushed), Layer.provideMerge(Layer.provideMerge(layerSql, sql)))
}

const on = (options: Options, role: Role): Layer.Layer<Services, SqlError | InvalidInput> =>
  role._tag === "Runner" && splitsFlushes(options)
    ? runnerOn(options, role)
    : engine(options, role).pipe(Layer.provideMerge(Layer.provideMerge(layerSql, Sqlite.layer(options))))

/**
 * A process that executes durable runs stored in a SQLite file. Provide it
 * to the layers of your workflows (`DurableChain.layer`).
 *
 * @example
 * ```ts
 * import { DurableSqlite } from "loopwork/durable"
 *
 * const Engine = DurableSqlite.runner({ filename: "runs.db" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const runner = (options: Options): Layer.Layer<Services, SqlError | InvalidInput> =>
  on(options, { _tag: "Runner", name: "loopwork-sqlite-runner" })

/**
 * A process that starts durable runs, answers their waiting calls and
 * reads their results, but executes none: the runner does.
 *
 * @example
 * ```ts
 * import { DurableSqlite } from "loopwork/durable"
 *
 * const Client = DurableSqlite.client({ filename: "runs.db" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const client = (options: Options): Layer.Layer<Services, SqlError | InvalidInput> =>
  on(options, { _tag: "Client" })

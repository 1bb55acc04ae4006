/**
 * Durable runs on PostgreSQL through `@effect/sql-pg` (an optional peer
 * dependency: only this entry point imports it). Three kinds of process
 * share one database and nothing else — no port is opened, no runner talks
 * to another:
 *
 * - `single`: the one process that executes every run (the smallest
 *   durable setup; a restarted process takes over at once);
 * - `runner`: one of several processes that split the runs between them;
 *   each needs a `name` unique among them; when one stops, the others take
 *   its runs after `failoverAfter`;
 * - `client`: a process that starts runs, answers their waiting calls and
 *   reads results, but executes none.
 *
 * Messages between processes go through the database and are read within
 * `pollInterval`.
 *
 * @stability unstable (effect/cluster is)
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { WorkflowEngine } from "effect/workflow"
import { InvalidInput } from "../../LoopError.ts"
import { addressOf, engine, type Role, type Timing } from "../internal/engine.ts"
import { layerUnflushed, withSynchronous } from "./pgSynchronous.ts"
import { copied } from "./poolOptions.ts"
import { OnPostgres } from "../internal/workflowName.ts"
import { layerSql, type WaitingCalls } from "../WaitingCalls.ts"

/**
 * Options of every layer: the connection (any `@effect/sql-pg` pool
 * option; keep the URL `Redacted`), how often a process reads messages
 * written by others (`pollInterval`, default 250 ms, at most 1 second; a
 * message due at a later time, such as a `DurableClock` wake-up, is read
 * within two intervals of it, never before) and how long a runner that
 * stopped keeps its runs (`failoverAfter`, default 10 seconds).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { DurablePostgres } from "loopwork/durable/postgres"
 *
 * const options: DurablePostgres.Options = {
 *   url: Redacted.make("postgres://app:secret@127.0.0.1:5432/app"),
 *   failoverAfter: "5 seconds"
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends PgClient.PgPoolConfig, Timing {
  /**
   * `"full"` (default): every recorded step, started run and answered call
   * is on the server's disk before it returns.
   * `"normal"`: the server flushes commits in the background
   * (`synchronous_commit = off` on these connections; at most
   * `3 × wal_writer_delay`, 600 ms by default, behind). A runner that crashes
   * or is killed loses nothing; a crash of the PostgreSQL server or of its
   * machine may lose what was committed in that last interval — steps then
   * run again, a run started or a call answered then is forgotten — while
   * the database stays consistent. On a local server these flushes were
   * about 40% of a durable step's time; more on a disk with slow flushes.
   * With `"full"`, a runner (`single`, `runner`) opens a second pool of up
   * to three connections whose commits do not wait for the disk, for what
   * a crash of the server may lose harmlessly: the claim stamps of its
   * reads, and its registration, heartbeats and shard locks.
   */
  readonly synchronous?: "full" | "normal" | undefined
}

/**
 * What each layer provides: the workflow engine, the waiting calls and the
 * database's `SqlClient` (for your own tables in the same database).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SqlClient } from "effect/sql/SqlClient"
 * import type { DurablePostgres } from "loopwork/durable/postgres"
 *
 * // a tool's handler writing to the same database as the runs
 * const record = (order: string): Effect.Effect<void, unknown, DurablePostgres.Services> =>
 *   Effect.flatMap(Effect.service(SqlClient), (sql) => sql`INSERT INTO refunds (order_id) VALUES (${order})`)
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Services = WorkflowEngine.WorkflowEngine | WaitingCalls | SqlClient | PgClient.PgClient

/**
 * The connection options, checked before connecting: an object, and a URL
 * that is `Redacted` and parses. A URL that does not parse is reported
 * without its text (Node's own error carries it, password included).
 */
const checked = (options: unknown): Effect.Effect<Options, InvalidInput> => {
  if (typeof options !== "object" || options === null) {
    return Effect.fail(new InvalidInput({ field: "options", rule: "the connection options: an object such as { url: Redacted.make(…) }", value: options }))
  }
  const url: unknown = (options as { readonly url?: unknown }).url
  if (url === undefined) return Effect.succeed(options as Options)
  if (!Redacted.isRedacted(url)) {
    return Effect.fail(new InvalidInput({ field: "url", rule: "keep the connection URL Redacted: url: Redacted.make(…)", value: "<not shown>" }))
  }
  const text: unknown = Redacted.value(url)
  try {
    if (typeof text !== "string") throw new TypeError()
    const protocol = new URL(text).protocol
    if (protocol !== "postgres:" && protocol !== "postgresql:") throw new TypeError()
    return Effect.succeed(options as Options)
  } catch {
    return Effect.fail(new InvalidInput({
      field: "url",
      rule: "a postgres:// URL that parses; percent-encode '/', '#', '?' and '@' in the user name and password",
      value: "<redacted>"
    }))
  }
}

/** The layer of a process in `role` (read from the options' copy: a runner's name is one of them). */
const on = (options: Options, roleOf: (options: Options) => Role): Layer.Layer<Services, SqlError | InvalidInput> =>
  Layer.unwrap(Effect.suspend(() => {
    // From JavaScript anything may come: the options are read once, here, and checked.
    const copy = copied(options)
    if (copy._tag === "Failure") return Effect.fail(copy.failure)
    const role = roleOf(copy.success)
    return Effect.map(Effect.tap(Effect.flatMap(checked(copy.success), withSynchronous), () => addressOf(role)), (valid) =>
      engine(valid, role).pipe(
        Layer.provide(role._tag === "Runner" ? layerUnflushed(valid) : Layer.empty),
        Layer.provideMerge(Layer.provideMerge(layerSql, PgClient.layer(valid))),
        // Read by the workflows' layers, for what the engine's tables hold here (../internal/workflowName.ts).
        Layer.merge(Layer.succeed(OnPostgres, true))
      ))
  }))

/**
 * The single process that executes every durable run on the database.
 * Run one at a time: a second `single` waits for the first's locks.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { DurablePostgres } from "loopwork/durable/postgres"
 *
 * const Engine = DurablePostgres.single({ url: Redacted.make("postgres://127.0.0.1:5432/app") })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const single = (options: Options): Layer.Layer<Services, SqlError | InvalidInput> =>
  on(options, () => ({ _tag: "Runner", name: "loopwork-single-runner" }))

/**
 * One of several processes that split the durable runs of the database.
 * `name` identifies it among them (a host name, a pod name); a process
 * restarted with the same name takes its runs back at once.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { DurablePostgres } from "loopwork/durable/postgres"
 *
 * const Engine = DurablePostgres.runner({
 *   url: Redacted.make("postgres://127.0.0.1:5432/app"),
 *   name: "worker-1",
 *   failoverAfter: "5 seconds"
 * })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const runner = (options: Options & { readonly name: string }): Layer.Layer<Services, SqlError | InvalidInput> =>
  on(options, (copy) => ({ _tag: "Runner", name: (copy as { readonly name?: string }).name as string }))

/**
 * A process that starts durable runs, answers their waiting calls and
 * reads their results, but executes none.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { DurablePostgres } from "loopwork/durable/postgres"
 *
 * const Client = DurablePostgres.client({ url: Redacted.make("postgres://127.0.0.1:5432/app") })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const client = (options: Options): Layer.Layer<Services, SqlError | InvalidInput> =>
  on(options, () => ({ _tag: "Client" }))

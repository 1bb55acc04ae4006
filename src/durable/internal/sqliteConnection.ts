/**
 * The connections of `SqliteClient`: a `node:sqlite` database as an
 * effect/sql connection (its options checked), and the clients over it.
 *
 * @internal
 */
import { Cache, Context, Duration, Effect, Fiber, Scope, Semaphore, Stream } from "effect"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite"
import { InvalidInput } from "../../LoopError.ts"
import { readOptions } from "./readOptions.ts"

/** @internal what a connection is opened with (`SqliteClient.Options`, documented there) */
export interface Options {
  readonly filename: string
  readonly busyTimeout?: Duration.Input | undefined
  readonly synchronous?: "full" | "normal" | undefined
}

const failure = (message: string, operation: string) => (cause: unknown) => {
  const withErrno = typeof cause === "object" && cause !== null && "errcode" in cause && !("errno" in cause)
    ? Object.assign(cause, { errno: (cause as { readonly errcode: unknown }).errcode })
    : cause
  return new SqlError({ reason: classifySqliteError(withErrno, { message, operation }) })
}

const busyTimeoutOf = (input: unknown) => {
  if (input === undefined) return Effect.succeed(5_000)
  // A number is checked first: effect reads NaN milliseconds as 0.
  const duration = typeof input === "number" && !Number.isFinite(input) ? undefined : Duration.fromInput(input as Duration.Input)
  const millis = duration?._tag === "Some" && Duration.isFinite(duration.value) ? Duration.toMillis(duration.value) : Number.NaN
  return Number.isFinite(millis) && millis >= 0
    ? Effect.succeed(Math.floor(millis))
    : Effect.fail(new InvalidInput({ field: "busyTimeout", rule: "a finite duration of zero or more", value: input }))
}

const synchronousOf = (input: unknown) =>
  input === undefined || input === "full"
    ? Effect.succeed("FULL")
    : input === "normal"
    ? Effect.succeed("NORMAL")
    : Effect.fail(new InvalidInput({ field: "synchronous", rule: "\"full\" or \"normal\"", value: input }))

const connect = (given: Options) =>
  Effect.gen(function*() {
    const options = yield* readOptions(given, ["filename", "busyTimeout", "synchronous"])
    // "" would open a temporary database of this connection's own: nothing durable, nothing shared.
    if (typeof options.filename !== "string" || options.filename === "") {
      return yield* new InvalidInput({ field: "filename", rule: "the database file's path, or \":memory:\" for a private in-memory database", value: options.filename })
    }
    const db = yield* Effect.acquireRelease(
      Effect.try({ try: () => new DatabaseSync(options.filename), catch: failure("Failed to open the database", "open") }),
      (db) => Effect.sync(() => db.close())
    )
    const busy = yield* busyTimeoutOf(options.busyTimeout)
    const synchronous = yield* synchronousOf(options.synchronous)
    yield* Effect.try({
      try: () => db.exec(`PRAGMA journal_mode = WAL; PRAGMA busy_timeout = ${busy}; PRAGMA synchronous = ${synchronous}`),
      catch: failure("Failed to configure the database", "open")
    })
    const prepared = yield* Cache.make({
      capacity: 200,
      lookup: (sql: string) => Effect.try({ try: () => db.prepare(sql), catch: failure("Failed to prepare statement", "prepare") })
    })
    const runOn = (statement: StatementSync, params: ReadonlyArray<unknown>, arrays: boolean) =>
      Effect.withFiber<ReadonlyArray<object>, SqlError>((fiber) =>
        Effect.try({
          try: () => {
            statement.setReadBigInts(Context.get(fiber.context, Client.SafeIntegers))
            statement.setReturnArrays(arrays)
            // The statement compiler produces the parameters: values SQLite binds.
            const bound = params as ReadonlyArray<SQLInputValue>
            if (statement.columns().length > 0) return statement.all(...bound)
            statement.run(...bound)
            return []
          },
          catch: failure("Failed to execute statement", "execute")
        })
      )
    const run = (sql: string, params: ReadonlyArray<unknown>, arrays = false) =>
      Effect.flatMap(Cache.get(prepared, sql), (statement) => runOn(statement, params, arrays))
    const unprepared = (sql: string, params: ReadonlyArray<unknown>, arrays = false) =>
      Effect.flatMap(
        Effect.try({ try: () => db.prepare(sql), catch: failure("Failed to prepare statement", "prepare") }),
        (statement) => runOn(statement, params, arrays)
      )
    /** Rows as arrays of column values (`setReturnArrays`). */
    const values = (rows: Effect.Effect<ReadonlyArray<object>, SqlError>) =>
      Effect.map(rows, (all) => all as ReadonlyArray<ReadonlyArray<unknown>>)
    const connection: Connection = {
      execute: (sql, params, transform) => transform ? Effect.map(run(sql, params), transform) : run(sql, params),
      executeRaw: (sql, params) => run(sql, params),
      executeValues: (sql, params) => values(run(sql, params, true)),
      executeValuesUnprepared: (sql, params) => values(unprepared(sql, params, true)),
      executeUnprepared: (sql, params, transform) =>
        transform ? Effect.map(unprepared(sql, params), transform) : unprepared(sql, params),
      executeStream: () => Stream.die("executeStream is not supported by loopwork's SQLite client")
    }
    return connection
  })

/** A client over `connection`, one statement at a time under `lock`; a transaction holds it until it ends. */
const clientOver = (connection: Connection, lock: Semaphore.Semaphore, joins?: Client.SqlClient) => {
  const transactionAcquirer = Effect.uninterruptibleMask((restore) => {
    const scope = Context.getUnsafe(Fiber.getCurrent()!.context, Scope.Scope)
    return Effect.as(Effect.tap(restore(lock.take(1)), () => Scope.addFinalizer(scope, lock.release(1))), connection)
  })
  return Client.make({
    acquirer: lock.withPermits(1)(Effect.succeed(connection)),
    transactionAcquirer,
    compiler: Statement.makeCompilerSqlite(),
    driver: "loopwork-node-sqlite",
    beginTransaction: "BEGIN IMMEDIATE",
    spanAttributes: [["db.system.name", "sqlite"]],
    ...(joins === undefined ? {} : { transactionService: joins.transactionService })
  })
}

/** @internal the client of the file `options` name */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const connection = yield* connect(options)
    return yield* clientOver(connection, yield* Semaphore.make(1))
  })

/**
 * @internal the file's client, and a second client of the same file whose
 * commits are not flushed one by one (`synchronous = NORMAL` on its own
 * connection), for the writes whose loss in an operating-system crash is
 * harmless (`UnflushedClient`, ./unflushedClient.ts). The two take turns
 * under one lock: two connections of one thread must never wait for each
 * other's SQLite lock (the wait blocks the thread that would release it).
 * They share their transaction too: inside a transaction of either, a
 * statement of the other runs in it (the engine's own steps run some of the
 * unflushed writes inside a transactional tool's transaction), instead of
 * waiting for the lock that transaction holds. A flushed commit flushes the
 * unflushed ones before it (one journal, written in order).
 */
export const makeWithUnflushed = (given: Options) =>
  Effect.gen(function*() {
    const options = yield* readOptions(given, ["filename", "busyTimeout", "synchronous"])
    const lock = yield* Semaphore.make(1)
    const flushed = yield* clientOver(yield* connect(options), lock)
    const unflushed = yield* clientOver(yield* connect({ ...options, synchronous: "normal" }), lock, flushed)
    return { flushed, unflushed }
  })


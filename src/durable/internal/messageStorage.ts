/**
 * effect's SQL message storage, with one change: on PostgreSQL, the read of
 * a runner's unprocessed messages uses the time rounded down to a whole
 * poll interval.
 *
 * effect writes that time into the text of its read (`deliver_at <= <now>`,
 * a literal, not a parameter), so every read is a statement PostgreSQL has
 * never seen: parsed and planned again — with the runner's 300 shard ids in
 * it — and prepared once more on the connection, pushing older statements
 * out of its cache. A runner reads after every message it is sent (every
 * recorded step), so this was the largest part of the database's time per
 * step. Rounded down, the text stays the same for a whole interval and the
 * prepared statement is reused.
 *
 * Rounding down only delays: a message due later (a durable clock's or a
 * cron's wake-up) is read at most one interval after it would have been —
 * within two poll intervals of its time instead of one — and never early.
 * Nothing else in the read changes. SQLite reads are not prepared by effect,
 * so there the time is left as it is.
 *
 * @internal
 */
import { Duration, Effect, Layer, Option } from "effect"
import { type Envelope, MessageStorage, ShardingConfig, Snowflake, SqlMessageStorage } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { withOneStatementReplies } from "./messageStoragePg.ts"
import { UnflushedClient } from "./unflushedClient.ts"

/** @internal `now` rounded down to a multiple of `quantum` milliseconds */
export const roundedDown = (now: number, quantum: number): number => quantum > 1 ? now - (now % quantum) : now


/**
 * @internal Whether `envelope` asks a workflow execution to run one of its
 * activities. Such a request need not reach the disk before the activity
 * runs: the activity's reply commits after it and is flushed, which flushes
 * the request too; and a request lost with the server is sent again when
 * the execution replays, as one whose activity never replied would be run
 * again — the same single window either way (`./unflushedClient.ts`).
 */
export const isActivityRequest = (envelope: Envelope.Encoded): boolean =>
  envelope._tag === "Request" && envelope.tag === "activity" && envelope.address.entityType.startsWith("Workflow/")

/**
 * @internal `encoded` whose reads of unprocessed messages, and saves of
 * activity requests outside a transaction of `sql`, go through
 * `unflushed`'s driver, if any
 */
export const withUnflushed = (
  encoded: MessageStorage.Encoded,
  unflushed: Option.Option<MessageStorage.Encoded>,
  sql: SqlClient
): MessageStorage.Encoded =>
  Option.match(unflushed, {
    onNone: () => encoded,
    onSome: (other) => ({
      ...encoded,
      unprocessedMessages: other.unprocessedMessages,
      saveEnvelope: (options) =>
        isActivityRequest(options.envelope)
          ? Effect.flatMap(Effect.serviceOption(sql.transactionService), (inTransaction) =>
            Option.isNone(inTransaction) ? other.saveEnvelope(options) : encoded.saveEnvelope(options))
          : encoded.saveEnvelope(options)
    })
  })

/** @internal `encoded` whose reads of unprocessed messages see the time rounded down to `quantum` milliseconds */
export const withSteadyReads = (encoded: MessageStorage.Encoded, quantum: number): MessageStorage.Encoded => ({
  ...encoded,
  unprocessedMessages: (shardIds, now, options) => encoded.unprocessedMessages(shardIds, roundedDown(now, quantum), options)
})

/**
 * @internal effect's SQL storage driver (no migrations), its reads of
 * unprocessed messages steady on PostgreSQL: the time rounded down to the
 * poll interval; its replies saved in one statement on PostgreSQL
 * (`./messageStoragePg.ts`); its reads and its activity requests through
 * the `UnflushedClient` when one is provided
 */
export const steadyEncoded = Effect.gen(function*() {
  const sql = yield* SqlClient
  const config = yield* ShardingConfig.ShardingConfig
  const encoded = withUnflushed(
    withOneStatementReplies(yield* SqlMessageStorage.makeEncodedStorage({}), sql),
    yield* Effect.serviceOption(UnflushedClient).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeedNone,
        onSome: (unflushed) => Effect.asSome(Effect.provideService(SqlMessageStorage.makeEncodedStorage({}), SqlClient, unflushed))
      }))
    ),
    sql
  )
  const interval = Duration.toMillis(Duration.fromInputUnsafe(config.entityMessagePollInterval))
  return withSteadyReads(encoded, sql.onDialectOrElse({ pg: () => Math.floor(interval), orElse: () => 1 }))
})

/**
 * @internal effect's `SqlMessageStorage.layer` (its migrations, then its
 * storage), its reads steady on PostgreSQL
 */
export const layer = Layer.effect(MessageStorage.MessageStorage, Effect.flatMap(steadyEncoded, MessageStorage.makeEncoded)).pipe(
  Layer.provide(SqlMessageStorage.layerMigrations({})),
  Layer.provide(Snowflake.layerGenerator)
)

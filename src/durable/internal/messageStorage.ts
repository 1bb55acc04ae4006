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
import { MessageStorage, ShardingConfig, Snowflake, SqlMessageStorage } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { withOneStatementReplies } from "./messageStoragePg.ts"
import { UnflushedClient } from "./unflushedClient.ts"

/** @internal `now` rounded down to a multiple of `quantum` milliseconds */
export const roundedDown = (now: number, quantum: number): number => quantum > 1 ? now - (now % quantum) : now


/**
 * @internal `encoded` whose reads of unprocessed messages go through
 * `unflushed`'s driver, if any. Nothing else does: a request saved without
 * waiting for the disk could be lost in a crash of the server alone, while
 * its runner goes on and saves the step's reply; the replay would then send
 * the request again under a new id, find no reply, and run the step twice.
 */
export const withUnflushed = (
  encoded: MessageStorage.Encoded,
  unflushed: Option.Option<MessageStorage.Encoded>
): MessageStorage.Encoded =>
  Option.match(unflushed, {
    onNone: () => encoded,
    onSome: (other) => ({ ...encoded, unprocessedMessages: other.unprocessedMessages })
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
 * (`./messageStoragePg.ts`); its reads through the `UnflushedClient` when
 * one is provided
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
    )
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

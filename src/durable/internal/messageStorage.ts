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
import { Context, Duration, Effect, Layer, Option } from "effect"
import { MessageStorage, ShardingConfig, Snowflake, SqlMessageStorage } from "effect/cluster"
import { SqlClient } from "effect/sql/SqlClient"
import { withOneStatementReplies } from "./messageStoragePg.ts"

/** @internal `now` rounded down to a multiple of `quantum` milliseconds */
export const roundedDown = (now: number, quantum: number): number => quantum > 1 ? now - (now % quantum) : now

/**
 * @internal A client of the same database for the reads of unprocessed
 * messages only, whose commits need not wait for the disk. Such a read
 * writes one thing: its claim, `last_read`, a stamp that keeps the next
 * reads (for ten minutes) from returning a message being processed. Were a
 * stamp lost in a crash of the server, the message would be read again,
 * as after those ten minutes or after effect's own resets, and skipped
 * while its runner is processing it. A stamp can only be lost with what
 * came after it in the server's log: the reply to its message, which is
 * flushed — and flushes the stamp — before it returns.
 */
export class ClaimClient extends Context.Service<ClaimClient, SqlClient>()("loopwork/durable/ClaimClient") {}

/** @internal `encoded` whose reads of unprocessed messages go through `claims`' driver, if any */
export const withClaims = (encoded: MessageStorage.Encoded, claims: Option.Option<MessageStorage.Encoded>): MessageStorage.Encoded =>
  Option.match(claims, {
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
 * (`./messageStoragePg.ts`); its reads through the `ClaimClient` when one
 * is provided
 */
export const steadyEncoded = Effect.gen(function*() {
  const sql = yield* SqlClient
  const config = yield* ShardingConfig.ShardingConfig
  const encoded = withClaims(
    withOneStatementReplies(yield* SqlMessageStorage.makeEncodedStorage({}), sql),
    yield* Effect.serviceOption(ClaimClient).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeedNone,
        onSome: (claims) => Effect.asSome(Effect.provideService(SqlMessageStorage.makeEncodedStorage({}), SqlClient, claims))
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

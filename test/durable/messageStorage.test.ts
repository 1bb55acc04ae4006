/**
 * The message storage of the durable engine: effect's SQL storage, whose
 * reads of unprocessed messages on PostgreSQL see the time rounded down to
 * the poll interval — the same statement text for a whole interval, so
 * PostgreSQL reuses its prepared statement instead of parsing and planning
 * the read again at every step. A message due later is read no earlier
 * than its time, at most one interval late; on SQLite the time is exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { ShardingConfig, SqlMessageStorage } from "effect/cluster"
import type { MessageStorage } from "effect/cluster"
import { Digest } from "effect/crypto"
import type { SqlClient } from "effect/sql/SqlClient"
import { Activity, DurableClock, Workflow } from "effect/workflow"
import { PgClient } from "@effect/sql-pg"
import { roundedDown, steadyEncoded, withSteadyReads } from "../../src/durable/internal/messageStorage.ts"
import { SqliteClient } from "../../src/durable/index.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { requestEnvelope } from "./support/envelopes.ts"

const { database } = usePostgres({ beforeAll, afterAll })

/** A request envelope for entity `e` on shard default:1, due at `deliverAt`. */
const save = (encoded: MessageStorage.Encoded, requestId: string, deliverAt: number | null) =>
  encoded.saveEnvelope(requestEnvelope(requestId, deliverAt))

const read = (encoded: MessageStorage.Encoded, now: number) =>
  Effect.map(encoded.unprocessedMessages(["default:1"], now), (messages) => messages.map((m) => m.envelope._tag === "Request" ? m.envelope.requestId : "?"))

/** `use` with the engine's storage driver over `sql`, its poll interval 250 ms, its tables migrated. */
const withStorage = <A, E, E2>(sql: Layer.Layer<SqlClient, E>, use: (encoded: MessageStorage.Encoded) => Effect.Effect<A, E2>) =>
  Effect.gen(function*() {
    yield* Layer.build(SqlMessageStorage.layerMigrations({}))
    return yield* Effect.flatMap(steadyEncoded, use)
  }).pipe(
    Effect.provide(Layer.mergeAll(
      sql,
      Digest.layerWebCrypto,
      Layer.succeed(ShardingConfig.ShardingConfig, ShardingConfig.ShardingConfig.of({ ...ShardingConfig.defaults, entityMessagePollInterval: 250 }))
    )),
    Effect.scoped
  )

describe("the durable engine's message storage", () => {
  it.each([
    { now: 1_234, quantum: 250, seen: 1_000 },
    { now: 1_000, quantum: 250, seen: 1_000 },
    { now: 1_249, quantum: 250, seen: 1_000 },
    { now: 1_234, quantum: 1, seen: 1_234 },
    { now: 1_234, quantum: 0, seen: 1_234 }
  ])("the time $now read with quantum $quantum is $seen: never later than now", ({ now, quantum, seen }) => {
    expect(roundedDown(now, quantum)).toBe(seen)
  })

  it.effect("only the read of unprocessed messages sees the rounded time; everything else is effect's own", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const inner = {
        unprocessedMessages: (_shards: unknown, now: number) => Effect.sync(() => (seen.push(now), [])),
        unprocessedMessagesById: (_ids: unknown, now: number) => Effect.sync(() => (seen.push(now), []))
      } as unknown as MessageStorage.Encoded
      const steady = withSteadyReads(inner, 250)
      yield* steady.unprocessedMessages(["default:1"], 1_234)
      yield* steady.unprocessedMessagesById([] as never, 1_234)
      expect(seen).toEqual([1_000, 1_234])
      expect(steady.saveEnvelope).toBe(inner.saveEnvelope)
    }))

  it.effect("on PostgreSQL a message due at 1 100 is not read at 1 200 (the read sees 1 000), and is at 1 250", () =>
    Effect.gen(function*() {
      const url = Redacted.make(yield* Effect.promise(database))
      yield* withStorage(PgClient.layer({ url }), (encoded) =>
        Effect.gen(function*() {
          yield* save(encoded, "1", null)
          yield* save(encoded, "2", 1_100)
          expect(yield* read(encoded, 1_200)).toEqual(["1"])
          expect(yield* read(encoded, 1_250)).toEqual(["2"])
        }))
    }))

  it.effect("on SQLite the time is exact: a message due at 1 100 is read at 1 200", () =>
    Effect.gen(function*() {
      yield* withStorage(SqliteClient.layer({ filename: ":memory:" }), (encoded) =>
        Effect.gen(function*() {
          yield* save(encoded, "2", 1_100)
          expect(yield* read(encoded, 1_099)).toEqual([])
          expect(yield* read(encoded, 1_200)).toEqual(["2"])
        }))
    }))

  it.live("a durable clock on PostgreSQL wakes its run on time: no earlier, within two poll intervals", () =>
    Effect.gen(function*() {
      const Sleeper = Workflow.make("Sleeper", {
        payload: Schema.Struct({ id: Schema.String }),
        idempotencyKey: ({ id }) => id,
        success: Schema.Number
      })
      const body = Sleeper.toLayer(() =>
        Effect.gen(function*() {
          // Recorded: the body runs again from the start when the clock wakes it.
          const started = yield* Activity.make({ name: "start", success: Schema.Number, execute: Effect.sync(() => Date.now()) })
          yield* DurableClock.sleep({ name: "nap", duration: "1 second", inMemoryThreshold: 0 })
          return Date.now() - started
        }))
      const url = Redacted.make(yield* Effect.promise(database))
      const slept = yield* Sleeper.execute({ id: "s1" }).pipe(
        Effect.provide(body.pipe(Layer.provideMerge(DurablePostgres.single({ url, pollInterval: "200 millis" }))))
      )
      expect(slept).toBeGreaterThanOrEqual(1_000)
      expect(slept).toBeLessThan(1_000 + 2 * 200 + 500)
    }), 30_000)
})

/**
 * How DurablePostgres's commits reach the disk: by default every commit is
 * flushed before it returns, except a runner's reads of unprocessed
 * messages (whose only write is a claim stamp), which go through a
 * connection of their own that does not wait for the flush;
 * `synchronous: "normal"` makes no connection wait.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schedule } from "effect"
import { ShardingConfig, SqlMessageStorage } from "effect/cluster"
import { Digest } from "effect/crypto"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { steadyEncoded } from "../../src/durable/internal/messageStorage.ts"
import { UnflushedClient } from "../../src/durable/internal/unflushedClient.ts"
import { layerUnflushed, withSynchronous } from "../../src/durable/postgres/pgSynchronous.ts"
import { engine } from "../../src/durable/internal/engine.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { requestEnvelope } from "./support/envelopes.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const setting = (sql: SqlClient) => Effect.map(sql<{ synchronous_commit: string }>`SHOW synchronous_commit`, (rows) => rows[0]?.synchronous_commit)

const url = Effect.map(Effect.promise(database), Redacted.make)

/** The storage's services over two databases: `main` through the SqlClient, `other` through the UnflushedClient. */
const twoDatabases = (main: Layer.Layer<SqlClient | PgClient.PgClient, unknown>, other: Redacted.Redacted<string>) =>
  Layer.mergeAll(
    main,
    layerUnflushed({ url: other }),
    Digest.layerWebCrypto,
    Layer.succeed(ShardingConfig.ShardingConfig, ShardingConfig.ShardingConfig.of({ ...ShardingConfig.defaults, entityMessagePollInterval: 250 }))
  )

describe("DurablePostgres's synchronous option", () => {
  it.effect.each([undefined, "full"] as const)("%j leaves the pool options as they are", (synchronous) =>
    Effect.gen(function*() {
      const options = { synchronous, startupParameters: { application_name: "app" } }
      expect(yield* withSynchronous(options)).toBe(options)
    }))

  it.effect("\"normal\" turns synchronous_commit off in the startup parameters, keeping the others", () =>
    Effect.gen(function*() {
      const options = yield* withSynchronous({ synchronous: "normal", startupParameters: { application_name: "app" } })
      expect(options.startupParameters).toEqual({ application_name: "app", synchronous_commit: "off" })
    }))

  it.effect.each(["off", "fast", 1])("%j is an InvalidInput naming the field", (synchronous) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(withSynchronous({ synchronous: synchronous as "full" }))
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "synchronous" })
      const built = yield* Effect.flip(Layer.build(DurablePostgres.single({ synchronous: synchronous as "full" })).pipe(Effect.scoped))
      expect(built).toMatchObject({ _tag: "InvalidInput", field: "synchronous" })
    }))

  it.effect("by default the database's client flushes every commit; with \"normal\" none", () =>
    Effect.gen(function*() {
      const byDefault = yield* Effect.flatMap(SqlClient, setting).pipe(Effect.provide(DurablePostgres.client({ url: yield* url })))
      const normal = yield* Effect.flatMap(SqlClient, setting).pipe(Effect.provide(DurablePostgres.client({ url: yield* url, synchronous: "normal" })))
      expect([byDefault, normal]).toEqual(["on", "off"])
    }))

  it.effect("a runner's reads go through a connection that does not wait for the flush; none is opened with \"normal\"", () =>
    Effect.gen(function*() {
      const claims = yield* Effect.flatMap(Effect.serviceOption(UnflushedClient), (client) => Option.isSome(client) ? setting(client.value) : Effect.succeed("none")).pipe(
        Effect.provide(layerUnflushed({ url: yield* url }))
      )
      expect(claims).toBe("off")
      const none = yield* Effect.serviceOption(UnflushedClient).pipe(Effect.provide(layerUnflushed({ url: yield* url, synchronous: "normal" })))
      expect(Option.isNone(none)).toBe(true)
    }))

  it.effect("the storage reads unprocessed messages through the UnflushedClient, and writes everything else through the SqlClient", () =>
    Effect.gen(function*() {
      // two databases: a message saved through the storage is only read back through the other one's client
      const main = PgClient.layer({ url: yield* url })
      const other = yield* url
      const request = (requestId: string) => requestEnvelope(requestId)
      const ids = yield* Effect.gen(function*() {
        const claims = Option.getOrThrow(yield* Effect.serviceOption(UnflushedClient))
        yield* Effect.provideService(Layer.build(SqlMessageStorage.layerMigrations({})), SqlClient, claims)
        yield* Effect.flatMap(Effect.provideService(SqlMessageStorage.makeEncodedStorage({}), SqlClient, claims), (e) => e.saveEnvelope(request("2")))
        yield* Layer.build(SqlMessageStorage.layerMigrations({}))
        const encoded = yield* steadyEncoded
        yield* encoded.saveEnvelope(request("1"))
        const read = yield* encoded.unprocessedMessages(["default:1"], Date.now())
        return read.map((m) => m.envelope._tag === "Request" ? m.envelope.requestId : "?")
      }).pipe(
        Effect.provide(twoDatabases(main, other)),
        Effect.scoped
      )
      expect(ids).toEqual(["2"])
    }))

  it.effect("every message is saved through the SqlClient, activity requests of workflows too: none may be lost with the server alone", () =>
    Effect.gen(function*() {
      const main = PgClient.layer({ url: yield* url })
      const other = yield* url
      const saved = yield* Effect.gen(function*() {
        const sql = yield* SqlClient
        const unflushed = Option.getOrThrow(yield* Effect.serviceOption(UnflushedClient))
        yield* Effect.provideService(Layer.build(SqlMessageStorage.layerMigrations({})), SqlClient, unflushed)
        yield* Layer.build(SqlMessageStorage.layerMigrations({}))
        const encoded = yield* steadyEncoded
        yield* encoded.saveEnvelope(requestEnvelope("3", null, "activity", "Workflow/W"))
        yield* encoded.saveEnvelope(requestEnvelope("4", null, "run", "Workflow/W"))
        const ids = (client: SqlClient) =>
          Effect.map(client<{ request_id: string }>`SELECT request_id FROM cluster_messages ORDER BY request_id`, (rows) => rows.map((row) => String(row.request_id)))
        return { main: yield* ids(sql), unflushed: yield* ids(unflushed) }
      }).pipe(
        Effect.provide(twoDatabases(main, other)),
        Effect.scoped
      )
      expect(saved).toEqual({ main: ["3", "4"], unflushed: [] })
    }))

  it.live("a runner's registration, heartbeats and shard locks go through the UnflushedClient", () =>
    Effect.gen(function*() {
      const main = yield* url
      const other = yield* url
      // The message tables in both databases, so the runner's reads through the UnflushedClient find theirs.
      yield* Layer.build(SqlMessageStorage.layerMigrations({})).pipe(Effect.provide(PgClient.layer({ url: other })), Effect.scoped)
      const runners = (client: SqlClient) =>
        Effect.map(
          client<{ address: string | null }>`SELECT to_regclass('cluster_runners')::text AS address`,
          (rows) => rows[0]?.address ?? null
        ).pipe(Effect.flatMap((table) =>
          table === null ? Effect.succeed([] as Array<string>) : Effect.map(client<{ address: string }>`SELECT address FROM cluster_runners`, (rows) => rows.map((row) => row.address))
        ))
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient
        const unflushed = Option.getOrThrow(yield* Effect.serviceOption(UnflushedClient))
        const locks = (client: SqlClient) =>
          Effect.map(
            client<{ count: string }>`SELECT count(*)::text AS count FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.datname = current_database()`,
            (rows) => Number(rows[0]?.count ?? 0)
          )
        // The runner registers and takes its shards in the engine's background: wait for both (bounded).
        yield* Effect.all([runners(unflushed), locks(unflushed)]).pipe(
          Effect.filterOrFail(([addresses, held]) => addresses.length > 0 && held > 0),
          Effect.retry({ times: 200, schedule: Schedule.spaced("50 millis") })
        )
        return {
          main: { runners: yield* runners(sql), locks: yield* locks(sql) },
          unflushed: { runners: yield* runners(unflushed), locks: (yield* locks(unflushed)) > 0 }
        }
      }).pipe(
        Effect.provide(engine({}, { _tag: "Runner", name: "probe" }).pipe(
          Layer.provideMerge(layerUnflushed({ url: other })),
          Layer.provideMerge(PgClient.layer({ url: main }))
        )),
        Effect.scoped
      )
      expect(seen).toEqual({ main: { runners: [], locks: 0 }, unflushed: { runners: ["probe:1"], locks: true } })
    }))
})

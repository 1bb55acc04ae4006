/**
 * How DurablePostgres's commits reach the disk: by default every commit is
 * flushed before it returns, except a runner's reads of unprocessed
 * messages (whose only write is a claim stamp), which go through a
 * connection of their own that does not wait for the flush;
 * `synchronous: "normal"` makes no connection wait.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { ShardingConfig, SqlMessageStorage } from "effect/cluster"
import { Digest } from "effect/crypto"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { ClaimClient, steadyEncoded } from "../../src/durable/internal/messageStorage.ts"
import { layerClaims, withSynchronous } from "../../src/durable/postgres/pgSynchronous.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { requestEnvelope } from "./support/envelopes.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const setting = (sql: SqlClient) => Effect.map(sql<{ synchronous_commit: string }>`SHOW synchronous_commit`, (rows) => rows[0]?.synchronous_commit)

const url = Effect.map(Effect.promise(database), Redacted.make)

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
      const claims = yield* Effect.flatMap(Effect.serviceOption(ClaimClient), (client) => Option.isSome(client) ? setting(client.value) : Effect.succeed("none")).pipe(
        Effect.provide(layerClaims({ url: yield* url }))
      )
      expect(claims).toBe("off")
      const none = yield* Effect.serviceOption(ClaimClient).pipe(Effect.provide(layerClaims({ url: yield* url, synchronous: "normal" })))
      expect(Option.isNone(none)).toBe(true)
    }))

  it.effect("the storage reads unprocessed messages through the ClaimClient, and writes everything else through the SqlClient", () =>
    Effect.gen(function*() {
      // two databases: a message saved through the storage is only read back through the other one's client
      const main = PgClient.layer({ url: yield* url })
      const other = yield* url
      const request = (requestId: string) => requestEnvelope(requestId)
      const ids = yield* Effect.gen(function*() {
        const claims = Option.getOrThrow(yield* Effect.serviceOption(ClaimClient))
        yield* Effect.provideService(Layer.build(SqlMessageStorage.layerMigrations({})), SqlClient, claims)
        yield* Effect.flatMap(Effect.provideService(SqlMessageStorage.makeEncodedStorage({}), SqlClient, claims), (e) => e.saveEnvelope(request("2")))
        yield* Layer.build(SqlMessageStorage.layerMigrations({}))
        const encoded = yield* steadyEncoded
        yield* encoded.saveEnvelope(request("1"))
        const read = yield* encoded.unprocessedMessages(["default:1"], Date.now())
        return read.map((m) => m.envelope._tag === "Request" ? m.envelope.requestId : "?")
      }).pipe(
        Effect.provide(Layer.mergeAll(
          main,
          layerClaims({ url: other }),
          Digest.layerWebCrypto,
          Layer.succeed(ShardingConfig.ShardingConfig, ShardingConfig.ShardingConfig.of({ ...ShardingConfig.defaults, entityMessagePollInterval: 250 }))
        )),
        Effect.scoped
      )
      expect(ids).toEqual(["2"])
    }))
})

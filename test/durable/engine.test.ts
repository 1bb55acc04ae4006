/**
 * The durable stores' settings are checked before anything connects: a
 * bad duration or runner name is an InvalidInput, never a defect, and no
 * setting is read from the environment.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { ShardingConfig } from "effect/cluster"
import { configOf } from "../../src/durable/internal/engine.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { DurableSqlite, SqliteClient } from "../../src/durable/index.ts"

const settings = (timing: Parameters<typeof configOf>[0], role: Parameters<typeof configOf>[1]) =>
  Effect.flatMap(Effect.result(Layer.build(configOf(timing, role))), (result) =>
    result._tag === "Failure"
      ? Effect.fail(result.failure)
      : Effect.succeed(result.success.mapUnsafe.get(ShardingConfig.ShardingConfig.key) as ShardingConfig.ShardingConfig["Service"])).pipe(Effect.scoped)

describe("durable store settings", () => {
  it.effect.each([
    { field: "pollInterval", timing: { pollInterval: "5 seconds" } },
    { field: "pollInterval", timing: { pollInterval: "0 millis" } },
    { field: "pollInterval", timing: { pollInterval: "soon" } },
    { field: "failoverAfter", timing: { failoverAfter: -1 } },
    { field: "failoverAfter", timing: { failoverAfter: "10 millis" } },
    { field: "pollInterval", timing: { pollInterval: "1 millis" } },
    { field: "pollInterval", timing: { pollInterval: 10n } },
    { field: "failoverAfter", timing: { failoverAfter: { toString: null } } }
  ])("$field $timing.pollInterval$timing.failoverAfter is refused", ({ field, timing }) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(settings(timing as never, { _tag: "Client" }))
      expect(error._tag).toBe("InvalidInput")
      expect(error.field).toBe(field)
    }))

  it.effect.each(["", "x".repeat(201), 42, "__proto__".repeat(30)])("runner name %j is refused", (name) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(settings({}, { _tag: "Runner", name: name as string }))
      expect(error._tag).toBe("InvalidInput")
      expect(error.field).toBe("name")
    }))

  it.effect("defaults: poll 250 ms, failover 10 s, lock refresh a quarter of it; the address is the name, not PORT", () =>
    Effect.gen(function*() {
      process.env.PORT = "9999"
      const config = yield* settings({}, { _tag: "Runner", name: "worker-1" })
      expect(Duration.toMillis(Duration.fromInputUnsafe(config.entityMessagePollInterval))).toBe(250)
      expect(Duration.toMillis(Duration.fromInputUnsafe(config.shardLockExpiration))).toBe(10_000)
      expect(Duration.toMillis(Duration.fromInputUnsafe(config.shardLockRefreshInterval))).toBe(2_500)
      expect(Option.map(config.runnerAddress, (address) => `${address.host}:${address.port}`)).toEqual(Option.some("worker-1:1"))
      const client = yield* settings({ pollInterval: "1 second" }, { _tag: "Client" })
      expect(Option.isNone(client.runnerAddress)).toBe(true)
    }).pipe(Effect.ensuring(Effect.sync(() => delete process.env.PORT))))

  it.effect("a SQLite runner with a bad setting fails as InvalidInput when built", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(DurableSqlite.runner({ filename: ":memory:", pollInterval: "1 minute" })).pipe(Effect.scoped))
      expect(error._tag).toBe("InvalidInput")
    }))

  it.effect.each([
    { options: {}, pragma: 2 },
    { options: { synchronous: "full" }, pragma: 2 },
    { options: { synchronous: "normal" }, pragma: 1 }
  ] as const)("SQLite synchronous $options.synchronous → PRAGMA synchronous $pragma", ({ options, pragma }) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const rows = yield* sql<{ synchronous: number }>`PRAGMA synchronous`
      expect(rows[0]?.synchronous).toBe(pragma)
    }).pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:", ...options }))))

  it.effect.each([{ synchronous: "off" }, { synchronous: "__proto__" }, { busyTimeout: -5 }, { busyTimeout: "forever" }])(
    "SQLite option %j is an InvalidInput",
    (options) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Layer.build(SqliteClient.layer({ filename: ":memory:", ...(options as object) })).pipe(Effect.scoped))
        expect(error._tag).toBe("InvalidInput")
      })
  )
})

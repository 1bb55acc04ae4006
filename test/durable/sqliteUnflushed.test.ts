/**
 * A SQLite runner's second connection (`makeWithUnflushed`, src/durable/internal/sqliteConnection.ts):
 * its commits are not flushed one by one, the file's client's are; the two
 * take turns under one lock and share their transaction, so neither ever
 * waits for a SQLite lock the other holds in the same thread.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { Reactivity } from "effect/reactivity"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeWithUnflushed } from "../../src/durable/internal/sqliteConnection.ts"

const withFile = <A, E>(use: (filename: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "loopwork-unflushed-"))),
    (dir) => use(join(dir, "runs.db")),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const pair = (filename: string) => makeWithUnflushed({ filename, busyTimeout: "200 millis" }).pipe(Effect.provide(Reactivity.layer))

const count = (rows: ReadonlyArray<{ readonly n: unknown }>) => Number(rows[0]?.n)

describe("a SQLite runner's unflushed connection", () => {
  it.live("flushes every commit on the file's connection and not on the other", () =>
    withFile((filename) =>
      Effect.gen(function*() {
        const { flushed, unflushed } = yield* pair(filename)
        // PRAGMA synchronous: 2 is FULL, 1 is NORMAL.
        expect(yield* flushed<{ synchronous: number }>`PRAGMA synchronous`).toEqual([{ synchronous: 2 }])
        expect(yield* unflushed<{ synchronous: number }>`PRAGMA synchronous`).toEqual([{ synchronous: 1 }])
      }).pipe(Effect.scoped)
    ))

  it.live("a statement of the unflushed client inside the file's transaction runs in it, and rolls back with it", () =>
    withFile((filename) =>
      Effect.gen(function*() {
        const { flushed, unflushed } = yield* pair(filename)
        yield* flushed`CREATE TABLE beats (n INTEGER)`
        const failed = yield* Effect.flip(flushed.withTransaction(Effect.gen(function*() {
          yield* flushed`INSERT INTO beats (n) VALUES (1)`
          // Without the shared transaction this waits forever for the lock the transaction holds.
          yield* unflushed`INSERT INTO beats (n) VALUES (2)`
          return yield* Effect.fail("roll back" as const)
        })))
        expect(failed).toBe("roll back")
        expect(count(yield* flushed<{ n: unknown }>`SELECT COUNT(*) AS n FROM beats`)).toBe(0)
        yield* flushed.withTransaction(Effect.andThen(flushed`INSERT INTO beats (n) VALUES (3)`, unflushed`INSERT INTO beats (n) VALUES (4)`))
        expect(count(yield* unflushed<{ n: unknown }>`SELECT COUNT(*) AS n FROM beats`)).toBe(2)
      }).pipe(Effect.scoped)
    ), 10_000)

  it.live("another fiber's statement waits for the transaction to end instead of for SQLite's lock", () =>
    withFile((filename) =>
      Effect.gen(function*() {
        const { flushed, unflushed } = yield* pair(filename)
        yield* flushed`CREATE TABLE beats (n INTEGER)`
        const order: Array<string> = []
        const inTransaction = yield* Deferred.make<void>()
        // A fiber of its own, outside the transaction: a wait for SQLite's lock would block the
        // thread and fail with SQLITE_BUSY after 200 ms.
        const other = yield* Effect.forkChild(
          Deferred.await(inTransaction).pipe(
            Effect.andThen(unflushed`INSERT INTO beats (n) VALUES (2)`),
            Effect.tap(() => Effect.sync(() => order.push("other")))
          )
        )
        yield* flushed.withTransaction(Effect.gen(function*() {
          yield* flushed`INSERT INTO beats (n) VALUES (1)`
          yield* Deferred.succeed(inTransaction, undefined)
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
          order.push("transaction")
        }))
        yield* Fiber.join(other)
        expect(order).toEqual(["transaction", "other"])
        expect(count(yield* flushed<{ n: unknown }>`SELECT COUNT(*) AS n FROM beats`)).toBe(2)
      }).pipe(Effect.scoped)
    ), 10_000)
})

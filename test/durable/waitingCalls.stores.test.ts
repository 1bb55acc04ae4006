/**
 * The waiting-call stores agree on numbered waits (memory, SQLite,
 * PostgreSQL): a later wait of a call (a higher number, or another kind)
 * replaces its row unanswered and shows its number; an answer claims only the wait it was given for; posting a
 * wait again changes nothing (a posting step run twice after a crash keeps
 * the answer). A table made before waits were numbered gains the `wait`
 * column, also when several processes open it at once, and its rows read as
 * first waits. On PostgreSQL, opening a table that has the column alters
 * nothing: a role with only the rights to read and write rows can open it,
 * and a reader holding a transaction on it does not block the opening.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient, WaitingCalls } from "../../src/durable/index.ts"
import { usePostgres } from "./support/postgres.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const refund = (amount: number, wait?: number): WaitingCalls.WaitingCall => ({
  callId: "c1",
  kind: "approval",
  tool: "refund",
  params: { amount },
  ...(wait === undefined ? {} : { wait })
})

/** The contract, on the store in the context. */
const contract = Effect.gen(function*() {
  const store = yield* WaitingCalls.WaitingCalls
  yield* store.post("E", refund(20))
  yield* store.post("E", { callId: "c2", kind: "result", tool: "measure", params: {} })
  expect(yield* store.claim("E", "c1", "yes", 1, "approval")).toBe("answered")
  // The retry waits again, on new arguments: the row is replaced, unanswered, and last in order.
  yield* store.post("E", refund(15, 2))
  expect(yield* store.list("E")).toEqual([{ callId: "c2", kind: "result", tool: "measure", params: {} }, refund(15, 2)])
  expect(yield* store.answerOf("E", "c1")).toBeUndefined()
  // An answer for the first wait does not answer the second.
  expect(yield* store.claim("E", "c1", "yes", 1, "approval")).toBe("taken")
  expect(yield* store.claim("E", "c1", "no", 2, "approval")).toBe("answered")
  expect(yield* store.claim("E", "c1", "yes", 2, "approval")).toBe("taken")
  // Posting a wait again (its step run twice) or an earlier one changes nothing.
  yield* store.post("E", refund(99, 2))
  yield* store.post("E", refund(99))
  expect(yield* store.answerOf("E", "c1")).toBe("no")
  expect((yield* store.posted("E")).find((call) => call.callId === "c1")).toEqual(refund(15, 2))
  expect(yield* store.claim("E", "c9", "yes", 1, "approval")).toBe("unknown")
  // An external tool that needs approval: approved, it waits for its result, the first wait of that kind.
  const transfer = { callId: "t1", tool: "transfer", params: { to: "bob" } }
  yield* store.post("E", { ...transfer, kind: "approval" })
  expect(yield* store.claim("E", "t1", "approve", 1, "approval")).toBe("answered")
  yield* store.post("E", { ...transfer, kind: "result" })
  expect((yield* store.list("E")).filter((call) => call.callId === "t1")).toEqual([{ ...transfer, kind: "result" }])
  // The approval sent again (a client retrying it) does not answer the result wait, which has the same number.
  expect(yield* store.claim("E", "t1", "approve", 1, "approval")).toBe("taken")
  expect(yield* store.claim("E", "t1", "receipt", 1, "result")).toBe("answered")
  yield* store.post("E", { ...transfer, kind: "result" })
  expect(yield* store.answerOf("E", "t1")).toBe("receipt")
})

/** Several answers claimed together: all or none, also for hostile call ids. */
const claimAllContract = Effect.gen(function*() {
  const store = yield* WaitingCalls.WaitingCalls
  const ids = ["c1", "__proto__", "constructor", "hasOwnProperty"]
  for (const callId of ids) yield* store.post("A", { ...refund(1), callId })
  yield* store.post("A", { callId: "r1", kind: "result", tool: "measure", params: {} })
  const all = (answer: string, wait = 1) => ids.map((callId) => ({ callId, answer, wait }))
  const answers = Effect.forEach(ids, (callId) => store.answerOf("A", callId))
  // One unknown call, one of another kind, one for a wait the call is not at: nothing is written.
  expect(yield* store.claimAll("A", "approval", [...all("yes"), { callId: "c9", answer: "yes", wait: 1 }])).toEqual({ callId: "c9", claim: "unknown" })
  expect(yield* store.claimAll("A", "approval", [...all("yes"), { callId: "r1", answer: "yes", wait: 1 }])).toEqual({ callId: "r1", claim: "taken" })
  expect(yield* store.claimAll("A", "approval", all("yes", 2))).toEqual({ callId: "__proto__", claim: "taken" })
  // The same call twice with two answers is refused whole; with the same answer twice it is one claim.
  expect(yield* store.claimAll("A", "approval", [...all("yes"), { callId: "constructor", answer: "no", wait: 1 }])).toEqual({ callId: "constructor", claim: "taken" })
  expect(yield* answers).toEqual(ids.map(() => undefined))
  expect(yield* store.list("A")).toHaveLength(5)
  // One call answered first by another: the rest stay unanswered.
  expect(yield* store.claim("A", "hasOwnProperty", "no", 1, "approval")).toBe("answered")
  expect(yield* store.claimAll("A", "approval", all("yes"))).toEqual({ callId: "hasOwnProperty", claim: "taken" })
  expect(yield* answers).toEqual([undefined, undefined, undefined, "no"])
  // Claimed together, then the same answers again (a retry) are still the calls'.
  const rest = all("yes").filter((claim) => claim.callId !== "hasOwnProperty")
  expect(yield* store.claimAll("A", "approval", [...rest, ...rest])).toBeUndefined()
  expect(yield* answers).toEqual(["yes", "yes", "yes", "no"])
  expect(yield* store.claimAll("A", "approval", rest)).toBeUndefined()
  expect(yield* store.claimAll("A", "approval", [])).toBeUndefined()
  expect(yield* store.list("A")).toEqual([{ callId: "r1", kind: "result", tool: "measure", params: {} }])
})

/** The table as a version before numbered waits made it, with a waiting call in it. */
const oldTable = Effect.gen(function*() {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE loopwork_waiting_calls (
    execution_id VARCHAR(255) NOT NULL, call_id VARCHAR(256) NOT NULL, position BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL, tool VARCHAR(256) NOT NULL, params TEXT NOT NULL, answer TEXT,
    PRIMARY KEY (execution_id, call_id))`
  yield* sql`INSERT INTO loopwork_waiting_calls VALUES ('Old', 'c1', 0, 'approval', 'refund', '{"amount":5}', NULL)`
})

/** The old row reads as a first wait, is answered, and is replaced by a second wait. */
const afterMigration = Effect.gen(function*() {
  const store = yield* WaitingCalls.WaitingCalls
  expect(yield* store.list("Old")).toEqual([{ callId: "c1", kind: "approval", tool: "refund", params: { amount: 5 } }])
  expect(yield* store.claim("Old", "c1", "yes", 1, "approval")).toBe("answered")
  yield* store.post("Old", { callId: "c1", kind: "approval", tool: "refund", params: { amount: 4 }, wait: 2 })
  expect(yield* store.list("Old")).toEqual([{ callId: "c1", kind: "approval", tool: "refund", params: { amount: 4 }, wait: 2 }])
}).pipe(Effect.provide(WaitingCalls.layerSql))

/** Opens the store `times` times at once on the old table, then checks its row. */
const migrated = (times: number) =>
  Effect.andThen(
    Effect.andThen(oldTable, Effect.scoped(Effect.all(Array.from({ length: times }, () => Layer.build(WaitingCalls.layerSql)), { concurrency: "unbounded" }))),
    afterMigration
  )


const sqlite = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "loopwork-waits-"))),
    (dir) => Effect.provide(effect, SqliteClient.layer({ filename: join(dir, "runs.db") })),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const postgres = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.promise(database), (url) => Effect.provide(effect, PgClient.layer({ url: Redacted.make(url) })))

describe("waiting-call stores and numbered waits", () => {
  it.effect("memory", () => Effect.provide(contract, WaitingCalls.layerMemory))
  it.effect("SQLite", () => sqlite(Effect.provide(contract, WaitingCalls.layerSql)))
  it.effect("PostgreSQL", () => postgres(Effect.provide(contract, WaitingCalls.layerSql)), 30_000)
  it.effect("memory: answers claimed together, all or none", () => Effect.provide(claimAllContract, WaitingCalls.layerMemory))
  it.effect("SQLite: answers claimed together, all or none", () => sqlite(Effect.provide(claimAllContract, WaitingCalls.layerSql)))
  it.effect("PostgreSQL: answers claimed together, all or none", () => postgres(Effect.provide(claimAllContract, WaitingCalls.layerSql)), 30_000)
  it.effect("PostgreSQL: two processes claiming the same calls at once, in opposite orders: one takes all, the other none", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(database)
      const client = () => Layer.build(Layer.provide(WaitingCalls.layerSql, PgClient.layer({ url: Redacted.make(url) })))
      const [one, two] = [yield* client(), yield* client()]
      const ids = ["a", "b", "c", "d", "e", "f"]
      for (let round = 0; round < 10; round++) {
        const key = `Race${round}`
        const store = Context.get(one, WaitingCalls.WaitingCalls)
        for (const callId of ids) yield* store.post(key, { ...refund(1), callId })
        const claims = (answer: string) => ids.map((callId) => ({ callId, answer, wait: 1 }))
        const results = yield* Effect.all([
          store.claimAll(key, "approval", claims("one")),
          Context.get(two, WaitingCalls.WaitingCalls).claimAll(key, "approval", claims("two").reverse())
        ], { concurrency: 2 })
        expect(results.filter((result) => result === undefined)).toHaveLength(1)
        const answers = new Set(yield* Effect.forEach(ids, (callId) => store.answerOf(key, callId)))
        expect(answers.size).toBe(1)
      }
    }).pipe(Effect.scoped), 60_000)
  it.effect("SQLite: a table made before waits were numbered gains the column, opened by 3 at once", () => sqlite(migrated(3)))
  it.effect("PostgreSQL: a table made before waits were numbered gains the column, opened by 3 at once", () => postgres(migrated(3)), 30_000)

  it.effect("PostgreSQL: a table that has the column opens for a role that may only read and write rows, beside an open reader", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(database)
      const owner = PgClient.layer({ url: Redacted.make(url) })
      // The owner makes the table and lets a role of its own use its rows, no more.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* Layer.build(WaitingCalls.layerSql).pipe(Effect.scoped)
        yield* sql.unsafe(`DO $$ BEGIN CREATE ROLE loopwork_app LOGIN PASSWORD 'app'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
        // CREATE on the schema, which `CREATE TABLE IF NOT EXISTS` asks for even when the table is there; not ownership.
        yield* sql.unsafe(`GRANT USAGE, CREATE ON SCHEMA public TO loopwork_app`)
        yield* sql.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON loopwork_waiting_calls TO loopwork_app`)
      }).pipe(Effect.provide(owner))
      // A reader in an open transaction on the table, as a runner listing calls would be.
      const read = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const reader = yield* Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql.withTransaction(Effect.andThen(sql`SELECT * FROM loopwork_waiting_calls`, Effect.andThen(Deferred.succeed(read, undefined), Deferred.await(release))))
      }).pipe(Effect.provide(owner), Effect.forkChild)
      yield* Deferred.await(read)
      const app = PgClient.layer({ url: Redacted.make(url.replace(/\/\/[^@]*@/, "//loopwork_app:app@")) })
      const opened = yield* Effect.gen(function*() {
        const store = yield* WaitingCalls.WaitingCalls
        yield* store.post("App", refund(1))
        return yield* store.list("App")
      }).pipe(Effect.provide(WaitingCalls.layerSql), Effect.provide(app), Effect.timeoutOption("10 seconds"))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(reader)
      expect(opened._tag === "Some" ? opened.value : "blocked").toEqual([refund(1)])
    }), 60_000)
})

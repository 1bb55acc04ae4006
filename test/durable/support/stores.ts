/**
 * What the process scripts (./agent.ts, ./team.ts) share: the store a
 * process uses, chosen by its environment, and how it prints and waits.
 *
 * STORE=sqlite (default; the database is a file) or STORE=postgres (a URL);
 * RUNNER=<name>: one of RUNNERS runners on PostgreSQL; FAILOVER: failoverAfter.
 */
import { type Duration, Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { DurableSqlite } from "../../../src/durable/index.ts"
import { DurablePostgres } from "../../../src/durable/postgres/index.ts"

const timing: { pollInterval: Duration.Input; failoverAfter: Duration.Input } = {
  pollInterval: "100 millis",
  failoverAfter: (process.env.FAILOVER ?? "3 seconds") as Duration.Input
}

/** The name of this runner when it is one of several, else undefined. */
export const runnerName = process.env.RUNNER

/** The engine layer of a `runner` (executes runs) or of a client process, on the store of `db`. */
export const engineFor = (role: "runner" | "client", db: string) => {
  if (process.env.STORE !== "postgres") return role === "runner" ? DurableSqlite.runner({ filename: db, ...timing }) : DurableSqlite.client({ filename: db, ...timing })
  const url = Redacted.make(db)
  if (role === "client") return DurablePostgres.client({ url, ...timing })
  return runnerName === undefined ? DurablePostgres.single({ url, ...timing }) : DurablePostgres.runner({ url, name: runnerName, ...timing })
}

/** Prints a line and waits until it is written (a SIGKILL may follow). */
export const print = (line: string) =>
  Effect.promise(() => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve())))

/**
 * One of RUNNERS runners: waits until the runners hold every shard between
 * them (PostgreSQL advisory locks), each at least half its even share, so
 * the work started next reaches every runner (a runner holding a handful of
 * shards could get none of a few runs). Only this database's locks count:
 * the server is shared by a test file's tests, and a process of an earlier
 * test may still hold its own database's locks.
 */
export const settled = Effect.gen(function*() {
  const sql = yield* SqlClient
  const runners = Number(process.env.RUNNERS ?? "1")
  while (true) {
    const held = yield* sql<{ locks: number }>`SELECT count(*)::int AS locks
      FROM pg_locks WHERE locktype = 'advisory' AND granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      GROUP BY pid`
    const total = held.reduce((sum, row) => sum + row.locks, 0)
    if (total >= 300 && held.length >= runners && held.every((row) => row.locks >= 300 / runners / 2)) return
    yield* Effect.sleep("50 millis")
  }
})

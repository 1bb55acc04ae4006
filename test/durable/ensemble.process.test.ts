/**
 * Durable ensembles in real processes (test/durable/support/team.ts): a
 * PARALLEL ensemble whose runner is killed inside one task resumes in a new
 * process without running any recorded step again — the parent joins the
 * tasks it had started; a HIERARCHICAL one killed inside a delegated worker
 * or in its manager's turn resumes without starting any delegation again;
 * and on a real PostgreSQL, the tasks of one level spread over two runner
 * processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { usePostgres } from "./support/postgres.ts"
import { launch as launchAgent, run as runAgent, team, workspace } from "./support/processes.ts"

const run = (args: ReadonlyArray<string>, env: Record<string, string>) => runAgent(args, env, team)
const launch = (args: ReadonlyArray<string>, env: Record<string, string>) => launchAgent(args, env, team)

/** Each line of the effects file (a lookup or a model call that really ran), without its pid, and how often. */
const lines = (file: string) => {
  const counts = new Map<string, number>()
  const pids = new Set<string>()
  for (const line of existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : []) {
    const words = line.split(" ")
    pids.add(words.pop() ?? "")
    counts.set(words.join(" "), (counts.get(words.join(" ")) ?? 0) + 1)
  }
  return { counts: Object.fromEntries(counts), pids }
}

const expected = (tasks: number) => {
  const out = new Map<string, number>()
  for (let i = 1; i <= tasks; i++) {
    out.set(`t${i}`, 1)
    out.set(`model Researcher t${i} 0`, 1)
    out.set(`model Researcher t${i} 1`, 1)
  }
  out.set("model Writer t1 0", 1)
  return Object.fromEntries(out)
}

describe("a durable ensemble on SQLite, its runner killed inside a task", () => {
  it.each(["before", "after"])("killed inside task t4's tool, %s its side effect: a new runner finishes; no recorded step runs again", (when) => {
    const w = workspace()
    try {
      const db = w.file("runs.db")
      // One task at a time, so no other task is caught between its side effect and its record.
      const env = { STORE: "sqlite", TASKS: "6", CONCURRENCY: "1" }
      expect(run(["runner", db, w.effects], { ...env, KILL_AT: `tool:t4:${when}` }).signal).toBe("SIGKILL")
      const resumed = run(["runner", db, w.effects], env)
      expect(resumed.result).toBe(`RESULT {"raw":"report from 6 findings","tasks":7}`)
      // Only the killed call itself may run twice, and only after its side effect (the window).
      expect(lines(w.effects).counts).toEqual({ ...expected(6), ...(when === "after" ? { t4: 2 } : {}) })
    } finally {
      w.done()
    }
  })
})

/** The effects of a HIERARCHICAL run of `tasks` research tasks: the workers' as in `expected`, and the manager's turns, once. */
const expectedManaged = (tasks: number) => {
  const out = new Map(Object.entries(expected(tasks)))
  for (let turn = 0; turn <= tasks + 1; turn++) out.set(`model Manager t1 ${turn}`, 1)
  return Object.fromEntries(out)
}

describe("a durable HIERARCHICAL ensemble on SQLite, its runner killed", () => {
  it.each([
    { at: "tool:t2:before", twice: {} },
    { at: "tool:t2:after", twice: { t2: 2 } },
    { at: "model:Manager:2", twice: {} },
    { at: "model:Manager:4", twice: {} }
  ])("killed at $at: a new runner finishes; no delegation starts again, no recorded step runs again", ({ at, twice }) => {
    const w = workspace()
    try {
      const db = w.file("runs.db")
      const env = { STORE: "sqlite", TASKS: "3", WORKFLOW: "HIERARCHICAL" }
      expect(run(["runner", db, w.effects], { ...env, KILL_AT: at }).signal).toBe("SIGKILL")
      const resumed = run(["runner", db, w.effects], env)
      expect(resumed.result).toBe(`RESULT {"raw":"manager got 3 findings","tasks":5}`)
      expect(lines(w.effects).counts).toEqual({ ...expectedManaged(3), ...twice })
    } finally {
      w.done()
    }
  })
})

describe("a durable ensemble on two runners sharing a PostgreSQL", () => {
  const { database } = usePostgres({ beforeAll, afterAll })

  it("the tasks of one PARALLEL level run on both runners; each runs once; the ensemble ends with every finding", async () => {
    const w = workspace()
    try {
      const db = await database()
      const env = { STORE: "postgres", TASKS: "12", RUNNERS: "2" }
      const a = launch(["runner", db, w.effects], { ...env, RUNNER: "runner-a" })
      const b = launch(["runner", db, w.effects], { ...env, RUNNER: "runner-b" })
      await Promise.all([a.printed("READY"), b.printed("READY")])
      const client = run(["start", db], env)
      a.kill()
      b.kill()
      await Promise.all([a.exited, b.exited])
      expect(client.result).toBe(`RESULT {"raw":"report from 12 findings","tasks":13}`)
      const { counts, pids } = lines(w.effects)
      expect(counts).toEqual(expected(12))
      expect(pids).toEqual(new Set([String(a.pid), String(b.pid)]))
    } finally {
      w.done()
    }
  }, 90_000)
})

/**
 * Crash matrix on the embedded SQLite store: runners are real child processes
 * (test/durable/support/agent.ts) killed with SIGKILL at exact points chosen by
 * the agent's fault hook, then replaced by a new process on the same file.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"

const agent = fileURLToPath(new URL("./support/agent.ts", import.meta.url))

interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly result: string | undefined
}

const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Run => {
  const out = spawnSync(process.execPath, ["--no-warnings", "--conditions=loopwork-source", agent, ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000
  })
  const line = out.stdout.split("\n").find((l) => l.startsWith("RESULT ") || l.startsWith("DECIDED "))
  return { status: out.status, signal: out.signal, result: line }
}

const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-durable-"))
  return { db: join(dir, "runs.db"), effects: join(dir, "effects"), done: () => rmSync(dir, { recursive: true, force: true }) }
}

const counts = (file: string): Record<string, number> => {
  const out: Record<string, number> = Object.create(null)
  if (!existsSync(file)) return out
  for (const id of readFileSync(file, "utf8").split("\n").filter((l) => l !== "")) out[id] = (out[id] ?? 0) + 1
  return { ...out }
}

const waiting = (db: string): Array<string> => {
  const sqlite = new DatabaseSync(db)
  try {
    return (sqlite.prepare("SELECT call_id FROM loopwork_waiting_calls WHERE answer IS NULL").all() as Array<{ call_id: string }>)
      .map((row) => row.call_id)
  } finally {
    sqlite.close()
  }
}

const uncrashed = (() => {
  let cached: string | undefined
  return () => {
    if (cached !== undefined) return cached
    const w = workspace()
    try {
      cached = start(["runner", w.db, w.effects]).result
      return cached
    } finally {
      w.done()
    }
  }
})()

const once = { c1: 1, c2: 1, c3: 1 }

describe("durable runs on SQLite survive SIGKILL", () => {
  it.each([
    { point: "inside the first model call", kill: "model:1", idempotent: false, effects: once },
    { point: "after a model reply is recorded, before its tools", kill: "tool:c1:before", idempotent: false, effects: once },
    { point: "between two calls of a round", kill: "tool:c2:before", idempotent: false, effects: once },
    { point: "inside a tool, after its side effect, no idempotency key (the window)", kill: "tool:c2:after", idempotent: false, effects: { c1: 1, c2: 2, c3: 1 } },
    { point: "inside a tool, after its side effect, call id as idempotency key", kill: "tool:c2:after", idempotent: true, effects: once },
    { point: "inside the second model call, after a whole round", kill: "model:2", idempotent: false, effects: once },
    { point: "inside the last model call", kill: "model:3", idempotent: false, effects: once }
  ])("killed $point: the run completes, its document equals the uncrashed one", ({ effects, idempotent, kill }) => {
    const w = workspace()
    try {
      const env = idempotent ? { IDEMPOTENT: "1" } : {}
      const crashed = start(["runner", w.db, w.effects], { ...env, KILL_AT: kill })
      expect(crashed.signal).toBe("SIGKILL")
      expect(crashed.result).toBeUndefined()
      const resumed = start(["runner", w.db, w.effects], env)
      expect(resumed.status).toBe(0)
      expect(resumed.result).toBe(uncrashed())
      expect(counts(w.effects)).toEqual(effects)
    } finally {
      w.done()
    }
  })

  it("killed again during the replay after a crash: the third process completes it", () => {
    const w = workspace()
    try {
      expect(start(["runner", w.db, w.effects], { KILL_AT: "model:2" }).signal).toBe("SIGKILL")
      expect(start(["runner", w.db, w.effects], { KILL_AT: "tool:c3:before" }).signal).toBe("SIGKILL")
      const third = start(["runner", w.db, w.effects])
      expect(third.result).toBe(uncrashed())
      expect(counts(w.effects)).toEqual(once)
    } finally {
      w.done()
    }
  })
})

describe("approvals on SQLite from another process", () => {
  it("a run waits; its runner is killed; a client approves with no runner alive; a new runner finishes it", () => {
    const w = workspace()
    const env = { APPROVAL: "1", KILL_AT: "tool:c3:before" }
    try {
      const first = start(["runner", w.db, w.effects], { APPROVAL: "1", RUN_UNTIL_WAITING: "1" })
      expect(first.signal).toBe("SIGKILL")
      expect(first.result).toBe("RESULT waiting")
      expect(waiting(w.db)).toEqual(["c3"])
      expect(counts(w.effects)).toEqual({ c1: 1, c2: 1 })
      expect(start(["decide", w.db, "nope", "approve"]).result).toBe("DECIDED CallNotAwaiting")
      expect(start(["decide", w.db, "c3", "approve"]).result).toBe("DECIDED ok")
      expect(start(["decide", w.db, "c3", "approve"]).result).toBe("DECIDED ok")
      expect(start(["decide", w.db, "c3", "reject"]).result).toBe("DECIDED AlreadyAnswered")
      expect(waiting(w.db)).toEqual([])
      const killed = start(["runner", w.db, w.effects], env)
      expect(killed.signal).toBe("SIGKILL")
      const last = start(["runner", w.db, w.effects], { APPROVAL: "1" })
      expect(last.status).toBe(0)
      expect(last.result).toContain(`"reason":"done"`)
      expect(counts(w.effects)).toEqual(once)
    } finally {
      w.done()
    }
  })
})

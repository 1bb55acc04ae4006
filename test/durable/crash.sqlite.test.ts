/**
 * The crash matrix on the embedded SQLite store (one file per test), and a
 * deploy that raises the workflow's version while a run waits.
 */
import { describe, expect, it } from "@effect/vitest"
import { crashMatrix } from "./support/crashMatrix.ts"
import { counts, run, workspace } from "./support/processes.ts"

crashMatrix({ name: "SQLite", env: { STORE: "sqlite" }, fresh: async (file) => file("runs.db") })

describe("output", () => {
  it("a crash between two wrong answers: the replay counts the first, so the run still ends after one re-ask", () => {
    const w = workspace()
    const env = { STORE: "sqlite", OUTPUT: "1" }
    try {
      const uncrashed = run(["runner", w.file("plain.db"), w.effects], env).result
      expect(uncrashed).toContain("OutputInvalid")
      const db = w.file("runs.db")
      expect(run(["runner", db, w.effects], { ...env, KILL_AT: "tool:c1:before" }).signal).toBe("SIGKILL")
      expect(run(["runner", db, w.effects], env).result).toBe(uncrashed)
    } finally {
      w.done()
    }
  })
})

describe("upgrades", () => {
  it("a run started under version 1 and waiting during a deploy of version 2 replays its own history: no call runs again", () => {
    const w = workspace()
    const db = w.file("runs.db")
    const env = { STORE: "sqlite", APPROVAL: "1" }
    try {
      expect(run(["runner", db, w.effects], { ...env, RUN_UNTIL_WAITING: "1" }).result).toBe("RESULT waiting")
      expect(run(["decide", db, "c3", "approve"], { ...env, VERSION: "2" }).result).toBe("DECIDED ok")
      const upgraded = run(["runner", db, w.effects], { ...env, VERSION: "2" })
      expect(upgraded.result).toContain(`"reason":"done"`)
      expect(counts(w.effects)).toEqual({ "T1/c1": 1, "T1/c2": 1, "T1/c3": 1 })
    } finally {
      w.done()
    }
  })
})

/**
 * The crash matrix every durable store must pass: runners are real child
 * processes (./agent.ts) killed with SIGKILL at exact points chosen by the
 * agent's fault hook, then replaced by a new process on the same store.
 */
import { describe, expect, it } from "@effect/vitest"
import { counts, run, workspace } from "./processes.ts"

export interface Store {
  readonly name: string
  readonly env: Record<string, string>
  /** A new, empty store (a file name or a database URL) in workspace directory `dir`. */
  readonly fresh: (file: (name: string) => string) => Promise<string>
}

const once = { "T1/c1": 1, "T1/c2": 1, "T1/c3": 1 }

export const crashMatrix = (store: Store) => {
  const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => run(args, { ...store.env, ...env })
  let uncrashed: string | undefined
  const uncrashedResult = async () => {
    if (uncrashed !== undefined) return uncrashed
    const w = workspace()
    try {
      uncrashed = start(["runner", await store.fresh(w.file), w.effects]).result
      return uncrashed
    } finally {
      w.done()
    }
  }

  describe(`durable runs on ${store.name} survive SIGKILL`, () => {
    it.each([
      { point: "inside the first model call", kill: "model:1", idempotent: false, effects: once },
      { point: "after a model reply is recorded, before its tools", kill: "tool:c1:before", idempotent: false, effects: once },
      { point: "between two calls of a round", kill: "tool:c2:before", idempotent: false, effects: once },
      { point: "inside a tool, after its side effect, no idempotency key (the window)", kill: "tool:c2:after", idempotent: false, effects: { ...once, "T1/c2": 2 } },
      { point: "inside a tool, after its side effect, call id as idempotency key", kill: "tool:c2:after", idempotent: true, effects: once },
      { point: "inside the second model call, after a whole round", kill: "model:2", idempotent: false, effects: once },
      { point: "inside the last model call", kill: "model:3", idempotent: false, effects: once }
    ])("killed $point: the run completes, its document equals the uncrashed one", async ({ effects, idempotent, kill }) => {
      const w = workspace()
      try {
        const db = await store.fresh(w.file)
        const env: Record<string, string> = idempotent ? { IDEMPOTENT: "1" } : {}
        const crashed = start(["runner", db, w.effects], { ...env, KILL_AT: kill })
        expect(crashed.signal).toBe("SIGKILL")
        expect(crashed.result).toBeUndefined()
        const resumed = start(["runner", db, w.effects], env)
        expect(resumed.status).toBe(0)
        expect(resumed.result).toBe(await uncrashedResult())
        expect(counts(w.effects)).toEqual(effects)
      } finally {
        w.done()
      }
    })

    it("killed again during the replay after a crash: the third process completes it", async () => {
      const w = workspace()
      try {
        const db = await store.fresh(w.file)
        expect(start(["runner", db, w.effects], { KILL_AT: "model:2" }).signal).toBe("SIGKILL")
        expect(start(["runner", db, w.effects], { KILL_AT: "tool:c3:before" }).signal).toBe("SIGKILL")
        const third = start(["runner", db, w.effects])
        expect(third.result).toBe(await uncrashedResult())
        expect(counts(w.effects)).toEqual(once)
      } finally {
        w.done()
      }
    })
  })

  describe(`a transactional tool on ${store.name}: its write and its record commit together`, () => {
    it.each([
      { transactional: true, rows: ["T1/c2"] },
      { transactional: false, rows: ["T1/c2", "T1/c2"] }
    ])("killed after the write, transactional: $transactional → rows $rows", async ({ rows, transactional }) => {
      const w = workspace()
      try {
        const db = await store.fresh(w.file)
        const env: Record<string, string> = { SQL_EFFECTS: "1", ...(transactional ? { TRANSACTIONAL: "1" } : {}) }
        expect(start(["runner", db, w.effects], { ...env, KILL_AT: "tool:c2:after" }).signal).toBe("SIGKILL")
        expect(start(["runner", db, w.effects], env).result).toBe(await uncrashedResult())
        expect(start(["sqlEffects", db], env).result).toBe(`COUNTS ${JSON.stringify(rows)}`)
      } finally {
        w.done()
      }
    })
  })

  describe(`approvals on ${store.name} from another process`, () => {
    it("a run waits; its runner is killed; a client approves with no runner alive; a new runner finishes it", async () => {
      const w = workspace()
      const approval = { APPROVAL: "1" }
      try {
        const db = await store.fresh(w.file)
        const first = start(["runner", db, w.effects], { ...approval, RUN_UNTIL_WAITING: "1" })
        expect(first.signal).toBe("SIGKILL")
        expect(first.result).toBe("RESULT waiting")
        expect(start(["pending", db], approval).result).toBe(`PENDING ["c3"]`)
        expect(counts(w.effects)).toEqual({ "T1/c1": 1, "T1/c2": 1 })
        expect(start(["decide", db, "nope", "approve"], approval).result).toBe("DECIDED CallNotAwaiting")
        expect(start(["decide", db, "c3", "approve"], approval).result).toBe("DECIDED ok")
        expect(start(["decide", db, "c3", "approve"], approval).result).toBe("DECIDED ok")
        expect(start(["decide", db, "c3", "reject"], approval).result).toBe("DECIDED AlreadyAnswered")
        expect(start(["pending", db], approval).result).toBe("PENDING []")
        const killed = start(["runner", db, w.effects], { ...approval, KILL_AT: "tool:c3:before" })
        expect(killed.signal).toBe("SIGKILL")
        const last = start(["runner", db, w.effects], approval)
        expect(last.status).toBe(0)
        expect(last.result).toContain(`"reason":"done"`)
        expect(counts(w.effects)).toEqual(once)
      } finally {
        w.done()
      }
    })

    it("a run waits; its runner is killed; a client asks it to stop; a new runner ends it Paused, the call never run", async () => {
      const w = workspace()
      const approval = { APPROVAL: "1" }
      try {
        const db = await store.fresh(w.file)
        expect(start(["runner", db, w.effects], { ...approval, RUN_UNTIL_WAITING: "1" }).result).toBe("RESULT waiting")
        expect(start(["stop", db], approval).result).toBe("DECIDED stopped")
        expect(start(["decide", db, "c3", "approve"], approval).result).toBe("DECIDED AlreadyAnswered")
        const last = start(["runner", db, w.effects], approval)
        expect(last.result).toContain(`"_tag":"Paused","reason":"StopRequested"`)
        expect(counts(w.effects)).toEqual({ "T1/c1": 1, "T1/c2": 1 })
      } finally {
        w.done()
      }
    })
  })
}

/**
 * Real OS processes deciding (and stopping) the same calls of one
 * execution on one SQLite file at the same moment. Each child passes its
 * checks, then waits at its first claim until the parent releases all of
 * them at once (files, not timing). Whatever order SQLite serialises them
 * in, both calls carry one answer, at most one decision succeeds, and the
 * run executes exactly what that answer says.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Fiber, Layer } from "effect"
import { Approval } from "../../src/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"
import { handlersWriting, model, Race } from "./support/raceWorkflow.ts"

const decider = fileURLToPath(new URL("./support/decider.ts", import.meta.url))

const child = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<string>((resolve) => {
    const proc = spawn(process.execPath, ["--no-warnings", "--conditions=loopwork-source", decider, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } })
    let out = ""
    let err = ""
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    proc.on("exit", (_, signal) => resolve(signal === "SIGKILL" ? "killed" : /OUT (.*)/.exec(out)?.[1] ?? `no output: ${err.slice(0, 400)}`))
  })

const waitFor = (path: string) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 3_000 && !existsSync(path); turn++) yield* Effect.sleep("5 millis")
    expect(existsSync(path)).toBe(true)
  })

const round = (dir: string, db: string, ticket: string, roles: ReadonlyArray<"approve" | "reject" | "stop">, ran: Array<string>) =>
  Effect.gen(function*() {
    const id = yield* Race.execute({ ticket }, { discard: true })
    for (let turn = 0; turn < 400 && (yield* DurableChain.pending(Race, id)).length < 2; turn++) yield* Effect.sleep("10 millis")
    expect((yield* DurableChain.pending(Race, id)).map((call) => call.callId)).toEqual(["r1", "r2"])
    const gateDir = mkdtempSync(join(dir, `${ticket}-`))
    const children = roles.map((role, n) => child([db, id, gateDir, `${role}${n}`, role]))
    for (const [n, role] of roles.entries()) yield* waitFor(join(gateDir, `ready-${role}${n}`))
    writeFileSync(join(gateDir, "go"), "")
    const outs = yield* Effect.promise(() => Promise.all(children))
    const store = yield* WaitingCalls.WaitingCalls
    const answers = [yield* store.answerOf(`Race/${id}`, "r1"), yield* store.answerOf(`Race/${id}`, "r2")]
    const fiber = yield* Effect.forkChild(Race.execute({ ticket }))
    const result = yield* Effect.timeoutOption(Fiber.join(fiber), "15 seconds")
    return { outs, answers, result: result._tag === "Some" ? result.value._tag : "never ended", ran: [...ran] }
  })

const liveOn = (db: string, ran: Array<string>) =>
  DurableChain.layer(Race).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlersWriting((line) => ran.push(line)), DurableSqlite.runner({ filename: db, pollInterval: "50 millis" })))
  )

describe("processes deciding one SQLite file at once", () => {
  it.live("two reviewers and a stop, released together: one answer per run, whole, executed as given", () => {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-deciders-"))
    const db = join(dir, "runs.db")
    const ran: Array<string> = []
    const live = DurableChain.layer(Race).pipe(
      Layer.provideMerge(Layer.mergeAll(model.layer, handlersWriting((line) => ran.push(line)), DurableSqlite.runner({ filename: db, pollInterval: "50 millis" })))
    )
    return Effect.gen(function*() {
      const rounds: ReadonlyArray<readonly [string, ReadonlyArray<"approve" | "reject" | "stop">]> = [
        ["T1", ["approve", "reject"]],
        ["T2", ["reject", "approve", "stop"]],
        ["T3", ["stop", "approve"]]
      ]
      for (const [ticket, roles] of rounds) {
        ran.length = 0
        const { answers, outs, result } = yield* round(dir, db, ticket, roles, ran)
        const winners = outs.filter((out) => out === "Success")
        const decisions = roles.flatMap((role, n) => role === "stop" ? [] : [outs[n]])
        // At most one decision succeeds, the others are refused as answered; a stop always succeeds.
        expect(decisions.filter((out) => out === "Success").length).toBeLessThanOrEqual(1)
        for (const out of decisions) expect(["Success", "AlreadyAnswered"]).toContain(out)
        expect(winners.length).toBeGreaterThanOrEqual(1)
        // Both calls carry one answer.
        expect(answers[0]).toBe(answers[1])
        const answer = answers[0] ?? ""
        const approved = answer.includes("Approve")
        const stopped = answer.includes("loopworkStop")
        if (roles.includes("stop")) expect(outs[roles.indexOf("stop")]).toBe("Success")
        // A decision that won still runs; the stop then ends the run before its next model call.
        expect([ticket, result]).toEqual([ticket, roles.includes("stop") ? "Paused" : "Finished"])
        expect(stopped ? roles.includes("stop") : true).toBe(true)
        expect(ran).toEqual(approved ? ["refund 5", "refund 7"] : [])
      }
    }).pipe(Effect.provide(live), Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  }, 90_000)

  /** A decider killed once its claim committed; then `after` (in this process), and how the run ends. */
  const crashed = (ticket: string, after: (id: string) => Effect.Effect<void, unknown, Layer.Success<ReturnType<typeof liveOn>>>) => {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-deciders-"))
    const db = join(dir, "runs.db")
    const ran: Array<string> = []
    return Effect.gen(function*() {
      const id = yield* Race.execute({ ticket }, { discard: true })
      for (let turn = 0; turn < 400 && (yield* DurableChain.pending(Race, id)).length < 2; turn++) yield* Effect.sleep("10 millis")
      const gateDir = mkdtempSync(join(dir, "gate-"))
      writeFileSync(join(gateDir, "go"), "")
      expect(yield* Effect.promise(() => child([db, id, gateDir, "approve0", "approve"], { CRASH_AFTER_CLAIM: "1" }))).toBe("killed")
      // The claim is written; nothing is pending; a different decision is refused.
      expect(yield* DurableChain.pending(Race, id)).toEqual([])
      const other = yield* Effect.flip(DurableChain.decide(Race, id, { r1: Approval.reject("no"), r2: Approval.reject("no") }))
      expect(other._tag).toBe("AlreadyAnswered")
      yield* after(id)
      const fiber = yield* Effect.forkChild(Race.execute({ ticket }))
      const ended = yield* Effect.timeoutOption(Fiber.join(fiber), "4 seconds")
      yield* Fiber.interrupt(fiber)
      return { result: ended._tag === "Some" ? ended.value._tag : "still suspended", ran: [...ran] }
    }).pipe(Effect.provide(liveOn(db, ran)), Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  }

  it.live("a decider killed between its claim and the wake: the same decision sent again completes the run", () =>
    Effect.map(crashed("C1", (id) => DurableChain.decide(Race, id, { r1: Approval.approve, r2: Approval.approve })), (seen) => {
      expect(seen).toEqual({ result: "Finished", ran: ["refund 5", "refund 7"] })
    }), 60_000)

  it.live("a decider killed between its claim and the wake: stop applies the recorded decisions, then stops the run", () =>
    Effect.map(crashed("C2", (id) => DurableChain.stop(Race, id)), (seen) => {
      expect(seen).toEqual({ result: "Paused", ran: ["refund 5", "refund 7"] })
    }), 60_000)
})

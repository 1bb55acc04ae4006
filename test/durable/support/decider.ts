/**
 * A decider process (decide.processes.test.ts): `decider.ts <db> <executionId> <dir> <name> <approve|reject|stop>`.
 * It decides (or stops) execution <executionId> of Race on the SQLite file
 * <db>, through a store whose first claim (claimAll for a decision, claim
 * for a stop) first writes <dir>/ready-<name> and waits for <dir>/go: the
 * parent releases every process at once, each past its checks. Prints
 * `OUT <Success|error tag>`. CRASH_AFTER_CLAIM=1: the process kills itself
 * (SIGKILL) once claimAll has committed, before any run is woken.
 */
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { Approval } from "../../../src/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../../src/durable/index.ts"
import { Race } from "./raceWorkflow.ts"

const [db = "", executionId = "", dir = "", name = "", what = ""] = process.argv.slice(2)

let released = false
const barrier = Effect.suspend(() => {
  if (released) return Effect.void
  released = true
  writeFileSync(join(dir, `ready-${name}`), "")
  return Effect.gen(function*() {
    while (!existsSync(join(dir, "go"))) yield* Effect.sleep("2 millis")
  })
})

const engine = DurableSqlite.client({ filename: db, pollInterval: "50 millis", busyTimeout: "20 seconds" })
const gated = Layer.effect(
  WaitingCalls.WaitingCalls,
  Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) =>
    WaitingCalls.WaitingCalls.of({
      ...store,
      claimAll: (key, kind, claims) =>
        Effect.tap(Effect.andThen(barrier, store.claimAll(key, kind, claims)), (refused) =>
          Effect.sync(() => {
            if (process.env.CRASH_AFTER_CLAIM === "1" && refused === undefined) process.kill(process.pid, "SIGKILL")
          })),
      claim: (key, callId, answer, wait, kind) => Effect.andThen(barrier, store.claim(key, callId, answer, wait, kind))
    }))
).pipe(Layer.provide(engine))

const program = what === "stop"
  ? DurableChain.stop(Race, executionId)
  : DurableChain.decide(Race, executionId, what === "approve" ? { r1: Approval.approve, r2: Approval.approve } : { r2: Approval.reject("no"), r1: Approval.reject("no") })

Effect.runPromise(Effect.provide(Effect.result(program), Layer.merge(engine, gated))).then((result) => {
  process.stdout.write(`OUT ${result._tag === "Success" ? "Success" : result.failure._tag}\n`, () => process.exit(0))
}, (error: unknown) => {
  process.stdout.write(`OUT defect ${String(error)}\n`, () => process.exit(1))
})

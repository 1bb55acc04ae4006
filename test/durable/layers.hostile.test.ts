/**
 * `DurableSqlite` layers given hostile options, and the public
 * `WaitingCalls` service (SQL and memory) given hostile arguments
 * (helper-65's probes): a getter that throws, a NaN busy timeout and an
 * empty file name are `InvalidInput` (were a defect, 0 ms and a private
 * temporary database); `post` with arguments JSON cannot write fails as an
 * effect (threw), and `claim` with an answer that is not a string claims
 * nothing (stored it).
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Layer } from "effect"
import { DurableSqlite, SqliteClient, WaitingCalls } from "../../src/durable/index.ts"

const withDir = <A, E, R>(f: (filename: string) => Effect.Effect<A, E, R>) => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-layers-"))
  return Effect.ensuring(f(join(dir, "runs.db")), Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
}

const buildOutcome = (make: () => Layer.Layer<any, any, never>) =>
  Effect.suspend(() => {
    let layer: Layer.Layer<any, any, never>
    try {
      layer = make()
    } catch (thrown) {
      return Effect.succeed(`THROWN: ${String(thrown)}`)
    }
    return Effect.map(Effect.exit(Effect.scoped(Layer.build(layer))), (exit) => {
      if (Exit.isSuccess(exit)) return "Success"
      const error = Cause.findErrorOption(exit.cause)
      if (error._tag === "Some") return String((error.value as { _tag?: string })._tag)
      return `DEFECT: ${String(Cause.squash(exit.cause))}`
    })
  })

describe("DurableSqlite options", () => {
  const throwing = (key: string, base: object) => Object.defineProperty({ ...base }, key, { enumerable: true, get: () => { throw new Error("boom") } })
  const { proxy: revoked, revoke } = Proxy.revocable({}, {})
  revoke()
  const cases: ReadonlyArray<readonly [string, (file: string) => unknown]> = [
    ["null", () => null],
    ["undefined", () => undefined],
    ["filename a number", () => ({ filename: 42 })],
    ["filename empty", () => ({ filename: "" })],
    ["filename with NUL", (f) => ({ filename: `${f}\u0000x` })],
    ["filename getter throws", () => throwing("filename", {})],
    ["pollInterval 'abc'", (f) => ({ filename: f, pollInterval: "abc" })],
    ["pollInterval -1", (f) => ({ filename: f, pollInterval: -1 })],
    ["pollInterval getter throws", (f) => throwing("pollInterval", { filename: f })],
    ["failoverAfter an object", (f) => ({ filename: f, failoverAfter: {} })],
    ["synchronous 'off'", (f) => ({ filename: f, synchronous: "off" })],
    ["synchronous getter throws", (f) => throwing("synchronous", { filename: f })],
    ["busyTimeout NaN", (f) => ({ filename: f, busyTimeout: Number.NaN })],
    ["a revoked Proxy", () => revoked]
  ]
  for (const [what, options] of cases) {
    for (const role of ["runner", "client"] as const) {
      it.live(`DurableSqlite.${role} with ${what}: fails typed (InvalidInput/SqlError)`, () =>
        withDir((file) =>
          Effect.gen(function*() {
            const result = yield* buildOutcome(() => DurableSqlite[role](options(file) as never) as never)
            expect(["InvalidInput", "SqlError"]).toContain(result)
          })
        ), 20_000)
    }
  }
})

describe("the public WaitingCalls service with hostile arguments", () => {
  /** What `probe` gives on each store, as `<store>: <what>`. */
  const onEachStore = (file: string, probe: Effect.Effect<ReadonlyArray<string>, unknown, WaitingCalls.WaitingCalls>) =>
    Effect.forEach(
      [["memory", WaitingCalls.layerMemory], ["SQLite", WaitingCalls.layerSql.pipe(Layer.provide(SqliteClient.layer({ filename: file })))]] as const,
      ([name, layer]) => Effect.map(probe.pipe(Effect.provide(layer), Effect.scoped), (seen) => seen.map((one) => `${name}: ${one}`))
    ).pipe(Effect.map((seen) => seen.flat()))
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic

  it.live("post with arguments JSON cannot write (cyclic, BigInt): a failed effect or a success, never a synchronous throw", () =>
    withDir((file) =>
      Effect.gen(function*() {
        const results = yield* onEachStore(
          file,
          Effect.gen(function*() {
            const store = yield* WaitingCalls.WaitingCalls
            const seen: Array<string> = []
            for (const params of [cyclic, { n: 1n }]) {
              try {
                const exit = yield* Effect.exit(store.post("W/e1", { callId: "c1", kind: "approval", tool: "refund", params }))
                seen.push(Exit.isSuccess(exit) ? "Success" : Cause.hasDies(exit.cause) ? "DEFECT" : "Failure")
              } catch (thrown) {
                seen.push(`THROWN ${String(thrown).slice(0, 80)}`)
              }
            }
            return seen
          })
        )
        expect(results).toEqual(["memory: Success", "memory: Success", "SQLite: Failure", "SQLite: Failure"])
      })
    ), 20_000)

  it.live("claim with an answer that is not a string: refused as 'unknown' and nothing written, on every store", () =>
    withDir((file) =>
      Effect.gen(function*() {
        const results = yield* onEachStore(
          file,
          Effect.gen(function*() {
            const store = yield* WaitingCalls.WaitingCalls
            yield* store.post("W/e2", { callId: "c1", kind: "approval", tool: "refund", params: { amount: 1 } })
            const claim = yield* Effect.exit(store.claim("W/e2", "c1", 42 as never, 1, "approval"))
            const after = yield* store.answerOf("W/e2", "c1")
            const pending = yield* store.list("W/e2")
            return [`claim=${Exit.isSuccess(claim) ? claim.value : "failed"} answerOf=${JSON.stringify(after)} pending=${pending.length}`]
          })
        )
        expect(results).toEqual([
          "memory: claim=unknown answerOf=undefined pending=1",
          "SQLite: claim=unknown answerOf=undefined pending=1"
        ])
      })
    ), 20_000)
})

/**
 * WaitingCalls.claimAll (and claim) called directly by a JavaScript caller
 * with nonsense, on the memory store and on SQLite: refused, never thrown,
 * never claimed (a non-iterable used to throw on SQLite, and an answer that
 * is not a text to let two answers win on the memory store); and claimAll
 * against a stop's one-at-a-time claims on PostgreSQL, three connections at
 * once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient, WaitingCalls } from "../../src/durable/index.ts"
import { usePostgres } from "../durable/support/postgres.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const call = (callId: string): WaitingCalls.WaitingCall => ({ callId, kind: "approval", tool: "refund", params: { amount: 1 } })

const sqlite = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "loopwork-claims-"))),
    (dir) => Effect.provide(effect, WaitingCalls.layerSql.pipe(Layer.provide(SqliteClient.layer({ filename: join(dir, "runs.db") })))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** Calls claimAll with `claims`, catching a synchronous throw as "threw". */
const claimAllWith = (claims: unknown) =>
  Effect.flatMap(Effect.service(WaitingCalls.WaitingCalls), (store) => {
    let effect: Effect.Effect<unknown, unknown>
    try {
      effect = store.claimAll("E", "approval", claims as ReadonlyArray<WaitingCalls.ClaimRequest>)
    } catch {
      return Effect.succeed("threw" as const)
    }
    return Effect.map(Effect.exit(effect), (exit) => Exit.isSuccess(exit) && exit.value === undefined ? "claimed" as const : "refused or failed" as const)
  })

/** A claim whose answer is no JSON text, then a real answer: the first must not both "win" and leave the call open. */
const unwrittenClaim = Effect.gen(function*() {
  const store = yield* WaitingCalls.WaitingCalls
  yield* store.post("U", call("c1"))
  const first = yield* Effect.exit(store.claimAll("U", "approval", [{ callId: "c1", answer: undefined as unknown as string, wait: 1 }]))
  const second = yield* store.claimAll("U", "approval", [{ callId: "c1", answer: '{"_tag":"Reject"}', wait: 1 }])
  // Either the first is refused (then the second wins), or it won (then the second is taken): never both claimed.
  const firstWon = Exit.isSuccess(first) && first.value === undefined
  expect([firstWon, second === undefined]).not.toEqual([true, true])
})

const nonsense = Effect.gen(function*() {
  const store = yield* WaitingCalls.WaitingCalls
  yield* store.post("E", call("c1"))
  const outcomes = [
    yield* claimAllWith(42),
    yield* claimAllWith(null),
    yield* claimAllWith("c1"),
    yield* claimAllWith([null])
  ]
  // Nonsense is an error in the effect (failure or defect), never a synchronous throw out of claimAll.
  expect(outcomes.filter((outcome) => outcome === "threw")).toEqual([])
  expect(outcomes.filter((outcome) => outcome === "claimed")).toEqual([])
  expect(yield* store.answerOf("E", "c1")).toBeUndefined()
})

describe("claimAll from JavaScript", () => {
  it.effect("memory: nonsense claims never throw out of claimAll and never claim", () => Effect.provide(nonsense, WaitingCalls.layerMemory))
  it.effect("SQLite: nonsense claims (42, null) never throw out of claimAll and never claim", () => sqlite(nonsense))
  it.effect("memory: a claim with no answer text is not claimed, and the call stays open", () => Effect.provide(unwrittenClaim, WaitingCalls.layerMemory))
  it.effect("SQLite: a claim with no answer text is not reported claimed while the call stays open", () => sqlite(unwrittenClaim))

  it.effect("SQLite: duplicates and 20,000 claims in one call are one all-or-none claim", () =>
    sqlite(Effect.gen(function*() {
      const store = yield* WaitingCalls.WaitingCalls
      for (const id of ["a", "b"]) yield* store.post("D", call(id))
      const many = Array.from({ length: 20_000 }, (_, n) => ({ callId: n % 2 === 0 ? "a" : "b", answer: "yes", wait: 1 }))
      expect(yield* store.claimAll("D", "approval", [...many, { callId: "b", answer: "no", wait: 1 }])).toEqual({ callId: "b", claim: "taken" })
      expect([yield* store.answerOf("D", "a"), yield* store.answerOf("D", "b")]).toEqual([undefined, undefined])
      expect(yield* store.claimAll("D", "approval", many)).toBeUndefined()
      expect([yield* store.answerOf("D", "a"), yield* store.answerOf("D", "b")]).toEqual(["yes", "yes"])
    })), 60_000)

  it.effect("PostgreSQL: two claimAll and a stop claiming one call at a time, three connections: one answer for all calls", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(database)
      const client = () => Effect.map(Layer.build(Layer.provide(WaitingCalls.layerSql, PgClient.layer({ url: Redacted.make(url) }))), (context) => Context.get(context, WaitingCalls.WaitingCalls))
      const [one, two, stopper] = [yield* client(), yield* client(), yield* client()]
      const ids = ["a", "b", "c", "d", "e", "f", "g", "h"]
      const marker = '{"loopworkStop":true}'
      for (let round = 0; round < 12; round++) {
        const key = `R${round}`
        // Posted in an order that is not the call id order.
        for (const callId of [...ids].reverse()) yield* one.post(key, call(callId))
        const claims = (answer: string) => ids.map((callId) => ({ callId, answer, wait: 1 }))
        const stop = Effect.forEach(yield* stopper.posted(key), (posted) => stopper.claim(key, posted.callId, marker, 1, "approval"))
        const [a, b, s] = yield* Effect.all([
          one.claimAll(key, "approval", claims("one")),
          two.claimAll(key, "approval", claims("two").reverse()),
          stop
        ], { concurrency: 3 })
        const answers = new Set(yield* Effect.forEach(ids, (callId) => one.answerOf(key, callId)))
        expect(answers.size).toBe(1)
        const [answer] = [...answers]
        expect([a, b].filter((result) => result === undefined).length).toBe(answer === marker ? 0 : 1)
        expect(s.every((claim) => claim === (answer === marker ? "answered" : "taken"))).toBe(true)
      }
    }).pipe(Effect.scoped), 60_000)
})

/**
 * Hostile answers and call ids given to DurableChain.decide: ids named
 * after `Object.prototype`'s properties, long and odd ones, decided from
 * JSON on every store; answers that cannot be kept or read are refused as
 * `InvalidInput` before anything is written (a Proxy listing a key twice
 * or a throwing getter used to die); a decisions object read once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { PgClient } from "@effect/sql-pg"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, SqliteClient, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"
import { usePostgres } from "../durable/support/postgres.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

const prototypeNames = Object.getOwnPropertyNames(Object.prototype)
const long = "x".repeat(256)
const ids = [...prototypeNames, long, " ", "a/b", "approval-2/c"]

const setup = <E>(store: Layer.Layer<WaitingCalls.WaitingCalls, E>, calls: ReadonlyArray<string>) => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
  const model = ScriptedModel.make([
    { toolCalls: calls.map((id, n) => ({ id, name: "refund", params: { amount: n } })) },
    { text: "Done." }
  ])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, store, WorkflowEngine.layerMemory)))
  return { ran, Support, live }
}

const sqliteStore = () => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-hostile-"))
  return { store: WaitingCalls.layerSql.pipe(Layer.provide(SqliteClient.layer({ filename: join(dir, "runs.db") }))), done: () => rmSync(dir, { recursive: true, force: true }) }
}

const errorOf = <A, E>(exit: Exit.Exit<A, E>): string =>
  Exit.isSuccess(exit) ? "success" : Cause.hasFails(exit.cause) ? String((Cause.findErrorOption(exit.cause) as { value?: { _tag?: string } }).value?._tag) : "defect"

/** Every call named after Object.prototype and the other edge ids waits, then is decided from JSON. */
const prototypeIds = <E>(store: Layer.Layer<WaitingCalls.WaitingCalls, E>) => {
  const { live, ran, Support } = setup(store, ids)
  return Effect.gen(function*() {
    const id = yield* Support.execute({ ticket: "H1" }, { discard: true })
    let waiting = yield* waitingOn(Support, id)
    for (let turn = 0; turn < 400 && waiting.length < ids.length; turn++) waiting = yield* Effect.andThen(Effect.sleep("1 millis"), DurableChain.pending(Support, id))
    expect(waiting.map((call) => call.callId)).toEqual(ids)
    // Decisions as a UI would send them: JSON, so "__proto__" is an own key. Odd calls rejected.
    const json = `{${ids.map((callId, n) => `${JSON.stringify(callId)}:${n % 2 === 0 ? '{"_tag":"Approve"}' : '{"_tag":"Reject","message":"no"}'}`).join(",")}}`
    const decisions = JSON.parse(json) as Record<string, Approval.Decision>
    // A decision for a call that does not wait, among them: nothing is written.
    const stray = JSON.parse(`{"__proto__":{"_tag":"Approve"},"toString ":{"_tag":"Approve"}}`) as Record<string, Approval.Decision>
    expect((yield* Effect.flip(DurableChain.decide(Support, id, stray)))._tag).toBe("CallNotAwaiting")
    expect(yield* DurableChain.pending(Support, id)).toHaveLength(ids.length)
    yield* DurableChain.decide(Support, id, decisions)
    expect((yield* Support.execute({ ticket: "H1" }))._tag).toBe("Finished")
    expect(ran).toEqual(ids.flatMap((_, n) => n % 2 === 0 ? [`refund ${n}`] : []))
    // Another reviewer reversing one of them afterwards is refused.
    expect((yield* Effect.flip(DurableChain.decide(Support, id, JSON.parse('{"__proto__":{"_tag":"Reject"}}') as Record<string, Approval.Decision>)))._tag).toBe("AlreadyAnswered")
  }).pipe(Effect.provide(live))
}

describe("hostile call ids and answers", () => {
  it.effect("memory: calls named after Object.prototype, 256 characters, '/', decided from JSON", () => prototypeIds(WaitingCalls.layerMemory))
  it.live("SQLite: calls named after Object.prototype, 256 characters, '/', decided from JSON", () => {
    const { done, store } = sqliteStore()
    return Effect.ensuring(prototypeIds(store), Effect.sync(done))
  }, 30_000)
  it.live("PostgreSQL: calls named after Object.prototype, 256 characters, '/', decided from JSON", () =>
    Effect.flatMap(Effect.promise(database), (url) => prototypeIds(WaitingCalls.layerSql.pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) }))))), 60_000)

  it.effect("ids and answers that cannot be kept are refused before anything is written", () => {
    const { live, ran, Support } = setup(WaitingCalls.layerMemory, ["c1"])
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "H2" }, { discard: true })
      yield* waitingOn(Support, id)
      let deep: unknown = 1
      for (let n = 0; n < 100_000; n++) deep = [deep]
      const refused: Array<Record<string, unknown>> = [
        { "": Approval.approve },
        { ["y".repeat(257)]: Approval.approve },
        { "c1é": Approval.approve },
        { "c1\u0000": Approval.approve },
        { c1: Approval.edit(deep) },
        { c1: Approval.edit({ amount: Number.NaN }) },
        { c1: Approval.edit({ amount: 1n }) },
        { c1: { _tag: "Approve", loopworkStop: true } },
        { c1: { loopworkStop: true } },
        { c1: Approval.edit({ amount: "5" }) },
        Object.fromEntries(Array.from({ length: 1_001 }, (_, n) => [`k${n}`, Approval.approve]))
      ]
      for (const decisions of refused) {
        const error = yield* Effect.flip(DurableChain.decide(Support, id, decisions as Record<string, Approval.Decision>))
        expect(["InvalidInput", "InvalidResumeValue", "CallNotAwaiting"]).toContain(error._tag)
      }
      const badWaits: ReadonlyArray<unknown> = [{ waits: { c1: 0 } }, { waits: { c1: 1.5 } }, { waits: { c2: 2 } }, { waits: [] }, { waits: { c1: 2 } }]
      for (const options of badWaits) {
        const error = yield* Effect.flip(DurableChain.decide(Support, id, { c1: Approval.approve }, options as DurableChain.AnswerOptions))
        expect(["InvalidInput", "WaitChanged"]).toContain(error._tag)
      }
      expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      expect((yield* Support.execute({ ticket: "H2" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 0"])
    }).pipe(Effect.provide(live))
  })

  it.effect("decisions a JavaScript caller cannot have meant (a Proxy listing a key twice, a getter that throws) fail as InvalidInput, not a defect", () => {
    const { live, Support } = setup(WaitingCalls.layerMemory, ["c1"])
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "H3" }, { discard: true })
      yield* waitingOn(Support, id)
      const twice = new Proxy({ c1: Approval.approve }, { ownKeys: () => ["c1", "c1"] })
      const throwing = Object.defineProperty({}, "c1", { enumerable: true, get: () => { throw new Error("boom") } })
      const throwingEdit = { c1: Approval.edit(Object.defineProperty({}, "amount", { enumerable: true, get: () => { throw new Error("boom") } })) }
      const throwingWaits = Object.defineProperty({}, "waits", { enumerable: true, get: () => { throw new Error("boom") } })
      const outcomes = [
        errorOf(yield* Effect.exit(DurableChain.decide(Support, id, twice))),
        errorOf(yield* Effect.exit(DurableChain.decide(Support, id, throwing as Record<string, Approval.Decision>))),
        errorOf(yield* Effect.exit(DurableChain.decide(Support, id, throwingEdit))),
        errorOf(yield* Effect.exit(DurableChain.decide(Support, id, { c1: Approval.approve }, throwingWaits as DurableChain.AnswerOptions)))
      ]
      expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
      expect(outcomes).toEqual(["InvalidInput", "InvalidInput", "InvalidInput", "InvalidInput"])
    }).pipe(Effect.provide(live))
  })

  it.effect("a decisions object whose getters answer differently on each read is read once", () => {
    const { live, ran, Support } = setup(WaitingCalls.layerMemory, ["c1", "c2"])
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "H4" }, { discard: true })
      let waiting = yield* waitingOn(Support, id)
      for (let turn = 0; turn < 100 && waiting.length < 2; turn++) waiting = yield* Effect.andThen(Effect.yieldNow, DurableChain.pending(Support, id))
      let reads = 0
      const flip = () => reads++ === 0 ? Approval.approve : Approval.reject("flipped")
      let tagReads = 0
      const decisions = Object.defineProperties({}, {
        c1: { enumerable: true, get: flip },
        // Its tag says Reject once, Approve after.
        c2: { enumerable: true, value: Object.defineProperty({}, "_tag", { enumerable: true, get: () => tagReads++ === 0 ? "Reject" : "Approve" }) }
      }) as Record<string, Approval.Decision>
      const exit = yield* Effect.exit(DurableChain.decide(Support, id, decisions))
      const store = yield* WaitingCalls.WaitingCalls
      const stored = [yield* store.answerOf(`Support/${id}`, "c1"), yield* store.answerOf(`Support/${id}`, "c2")]
      if (Exit.isFailure(exit)) {
        // Refused: nothing written.
        expect(stored).toEqual([undefined, undefined])
        return
      }
      expect((yield* Support.execute({ ticket: "H4" }))._tag).toBe("Finished")
      // What ran is what the store says was decided.
      const approved = stored.flatMap((answer, n) => answer?.includes("Approve") === true ? [`refund ${n}`] : [])
      expect(ran).toEqual(approved)
    }).pipe(Effect.provide(live))
  })
})

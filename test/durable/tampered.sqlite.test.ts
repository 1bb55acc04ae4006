/**
 * A SQLite store edited by hand between a run pausing for an approval and
 * resuming (helper-28's probes). Whoever can write the store can answer any
 * call, so this is defence in depth, not a boundary: what the run reads back
 * is checked, and a record that is not what the run wrote ends it with
 * `DurableRunFailed` (`CorruptRecord`), never a defect, and never an
 * approval applied to a call no human was shown:
 *
 * - a recorded model turn given a second call with the waiting call's id;
 * - a recorded turn whose waiting call's arguments changed after it was posted;
 * - a recorded turn that is not a turn, or whose call id is not a string;
 * - a recorded tool outcome or version that is not one.
 *
 * A schema error that is not a record's (a custom mode's own) stays a defect.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Refund, Lookup)

/** A stored JSON value, edited in place by a test. */
type Stored = { [key: string]: any }

/**
 * Ticket T1 runs until it waits for c2 (refund 20); the runner stops;
 * `tamper` edits the file; a new runner starts, a human approves what
 * `pending` shows, and the execution's end is read.
 */
/** What a human does once the execution is started again: by default, approve the calls `pending` shows; what was shown. */
type Answer = (id: string) => Effect.Effect<ReadonlyArray<WaitingCalls.WaitingCall>, unknown, WaitingCalls.WaitingCalls | WorkflowEngine.WorkflowEngine>

const Support = supportWorkflow("Support", toolkit)

const approveShown: Answer = (id) =>
  Effect.tap(waitingOn(Support, id), (shown) => DurableChain.decide(Support, id, Object.fromEntries(shown.map((call) => [call.callId, Approval.approve]))))

const tamperedRun = (tamper: (db: DatabaseSync) => void, answer: Answer = approveShown) => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-tampered-"))
  const filename = join(dir, "runs.db")
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    lookup: ({ order }) => Effect.sync(() => (ran.push(`lookup ${order}`), `order ${order}: shipped`))
  })
  const live = (model: ScriptedModel.ScriptedModel) =>
    DurableChain.layer(Support).pipe(
      Layer.provide([model.layer, handlers]),
      Layer.provideMerge(DurableSqlite.runner({ filename, pollInterval: "20 millis" }))
    )
  const before = ScriptedModel.make([
    { toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }, { id: "c2", name: "refund", params: { amount: 20 } }] }
  ])
  const after = ScriptedModel.make([{ text: "Refunded." }])
  return Effect.gen(function*() {
    yield* Effect.scoped(Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      yield* waitingOn(Support, id)
    }).pipe(Effect.provide(live(before))))
    const db = new DatabaseSync(filename)
    try {
      tamper(db)
    } finally {
      db.close()
    }
    return yield* Effect.scoped(Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      const shown = yield* answer(id)
      const end = yield* Effect.exit(Support.execute({ ticket: "T1" }).pipe(Effect.timeout("10 seconds")))
      return { ran, shown, end }
    }).pipe(Effect.provide(live(after))))
  }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
}

/** Rewrites the recorded result of the activity `name` (its first attempt) in effect's reply table. */
const rewrite = (name: string, change: (value: Stored) => unknown) => (db: DatabaseSync) => {
  const select = db.prepare(`SELECT r.id AS id, r.payload AS payload FROM cluster_replies r
    JOIN cluster_messages m ON r.request_id = m.id WHERE m.message_id LIKE ?`)
  select.setReadBigInts(true)
  const row = select.get(`%/activity/${name}/1`) as { id: bigint; payload: string } | undefined
  if (row === undefined) throw new Error(`no record of ${name}`)
  const payload = JSON.parse(row.payload) as Stored
  payload.value.exit.value = change(payload.value.exit.value)
  db.prepare(`UPDATE cluster_replies SET payload = ? WHERE id = ?`).run(JSON.stringify(payload), row.id)
}

/** Replaces the whole stored reply of the activity `name` (its envelope too) with `payload`. */
const replaceReply = (name: string, payload: string) => (db: DatabaseSync) => {
  const select = db.prepare(`SELECT r.id AS id FROM cluster_replies r JOIN cluster_messages m ON r.request_id = m.id WHERE m.message_id LIKE ?`)
  select.setReadBigInts(true)
  const row = select.get(`%/activity/${name}/1`) as { id: bigint } | undefined
  if (row === undefined) throw new Error(`no record of ${name}`)
  db.prepare(`UPDATE cluster_replies SET payload = ? WHERE id = ?`).run(payload, row.id)
}

const edits: ReadonlyArray<readonly [string, (db: DatabaseSync) => void, string]> = [
  ["a recorded turn given a second call with the waiting call's id", rewrite("v1/model/1", (turn) => {
    const forged = { id: "c2", name: "refund", params: { amount: 9999 } }
    turn.messages[0].content.push({ options: {}, type: "tool-call", ...forged, providerExecuted: false })
    turn.response.toolCalls.push(forged)
    return turn
  }), "two calls with one id"],
  ["a recorded turn whose waiting call's arguments changed after it was posted", rewrite("v1/model/1", (turn) => {
    turn.response.toolCalls[1].params = { amount: 9999 }
    turn.messages[0].content[1].params = { amount: 9999 }
    return turn
  }), "is not the call it posted"],
  ["a recorded turn that is not a turn", rewrite("v1/model/1", () => "garbage"), "does not match its schema"],
  ["a recorded turn whose call id is a number", rewrite("v1/model/1", (turn) => (turn.response.toolCalls[1].id = 42, turn)), "does not match its schema"],
  ["a recorded tool outcome that is not one", rewrite("v1/tool/c1/1", () => ({ _tag: "Nope" })), "does not match its schema"],
  ["a recorded version that is not a number", rewrite("loopwork/version", () => "one"), "does not match its schema"],
  // Versions `workflow` refuses: replayed under names it never recorded, the run would call the model and run lookup again.
  ["a recorded version of 0", rewrite("loopwork/version", () => 0), "does not match its schema"],
  ["a recorded version below 0", rewrite("loopwork/version", () => -1), "does not match its schema"],
  ["a recorded version that is not whole", rewrite("loopwork/version", () => 1.5), "does not match its schema"],
  // helper-68: the engine could not decode the reply at all (MalformedMessage), a defect until then.
  ["a recorded turn's whole reply replaced by {}", replaceReply("v1/model/1", "{}"), "the engine cannot decode the stored reply"],
  ["a recorded turn's whole reply nested 10,000 levels", replaceReply("v1/model/1", "[".repeat(10_000) + "]".repeat(10_000)), "the engine cannot decode the stored reply"]
]

describe("a durable run whose SQLite records were edited", () => {
  for (const [what, tamper, says] of edits) {
    it.live(`${what}: DurableRunFailed CorruptRecord; the refund never runs, lookup not again`, () =>
      Effect.gen(function*() {
        const { end, ran, shown } = yield* tamperedRun(tamper)
        // The human was shown the call as posted.
        expect(shown.map((call) => [call.callId, call.params])).toEqual([["c2", { amount: 20 }]])
        expect(ran.filter((entry) => entry.startsWith("refund"))).toEqual([])
        expect(ran.filter((entry) => entry.startsWith("lookup"))).toEqual(["lookup A1"])
        if (Exit.isSuccess(end)) return expect.unreachable("the run fails")
        expect(Cause.hasDies(end.cause)).toBe(false)
        const error = Cause.squash(end.cause)
        expect(error).toMatchObject({ _tag: "DurableRunFailed", reason: "CorruptRecord" })
        expect(String((error as Error).message)).toContain(says)
      }), 60_000)
  }

  // helper-65's probes: values nested 100,000 levels deep, past what the loop compares or delivers.
  const deep = (depth: number) => "[".repeat(depth) + "1" + "]".repeat(depth)

  it.live("posted arguments edited to nest 100,000 levels: CorruptRecord (was a stack overflow); the refund never runs", () =>
    Effect.gen(function*() {
      const { end, ran } = yield* tamperedRun((db) =>
        db.prepare(`UPDATE loopwork_waiting_calls SET params = ? WHERE call_id = 'c2'`).run(deep(100_000))
      )
      expect(ran).toEqual(["lookup A1"])
      if (Exit.isSuccess(end)) return expect.unreachable("the run fails")
      expect(Cause.hasDies(end.cause)).toBe(false)
      expect(Cause.squash(end.cause)).toMatchObject({ _tag: "DurableRunFailed", reason: "CorruptRecord" })
      expect((Cause.squash(end.cause) as Error).message).toContain("holds arguments past the stored limits")
    }), 60_000)

  it.live("a recorded answer edited to nest 100,000 levels, then a stop: the run stops (it waited for ever); the edit never runs", () =>
    Effect.gen(function*() {
      const { end, ran } = yield* tamperedRun(
        (db) => db.prepare(`UPDATE loopwork_waiting_calls SET answer = ? WHERE call_id = 'c2'`).run(`{"_tag":"Edit","params":${deep(100_000)}}`),
        (id) => Effect.as(DurableChain.stop(Support, id), [])
      )
      expect(ran).toEqual(["lookup A1"])
      if (Exit.isFailure(end)) return expect.unreachable(`the run stops: ${Cause.pretty(end.cause)}`)
      expect(end.value).toMatchObject({ _tag: "Paused", reason: "StopRequested" })
    }), 60_000)

  it.effect("a schema error of a custom mode's own stays a defect: it is not a record's", () =>
    Effect.gen(function*() {
      const Broken = DurableChain.workflow("Broken", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
        mode: () => Effect.sync(() => Schema.decodeUnknownSync(Schema.Number)("not a number") as never)
      })
      const end = yield* Effect.exit(Broken.execute({ ticket: "B1" })).pipe(
        Effect.provide(DurableChain.layer(Broken).pipe(Layer.provideMerge(Layer.mergeAll(ScriptedModel.make([{ text: "unused" }]).layer, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))))
      )
      if (Exit.isSuccess(end)) return expect.unreachable("the run dies")
      expect(Cause.hasDies(end.cause)).toBe(true)
      expect(Schema.isSchemaError(Cause.squash(end.cause))).toBe(true)
    }))
})

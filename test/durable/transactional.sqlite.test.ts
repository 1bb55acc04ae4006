/**
 * `transactional` tools on DurableSqlite (helper-71's probes): the handler's
 * own writes commit if and only if it succeeded — a handler that fails, dies,
 * times out or hits a SQL error after writing runs in a savepoint of its
 * record's transaction, rolled back while its failure is recorded (they were
 * committed) — no tool runs twice across a restart, and the run ends as the
 * plain run.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql/SqlClient"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableResult, DurableSqlite } from "../../src/durable/index.ts"
import { pendingWhen } from "../support/durable.ts"
import * as SqliteClient from "../../src/durable/SqliteClient.ts"

type Script = ReadonlyArray<ScriptedModel.Reply>
const Input = Schema.Struct({ ticket: Schema.String })
type Impl = (sql: SqlClient, amount: number, id: string) => Effect.Effect<string, string>

const makeToolkit = (needsApproval: boolean) =>
  Toolkit.make(
    Tool.make("charge", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, failure: Schema.String, needsApproval }),
    Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
  )

let wn = 0
const counts = { charge: 0, lookup: 0 }

const handlersOf = (toolkit: ReturnType<typeof makeToolkit>, impl: Impl) =>
  toolkit.toLayer(Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* Effect.orDie(sql`CREATE TABLE IF NOT EXISTS fx (v TEXT NOT NULL)`)
    return {
      charge: ({ amount }: { amount: number }, { toolCallId }: { toolCallId?: string }) =>
        Effect.suspend(() => (counts.charge++, impl(sql, amount, toolCallId ?? "?"))),
      lookup: ({ order }: { order: string }, { toolCallId }: { toolCallId?: string }) =>
        Effect.suspend(() => (counts.lookup++, Effect.as(Effect.orDie(sql`INSERT INTO fx (v) VALUES (${`lookup/${toolCallId}`})`), `order ${order}`)))
    } as never
  }))

interface End { readonly kind: string; readonly reason: string; readonly document: string }

const durableEndOf = (exit: Exit.Exit<DurableResult.DurableResult, { readonly _tag: string }>): End => {
  if (Exit.isSuccess(exit)) return { kind: exit.value._tag, reason: exit.value.reason, document: exit.value.document }
  const e = Cause.findErrorOption(exit.cause)
  if (e._tag === "None") return { kind: "DEFECT", reason: String(Cause.pretty(exit.cause)).slice(0, 600), document: "" }
  const err = e.value
  return err instanceof DurableResult.DurableRunFailed ? { kind: "Failed", reason: err.reason, document: err.document } : { kind: err._tag, reason: "", document: "" }
}

const rowsOf = (filename: string): Array<string> => {
  const db = new DatabaseSync(filename)
  try {
    const has = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='fx'").all()
    return has.length === 0 ? [] : (db.prepare("SELECT v FROM fx ORDER BY rowid").all() as Array<{ v: string }>).map((r) => r.v)
  } finally {
    db.close()
  }
}

const baseOptions = { mode: Mode.whileNeedsResponse, maxRuns: 6 }

/** The plain run on its own SQLite file: approving every pause. */
const plainEnd = (script: Script, impl: Impl, needsApproval: boolean, extra: Record<string, unknown>) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "probe-tx-plain-"))
    const filename = join(dir, "plain.db")
    const toolkit = makeToolkit(needsApproval)
    const model = ScriptedModel.make(script as never)
    try {
      const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
        let chain: Chain.Chain<typeof toolkit.tools> = Chain.make({ user: "Ticket T", toolkit })
        while (true) {
          const o = yield* Chain.run(chain, { ...baseOptions, ...extra } as never)
          if (o._tag === "Pause" && o.reason._tag === "ApprovalPending") {
            chain = yield* Approval.decide(o.chain, Object.fromEntries(o.reason.calls.map((c) => [c.id, Approval.approve])))
            continue
          }
          return o
        }
      }).pipe(Effect.provide(Layer.mergeAll(model.layer, handlersOf(toolkit, impl)).pipe(Layer.provide(SqliteClient.layer({ filename })))))))
      const rows = rowsOf(filename)
      if (Exit.isSuccess(exit)) {
        const o = exit.value
        const document = JSON.stringify(yield* Chain.encode(o.chain))
        return { end: o._tag === "Pause" ? { kind: "Paused", reason: o.reason._tag, document } : { kind: "Finished", reason: String(o.reason), document }, rows }
      }
      const e = Cause.findErrorOption(exit.cause)
      if (e._tag === "None") return { end: { kind: "DEFECT", reason: Cause.pretty(exit.cause).slice(0, 600), document: "" }, rows }
      const failed = e.value as { readonly reason: { readonly _tag: string }; readonly chain: Chain.Chain }
      return { end: { kind: "Failed", reason: failed.reason._tag, document: JSON.stringify(yield* Chain.encode(failed.chain)) }, rows }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

/** Durable on SQLite; approvals decided while waiting; then a second runner on the same file executes again. */
const sqliteEnds = (script: Script, impl: Impl, needsApproval: boolean, extra: Record<string, unknown>) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-tx-"))
    const filename = join(dir, "runs.db")
    const toolkit = makeToolkit(needsApproval)
    const W: DurableChain.DurableWorkflow<string, typeof Input> = DurableChain.workflow(`Tx${++wn}`, {
      input: Input,
      idempotencyKey: ({ ticket }: { readonly ticket: string }) => ticket,
      toolkit,
      chain: () => Chain.make({ user: "Ticket T", toolkit }),
      transactional: ["charge"],
      ...baseOptions,
      ...extra
    } as never)
    const live = (model: ScriptedModel.ScriptedModel) =>
      DurableChain.layer(W).pipe(Layer.provide([model.layer, handlersOf(toolkit, impl)]), Layer.provideMerge(DurableSqlite.runner({ filename, pollInterval: "20 millis" })))
    const before = { ...counts }
    try {
      const first = durableEndOf(yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
        if (!needsApproval) return yield* W.execute({ ticket: "T" })
        const id = yield* W.execute({ ticket: "T" }, { discard: true })
        for (let i = 0; i < 5; i++) {
          const r = yield* Effect.exit(Effect.timeout(W.poll(id), "1 millis"))
          void r
          const waiting = yield* Effect.orElseSucceed(Effect.timeout(pendingWhen(W, id, (c) => c.length > 0), "3 seconds"), () => [])
          if (waiting.length === 0) break
          yield* DurableChain.decide(W, id, Object.fromEntries(waiting.map((c) => [c.callId, Approval.approve])))
          yield* Effect.sleep("300 millis")
        }
        return yield* W.execute({ ticket: "T" })
      }).pipe(Effect.timeout("30 seconds"), Effect.provide(live(ScriptedModel.make(script as never)))))))
      const rowsFirst = rowsOf(filename)
      const mid = { ...counts }
      const second = durableEndOf(yield* Effect.exit(Effect.scoped(W.execute({ ticket: "T" }).pipe(Effect.timeout("30 seconds"), Effect.provide(live(ScriptedModel.make([])))))))
      const rowsSecond = rowsOf(filename)
      return {
        first, second, rowsFirst, rowsSecond,
        ranFirst: { charge: mid.charge - before.charge, lookup: mid.lookup - before.lookup },
        rerun: { charge: counts.charge - mid.charge, lookup: counts.lookup - mid.lookup }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

const short = (e: End) => ({ kind: e.kind, reason: e.reason, document: e.document.length > 600 ? `${e.document.slice(0, 300)}…(${e.document.length})` : e.document })


const probe = (name: string, script: Script, impl: Impl, opts: { needsApproval?: boolean; extra?: Record<string, unknown>; rows?: ReadonlyArray<string> } = {}) =>
  it.live(name, () =>
    Effect.gen(function*() {
      const plain = yield* plainEnd(script, impl, opts.needsApproval ?? false, opts.extra ?? {})
      const sql = yield* sqliteEnds(script, impl, opts.needsApproval ?? false, opts.extra ?? {})
      expect(plain.end.kind).not.toBe("DEFECT")
      expect(sql.first.kind).not.toBe("DEFECT")
      expect(short(sql.first)).toEqual(short(plain.end))
      expect(sql.first.document).toBe(plain.end.document)
      expect(short(sql.second)).toEqual(short(plain.end))
      expect(sql.rerun).toEqual({ charge: 0, lookup: 0 })
      expect(sql.rowsSecond).toEqual(sql.rowsFirst)
      if (opts.rows !== undefined) expect(sql.rowsFirst).toEqual(opts.rows)
    }), 120_000)

const then = (calls: ScriptedModel.Reply["toolCalls"]): Script => [{ toolCalls: calls }, { text: "Done." }]
const one = then([{ id: "c1", name: "charge", params: { amount: 20 } }])
const write = (sql: SqlClient, v: string) => Effect.orDie(sql`INSERT INTO fx (v) VALUES (${v})`)

describe("transactional tools on SQLite", () => {
  probe("a handler that writes and returns: one row", one, (sql, a, id) => Effect.as(write(sql, `charge/${id}`), `charged ${a}`), { rows: ["charge/c1"] })
  // The brief expects: a failing handler's writes roll back.
  probe("a handler that writes then fails: writes rolled back", one, (sql, _a, id) => Effect.andThen(write(sql, `charge/${id}`), Effect.fail("card declined")), { rows: [] })
  probe("a handler that writes then dies: writes rolled back", one, (sql, _a, id) => Effect.andThen(write(sql, `charge/${id}`), Effect.die(new Error("boom"))), { rows: [] })
  probe("a handler that throws synchronously", one, () => { throw new Error("sync throw") }, { rows: [] })
  probe("a handler that writes then times out: writes rolled back", one, (sql, _a, id) => Effect.andThen(write(sql, `charge/${id}`), Effect.never), { extra: { toolTimeout: "300 millis" }, rows: [] })
  probe("a handler that fails with a SqlError after a write (bad table)", one, (sql, _a, id) => Effect.andThen(write(sql, `charge/${id}`), Effect.as(Effect.mapError(sql`INSERT INTO nope (v) VALUES (1)`, () => "sql failed"), "never")), { rows: [] })
  probe("a handler that writes 20k rows", one, (sql, _a, id) => Effect.as(Effect.forEach(Array.from({ length: 20_000 }, (_, i) => i), (i) => write(sql, `charge/${id}/${i}`), { discard: true }), "many"))
  probe("a handler that writes a 5 MB row", one, (sql, _a, id) => Effect.as(write(sql, `charge/${id}/${"x".repeat(5_000_000)}`), "big"))
  probe("a nested sql.withTransaction that fails is rolled back to its savepoint; the outer write commits", one, (sql, _a, id) =>
    Effect.gen(function*() {
      yield* Effect.ignore(sql.withTransaction(Effect.andThen(write(sql, `inner/${id}`), Effect.fail("inner fails"))))
      yield* Effect.orDie(sql.withTransaction(write(sql, `inner-ok/${id}`)))
      yield* write(sql, `outer/${id}`)
      return "nested"
    }), { rows: ["inner-ok/c1", "outer/c1"] })
  probe("a transactional tool that needs approval", one, (sql, a, id) => Effect.as(write(sql, `charge/${id}`), `charged ${a}`), { needsApproval: true, rows: ["charge/c1"] })
  probe("called twice in one model answer (concurrently)", then([{ id: "c1", name: "charge", params: { amount: 1 } }, { id: "c2", name: "charge", params: { amount: 2 } }]),
    (sql, a, id) => Effect.as(Effect.andThen(write(sql, `charge/${id}`), Effect.andThen(Effect.sleep("50 millis"), write(sql, `charge/${id}/b`))), `charged ${a}`))
  probe("called twice in one answer, the first fails after writing while the second succeeds", then([{ id: "c1", name: "charge", params: { amount: 1 } }, { id: "c2", name: "charge", params: { amount: 2 } }]),
    (sql, a, id) => Effect.andThen(write(sql, `charge/${id}`), Effect.andThen(Effect.sleep(a === 1 ? "100 millis" : "10 millis"), a === 1 ? Effect.fail("declined") : Effect.succeed(`charged ${a}`))), { rows: ["charge/c2"] })
  probe("a transactional call beside a non-transactional call that writes", then([{ id: "c1", name: "charge", params: { amount: 1 } }, { id: "c2", name: "lookup", params: { order: "A" } }]),
    (sql, a, id) => Effect.as(Effect.andThen(write(sql, `charge/${id}`), Effect.sleep("100 millis")), `charged ${a}`))
  probe("arguments that fail the schema: handler never runs", then([{ id: "c1", name: "charge", params: { amount: "lots" } }]), (sql, a, id) => Effect.as(write(sql, `charge/${id}`), `charged ${a}`), { rows: [] })
})

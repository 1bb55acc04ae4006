/**
 * Hostile model output and hostile tool results in a durable chain
 * (helper-69's probes): the durable run, on the memory engine and on SQLite,
 * ends with the same document as a plain `Chain.run` of the same script, a
 * second runner on the same file replays it without running a tool again,
 * and no credential reaches the file. A result the store cannot write (a
 * cycle, a BigInt, a Redacted, a getter that throws, nesting past the
 * limit) is recorded as the failure a plain run gives it; before, the run
 * died, ended CorruptRecord, or hung on SQLite and ran the tool again.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Cause, Effect, Exit, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableResult, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"

const KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ v: Schema.Unknown }), success: Schema.Unknown })
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo, Lookup)

type Script = ReadonlyArray<ScriptedModel.Reply>
type Impl = { echo: (p: { v: unknown }) => Effect.Effect<unknown, never>; lookup?: (p: { order: string }) => Effect.Effect<string, never> }

interface End { readonly kind: string; readonly reason: string; readonly document: string }

let wn = 0
const counts = { echo: 0, lookup: 0 }
const handlersOf = (impl: Impl) =>
  toolkit.toLayer({
    echo: (p) => Effect.suspend(() => { counts.echo++; return impl.echo(p as never) }) as never,
    lookup: (p) => Effect.suspend(() => { counts.lookup++; return impl.lookup ? impl.lookup(p) : Effect.succeed(`order ${p.order}`) })
  })

const options = { mode: Mode.whileNeedsResponse, maxRuns: 6 }

const plainEnd = (script: Script, impl: Impl) =>
  Effect.gen(function*() {
    const model = ScriptedModel.make(script as never)
    const exit = yield* Effect.exit(Chain.run(Chain.make({ user: "Ticket T", toolkit }), options).pipe(Effect.provide([model.layer, handlersOf(impl)])))
    if (Exit.isSuccess(exit)) {
      const o = exit.value
      const doc = yield* Effect.exit(Chain.encode(o.chain))
      const document = Exit.isSuccess(doc) ? JSON.stringify(doc.value) : JSON.stringify({ error: (Cause.squash(doc.cause) as Error).message })
      return o._tag === "Pause" ? { kind: "Paused", reason: o.reason._tag, document } : { kind: "Finished", reason: String(o.reason), document }
    }
    const e = Cause.findErrorOption(exit.cause)
    if (e._tag === "None") return { kind: "DEFECT", reason: String(Cause.squash(exit.cause)), document: "" }
    const err = e.value
    const doc = yield* Effect.exit(Chain.encode(err.chain))
    return { kind: "Failed", reason: err.reason._tag, document: Exit.isSuccess(doc) ? JSON.stringify(doc.value) : JSON.stringify({ error: (Cause.squash(doc.cause) as Error).message }) }
  })

const durableEndOf = (exit: Exit.Exit<DurableResult.DurableResult, { readonly _tag: string }>): End => {
  if (Exit.isSuccess(exit)) return { kind: exit.value._tag, reason: exit.value.reason, document: exit.value.document }
  const e = Cause.findErrorOption(exit.cause)
  if (e._tag === "None") return { kind: "DEFECT", reason: String(Cause.squash(exit.cause)).slice(0, 300), document: "" }
  const err = e.value
  return err instanceof DurableResult.DurableRunFailed
    ? { kind: "Failed", reason: err.reason, document: err.document }
    : { kind: err._tag, reason: "", document: "" }
}

const memoryEnd = (script: Script, impl: Impl) =>
  Effect.gen(function*() {
    const W = DurableChain.workflow(`Hostile${++wn}`, {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit,
      chain: () => Chain.make({ user: "Ticket T", toolkit }),
      ...options
    })
    const model = ScriptedModel.make(script as never)
    const live = DurableChain.layer(W).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlersOf(impl), WaitingCalls.layerMemory, WorkflowEngine.layerMemory)))
    const exit = yield* Effect.exit(W.execute({ ticket: "T" }).pipe(Effect.timeout("20 seconds"))).pipe(Effect.provide(live))
    return durableEndOf(exit)
  })

/** Runs on SQLite to the end, then a second runner on the same file (a model that fails if called) executes again. */
const sqliteEnds = (script: Script, impl: Impl) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-hostile-"))
    const filename = join(dir, "runs.db")
    const W = DurableChain.workflow(`HostileSql${++wn}`, {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit,
      chain: () => Chain.make({ user: "Ticket T", toolkit }),
      ...options
    })
    const live = (model: ScriptedModel.ScriptedModel) =>
      DurableChain.layer(W).pipe(Layer.provide([model.layer, handlersOf(impl)]), Layer.provideMerge(DurableSqlite.runner({ filename, pollInterval: "20 millis" })))
    try {
      const first = durableEndOf(yield* Effect.exit(Effect.scoped(W.execute({ ticket: "T" }).pipe(Effect.timeout("30 seconds"), Effect.provide(live(ScriptedModel.make(script as never)))))))
      const before = { ...counts }
      const second = durableEndOf(yield* Effect.exit(Effect.scoped(W.execute({ ticket: "T" }).pipe(Effect.timeout("30 seconds"), Effect.provide(live(ScriptedModel.make([])))))))
      const rerun = { echo: counts.echo - before.echo, lookup: counts.lookup - before.lookup }
      const db = new DatabaseSync(filename)
      let rowsText = ""
      try {
        for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as Array<{ name: string }>) {
          const st = db.prepare(`SELECT * FROM "${name}"`)
          st.setReadBigInts(true)
          for (const row of st.all()) {
            rowsText += JSON.stringify(row, (_k, v) => typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v) + "\n"
          }
        }
      } finally {
        db.close()
      }
      let fileText = ""
      for (const f of readdirSync(dir)) fileText += readFileSync(join(dir, f)).toString("latin1")
      return { first, second, rerun, rowsText, fileText }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

const short = (e: End) => ({ kind: e.kind, reason: e.reason, document: e.document.length > 400 ? `${e.document.slice(0, 200)}…(${e.document.length})` : e.document })

const compare = (name: string, script: Script, impl: Impl, extra?: (ends: { readonly fileText: string }) => void) =>
  it.live(name, () =>
    Effect.gen(function*() {
      const plain = yield* plainEnd(script, impl)
      const memory = yield* memoryEnd(script, impl)
      const sql = yield* sqliteEnds(script, impl)
      expect(plain.kind).not.toBe("DEFECT")
      expect(short(memory)).toEqual(short(plain))
      expect(memory.document).toBe(plain.document)
      expect(short(sql.first)).toEqual(short(plain))
      expect(sql.first.document).toBe(plain.document)
      expect(short(sql.second)).toEqual(short(plain))
      expect(sql.rerun).toEqual({ echo: 0, lookup: 0 })
      extra?.(sql)
    }), 120_000)

const then = (calls: ScriptedModel.Reply["toolCalls"]): Script => [{ toolCalls: calls }, { text: "Done." }]
const ok = (v: unknown): Impl => ({ echo: () => Effect.succeed(v) })
const okEcho: Impl = { echo: ({ v }) => Effect.succeed(typeof v === "string" ? v.length : "ok") }

let deep: unknown = 1
for (let i = 0; i < 10_000; i++) deep = { a: deep }
let deepArr: unknown = 1
for (let i = 0; i < 100_000; i++) deepArr = [deepArr]
const cyclic: { a: number; self?: unknown } = { a: 1 }
cyclic.self = cyclic
const throwing = { get boom() { throw new Error(`getter ${KEY}`) } }

describe("hostile model output in a durable chain: it ends as the plain run", () => {
  compare("deeply nested arguments (10k levels)", then([{ id: "c1", name: "echo", params: { v: deep } }]), okEcho)
  compare("a 20 MB string argument", then([{ id: "c1", name: "echo", params: { v: "x".repeat(20_000_000) } }]), okEcho)
  compare("__proto__ keys in arguments", then([{ id: "c1", name: "echo", params: JSON.parse('{"v":{"__proto__":{"polluted":true}},"__proto__":{"x":1}}') }]), { echo: ({ v }) => Effect.succeed(JSON.stringify(v) + String((({}) as { readonly polluted?: unknown }).polluted)) })
  compare("duplicate call ids in one turn", then([{ id: "c1", name: "lookup", params: { order: "A" } }, { id: "c1", name: "lookup", params: { order: "B" } }]), okEcho)
  compare("call ids repeated across turns", [{ toolCalls: [{ id: "c1", name: "lookup", params: { order: "A" } }] }, { toolCalls: [{ id: "c1", name: "lookup", params: { order: "B" } }] }, { text: "Done." }], okEcho)
  for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "c1/1", "../c1", "v1/model/1"]) {
    compare(`call id ${id}`, [{ toolCalls: [{ id, name: "lookup", params: { order: "A" } }, { id: "c2", name: "lookup", params: { order: "B" } }] }, { toolCalls: [{ id, name: "lookup", params: { order: "C" } }] }, { text: "Done." }], okEcho)
  }
  compare("a tool that does not exist", then([{ id: "c1", name: "nope", params: { v: 1 } }, { id: "c2", name: "lookup", params: { order: "A" } }]), okEcho)
  compare("tool name __proto__", then([{ id: "c1", name: "__proto__", params: {} }]), okEcho)
  compare("arguments that fail the schema", then([{ id: "c1", name: "lookup", params: { order: 5 } }]), okEcho)
  compare("arguments not an object (a string)", then([{ id: "c1", name: "lookup", params: "A" }]), okEcho)
})

describe("hostile tool results in a durable chain: it ends as the plain run, nothing runs again after a restart", () => {
  const one = then([{ id: "c1", name: "echo", params: { v: 1 } }])
  compare("a 20 MB result", one, ok("y".repeat(20_000_000)))
  compare("a deep result (10k objects)", one, ok(deep))
  compare("a deep result (100k arrays)", one, ok(deepArr))
  compare("a cyclic result", one, ok(cyclic))
  compare("a BigInt result", one, ok(10n ** 30n))
  compare("a result with a throwing getter", one, ok(throwing))
  compare("a Redacted result", one, ok(Redacted.make(KEY)), (sql) => {
    expect(sql.fileText).not.toContain(KEY)
  })
  compare("a string result holding an API key", one, ok(`your key is ${KEY}`))
  compare("a handler that dies with the key in its message: no secret stored", one, { echo: () => Effect.die(new Error(`connect failed with ${KEY}`)) }, (sql) => {
    expect(sql.fileText).not.toContain(KEY)
  })
  compare("a handler that throws synchronously with the key", one, { echo: () => { throw new Error(`thrown ${KEY}`) } }, (sql) => {
    expect(sql.fileText).not.toContain(KEY)
  })
  compare("a handler that dies with a non-Error object holding the key", one, { echo: () => Effect.die({ token: KEY, toString: () => `obj ${KEY}` }) }, (sql) => {
    expect(sql.fileText).not.toContain(KEY)
  })
  compare("a model failure holding the key: stored redacted", [{ fail: `upstream said ${KEY}` }], okEcho, (sql) => {
    expect(sql.fileText).not.toContain(KEY)
  })
})

/**
 * Answers whose values are awkward for JSON (unicode escapes, -0,
 * 1e21, the smallest and largest doubles, nested arrays, empty objects,
 * `__proto__` and empty keys, `undefined` fields) decided through
 * DurableChain.decide on the SQLite and PostgreSQL engines: the run's check
 * of the answer against the one recorded must hold after the engine's
 * encode/JSON/decode round trip, and the tool runs with the edit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, ExternalTool } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableSqlite } from "../../src/durable/index.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { canonical } from "../../src/internal/canonicalJson.ts"
import { usePostgres } from "./support/postgres.ts"
import { pendingWhen, supportWorkflow } from "../support/durable.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const Store = Tool.make("store", { parameters: Schema.Struct({ data: Schema.Unknown }), success: Schema.String, needsApproval: true })
const Fetch = ExternalTool.mark(Tool.make("fetch", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.Unknown }))
const toolkit = Toolkit.make(Store, Fetch)

const awkward: unknown = JSON.parse(
  `{"nul":"a\\u0000b","lone":"\\ud800","pair":"\\ud83d\\ude00","ls":"\\u2028","neg":-0,"big":1e21,"tiny":5e-324,"max":1.7976931348623157e308,` +
    `"nested":[[],[[]],[{}],{"a":[1,[2,[3]]]}],"empty":{},"__proto__":{"x":1},"":"empty key","\\uffff":1,"\\ud83d\\ude00":2,"z":null,"a":true}`
)

const workflowOn = (name: string) => supportWorkflow(name, toolkit)


const scenario = <E>(name: string, engine: Layer.Layer<DurableSqlite.Services, E>, result: ExternalTool.Supplied = { result: awkward }) => {
  const ran: Array<string> = []
  const supplied: Array<string> = []
  const handlers = toolkit.toLayer({
    store: ({ data }) => Effect.sync(() => (ran.push(canonical(data)), "stored")),
    fetch: () => Effect.die("an external tool's handler never runs")
  })
  const model = ScriptedModel.make([
    (request) => {
      const last = request.prompt.content.at(-1)
      if (last?.role === "tool") supplied.push(JSON.stringify(last.content))
      const tools = request.prompt.content.filter((message) => message.role === "tool").length
      if (tools === 0) return { toolCalls: [{ id: "s1", name: "store", params: { data: 1 } }] }
      if (tools === 1) return { toolCalls: [{ id: "f1", name: "fetch", params: { url: "u" } }] }
      return { text: "Done." }
    }
  ], { repeat: true })
  const Support = workflowOn(name)
  const live = DurableChain.layer(Support).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, engine)))
  return Effect.gen(function*() {
    const id = yield* Support.execute({ ticket: "R1" }, { discard: true })
    expect((yield* pendingWhen(Support, id, (calls) => calls.length > 0)).map((call) => call.callId)).toEqual(["s1"])
    yield* DurableChain.decide(Support, id, { s1: Approval.edit({ data: awkward }) })
    expect((yield* pendingWhen(Support, id, (calls) => calls.length > 0)).map((call) => call.callId)).toEqual(["f1"])
    yield* DurableChain.supply(Support, id, { f1: result })
    const done = yield* Effect.exit(Effect.timeout(Support.execute({ ticket: "R1" }), "20 seconds"))
    expect(Exit.isSuccess(done) ? done.value._tag : String(done.cause)).toBe("Finished")
    expect(ran).toEqual([canonical(awkward)])
  }).pipe(Effect.provide(live))
}

describe("awkward JSON answers survive the engine's round trip", () => {
  it.live("on SQLite: the edited and the supplied value reach the run as recorded", () => {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-roundtrip-"))
    return scenario("RoundTripSqlite", DurableSqlite.runner({ filename: join(dir, "runs.db"), pollInterval: "20 millis" })).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  }, 40_000)

  it.live("on SQLite: a supplied failure reaches the run as recorded", () => {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-roundtrip-"))
    return scenario("FailureSqlite", DurableSqlite.runner({ filename: join(dir, "runs.db"), pollInterval: "20 millis" }), { failure: "no \u0000 page \ud800" }).pipe(
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  }, 40_000)

  it.live("on PostgreSQL: a supplied failure reaches the run as recorded", () =>
    Effect.flatMap(Effect.promise(database), (url) =>
      scenario("FailurePg", DurablePostgres.single({ url: Redacted.make(url), pollInterval: "20 millis" }), { failure: "no \u0000 page \ud800" })), 60_000)

  it.live("on PostgreSQL: the edited and the supplied value reach the run as recorded", () =>
    Effect.flatMap(Effect.promise(database), (url) =>
      scenario("RoundTripPg", DurablePostgres.single({ url: Redacted.make(url), pollInterval: "20 millis" }))), 60_000)
})

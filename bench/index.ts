/**
 * `npm run bench`: the loop's own benchmark, a regression guard for the
 * speed targets. Each measurement runs in a fresh `node --expose-gc`
 * process (bench/workloads/*.ts, one concept per file, each saying what it
 * measures and how), then one table gives every target, its figure, its
 * budget and whether it is met, followed by the cost of durability per store
 * (bench/durable.ts) and the list of missed targets.
 *
 *   npm run bench                        full run (2 to 3 minutes)
 *   npm run bench -- --quick             smoke run (under a minute); its figures mean little
 *   npm run bench -- --only w1,history   some measurements only (ids below; `durable` for the stores)
 *   npm run bench -- --source            run src/ (node --conditions=loopwork-source) instead of dist/
 *
 * A missed target is reported, not failed: the process exits 0. It exits 1
 * when a measurement fails (a crash, or a count check: a loop that drops or
 * repeats a tool result gives no figure).
 *
 * Budgets in µs and MB are this project's shared 2-core VM's; ratios are
 * taken within one run. The comparison with other agent libraries is
 * bench/peers/ (`npm run bench:peers`).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Figures } from "./targets.ts"
import { targets } from "./targets.ts"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const source = argv.includes("--source")
const onlyAt = argv.indexOf("--only")
const stray = argv.filter((arg, i) => arg !== "--quick" && arg !== "--source" && arg !== "--only" && (onlyAt === -1 || i !== onlyAt + 1))
if (stray.length > 0 || (onlyAt !== -1 && argv.length === onlyAt + 1)) {
  console.error(`unknown argument(s) ${stray.map((arg) => `"${arg}"`).join(" ") || "(--only needs a list)"}; usage: node bench/index.ts [--quick] [--source] [--only id,id]`)
  process.exit(2)
}

/** Every measurement: an id, its file in bench/workloads/ and its arguments. */
const jobs: ReadonlyArray<readonly [id: string, file: string, ...args: Array<string>]> = [
  ["w1", "w1.ts", "loopwork"],
  ["w1-floor", "w1.ts", "floor"],
  ["history", "history.ts"],
  ["toolkit", "toolkit-size.ts"],
  ["calls", "calls.ts"],
  ["stream", "stream.ts"],
  ["ensemble", "ensemble.ts"],
  ["w2", "w2.ts", "loopwork"],
  ["w2-floor", "w2.ts", "floor"],
  ["w3", "w3.ts", "loopwork"],
  ["w3-floor", "w3.ts", "floor"],
  ["parked", "parked.ts", "loopwork"],
  ["parked-floor", "parked.ts", "floor"],
  ["mem", "mem.ts"],
  ["steps", "steps.ts"]
]
const ids = [...jobs.map(([id]) => id), "durable"]
const only = onlyAt === -1 ? ids : (argv[onlyAt + 1] ?? "").split(",")
const unknown = only.filter((id) => !ids.includes(id))
if (unknown.length > 0 || only.length === 0) {
  console.error(`--only: unknown ${unknown.map((id) => `"${id}"`).join(", ") || "(empty list)"}; known: ${ids.join(", ")}`)
  process.exit(2)
}

/** Runs one file in a fresh process; its `RESULT` line's JSON, or why there is none. */
const measure = (file: string, args: ReadonlyArray<string>): { readonly json: unknown } | { readonly error: string } => {
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--no-warnings", ...(source ? ["--conditions=loopwork-source"] : []), fileURLToPath(new URL(file, import.meta.url)), ...args, ...(quick ? ["--quick"] : [])],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 16 * 2 ** 20 }
  )
  const line = (child.stdout ?? "").split("\n").find((l) => l.startsWith("RESULT "))
  if (child.status === 0 && line !== undefined) return { json: JSON.parse(line.slice("RESULT ".length)) }
  return { error: child.error?.message ?? (child.signal !== null ? `killed by ${child.signal}` : `exit code ${child.status}, no RESULT line`) }
}

const results = new Map<string, unknown>()
const failed: Array<string> = []
for (const [id, file, ...args] of jobs) {
  if (!only.includes(id)) continue
  process.stderr.write(`${id}…\n`)
  const started = performance.now()
  const outcome = measure(`./workloads/${file}`, args)
  if ("error" in outcome) {
    failed.push(id)
    process.stderr.write(`${id} FAILED: ${outcome.error}\n`)
  } else {
    results.set(id, (outcome.json as { readonly result: unknown }).result)
    process.stderr.write(`${id}: ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  }
}

console.log(`\nloopwork benchmark, Node ${process.version}, ${source ? "src/" : "dist/"}${quick ? " (QUICK: the figures mean little)" : ""}\n`)
const rows = targets(results, failed).filter((row) => row.figure !== "not run")
if (rows.length > 0) {
  console.log("| target | figure | budget | met |")
  console.log("|---|---|---|---|")
  for (const row of rows) console.log(`| ${row.target} | ${row.figure} | ${row.budget} | ${row.met} |`)
}

const history = results.get("history") as Figures["history"] | undefined
if (history !== undefined) {
  const steps = [history.h1, history.h10, history.h100, history.h500].map((h) => h.usPerStep)
  console.log("\n| W1 shape, µs/step by rounds | 1 | 10 | 100 | 500 |\n|---|---|---|---|---|")
  console.log(`| µs/step | ${steps.map((s) => s.toFixed(2)).join(" | ")} |`)
  console.log(`| × 1 round | ${steps.map((s) => `${(s / steps[0]).toFixed(2)}×`).join(" | ")} |`)
  console.log(`| × 10 rounds | ${steps.map((s) => `${(s / steps[1]).toFixed(2)}×`).join(" | ")} |`)
}
const w1 = results.get("w1") as Figures["w1"] | undefined
if (w1 !== undefined) console.log(`\nW1 batches (µs/step): ${w1.batches.join(", ")}`)
const steps = results.get("steps") as Figures["steps"] | undefined
if (steps !== undefined) {
  console.log(`steps of effect's runtime (a count, not a time): ${steps.runPerStep} per W1 step through Chain.run, ${steps.streamPerStep} through Chain.stream; ${steps.perExtraCall} per extra Effect.sync call`)
}
const mem = results.get("mem") as Figures["mem"] | undefined
if (mem !== undefined) console.log(`heap after GC every ${(mem.chains / 10).toLocaleString("en-US")} chains (MB): ${mem.heapAfterGcMB.join(", ")}`)

// Durability's cost (bench/durable.ts): ms per recorded step and short runs per second on each store.
if (only.includes("durable")) {
  process.stderr.write("durable stores…\n")
  const durable = measure("./durable.ts", [])
  if ("error" in durable) {
    failed.push("durable")
    process.stderr.write(`durable FAILED: ${durable.error}\n`)
  } else {
    const { langgraph, ...stores } = durable.json as Readonly<
      Record<string, { msPerStep: number; msPerRun: number; runsPerS: number; sync?: { msPerRun: number } | null }>
    >
    // The design prototype's figures on this VM (../shared/design/durable.md), upper ends.
    const prototype = new Map([["memory", { ms: 0.2, runs: 1050 }], ["sqlite", { ms: 2.8, runs: 165 }], ["sqlite-normal", { ms: 2.8, runs: 165 }], ["postgres", { ms: 6, runs: 100 }], ["postgres-normal", { ms: 6, runs: 100 }]])
    console.log("\n| durable store | ms per recorded step | prototype | ms per 5-round run | short runs/s | prototype |")
    console.log("|---|---|---|---|---|---|")
    for (const [store, figures] of Object.entries(stores)) {
      const target = prototype.get(store)
      console.log(`| ${store} | ${figures.msPerStep} | ≤ ${target?.ms ?? "?"} | ${figures.msPerRun} | ${figures.runsPerS} | ≥ ${target?.runs ?? "?"} |`)
    }
    if (langgraph !== undefined) {
      const sync = langgraph.sync ?? undefined
      console.log(`| LangGraph + PostgresSaver (same server), durability "async" (its default) | | | ${langgraph.msPerRun} | | |`)
      if (sync !== undefined) console.log(`| LangGraph + PostgresSaver (same server), durability "sync" | | | ${sync.msPerRun} | | |`)
      // Issue 15's target: a durable step on PostgreSQL costs less than LangGraph's checkpointer.
      const over = (store: string, theirs: number) => stores[store] === undefined ? "not run" : `${(stores[store].msPerRun / theirs).toFixed(2)}×`
      console.log(`\nPostgreSQL per 5-round run over LangGraph's (target < 1×): ${over("postgres", langgraph.msPerRun)} by default, ${over("postgres-normal", langgraph.msPerRun)} with synchronous: "normal"` +
        (sync === undefined ? "" : `; over its "sync": ${over("postgres", sync.msPerRun)} and ${over("postgres-normal", sync.msPerRun)}`))
    }
  }
}

const missed = rows.filter((row) => row.met === "NO").map((row) => row.target)
console.log(`\nmissed targets (${missed.length} of ${rows.filter((row) => row.met === "yes" || row.met === "NO").length}): ${missed.length === 0 ? "none" : missed.join("; ")}`)
if (failed.length > 0) {
  console.error(`failed measurements: ${failed.join(", ")} (see above)`)
  process.exit(1)
}

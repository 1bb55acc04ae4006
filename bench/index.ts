/**
 * `npm run bench`: the loop's own benchmark. Runs W1, W2, W3 and the memory
 * check for loopwork and for a plain hand-written loop (the floor), each in
 * a fresh `node --expose-gc` process (bench/workload.ts), prints a table and
 * checks the budgets of the speed issue.
 *
 *   npm run bench              full run (~1 min)
 *   npm run bench -- --quick   smoke run; its numbers mean nothing
 *
 * The cost of durability per store is bench/durable.ts (run last).
 *
 * The comparison with other agent libraries is bench/peers/ (`npm run
 * bench:peers`, see the README's Performance section).
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const quick = process.argv.includes("--quick")
const script = fileURLToPath(new URL("./workload.ts", import.meta.url))

interface Row {
  readonly impl: string
  readonly workload: string
  readonly result: Record<string, unknown>
}

const run = (impl: string, workload: string): Row => {
  const out = execFileSync(process.execPath, ["--expose-gc", script, impl, workload, ...(quick ? ["--quick"] : [])], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  const line = out.split("\n").find((l) => l.startsWith("RESULT "))
  if (line === undefined) throw new Error(`${impl} ${workload}: no RESULT line`)
  return JSON.parse(line.slice("RESULT ".length)) as Row
}

const rows: Array<Row> = []
for (const workload of ["w1", "w2", "w3", "mem"]) {
  for (const impl of workload === "mem" ? ["loopwork"] : ["loopwork", "floor"]) {
    process.stderr.write(`${impl} ${workload}…\n`)
    rows.push(run(impl, workload))
  }
}
const get = (impl: string, workload: string) => rows.find((r) => r.impl === impl && r.workload === workload)!.result

const node22 = Number(process.versions.node.split(".")[0]) >= 22
const w1 = get("loopwork", "w1") as { usPerStep: number; batches: Array<number> }
const w2 = get("loopwork", "w2") as { wallMs: number; peakConcurrentTools: number }
const w3 = get("loopwork", "w3") as { wallS: number; peakRssMB: number; peakHeapMB: number }
const mem = get("loopwork", "mem") as { chains: number; heapAfterGcMB: Array<number>; growthMB: number }
const f1 = get("floor", "w1") as { usPerStep: number }
const f2 = get("floor", "w2") as { wallMs: number }
const f3 = get("floor", "w3") as { wallS: number; peakRssMB: number }

console.log(`\nloopwork loop benchmark, Node ${process.version}${quick ? " (quick: numbers mean nothing)" : ""}\n`)
console.log("| workload | loopwork | floor (plain loop) | budget | met |")
console.log("|---|---|---|---|---|")
const w1Budget = node22 ? 10 : 20
const line = (name: string, ours: string, floor: string, budget: string, met: boolean) =>
  console.log(`| ${name} | ${ours} | ${floor} | ${budget} | ${met ? "yes" : "NO"} |`)
line("W1 µs/step", w1.usPerStep.toFixed(2), f1.usPerStep.toFixed(2), `≤ ${w1Budget}`, w1.usPerStep <= w1Budget)
line("W2 wall (8 × 50 ms tools)", `${w2.wallMs} ms (${w2.peakConcurrentTools}/8 at once)`, `${f2.wallMs} ms`, "≤ 55 ms", w2.wallMs <= 55)
line("W3 wall (1000 chains)", `${w3.wallS} s`, `${f3.wallS} s`, "≤ 0.5 s", w3.wallS <= 0.5)
line("W3 peak RSS", `${w3.peakRssMB} MB`, `${f3.peakRssMB} MB`, "≤ 150 MB", w3.peakRssMB <= 150)
line(
  `heap after GC, ${mem.chains.toLocaleString("en-US")} chains`,
  `${mem.heapAfterGcMB[0]} → ${mem.heapAfterGcMB[mem.heapAfterGcMB.length - 1]} MB`,
  "",
  "flat (≤ 1 MB growth)",
  mem.growthMB <= 1
)
console.log(`\nW1 batches (µs/step): ${w1.batches.join(", ")}`)
console.log(`heap after GC every ${mem.chains / 10} chains (MB): ${mem.heapAfterGcMB.join(", ")}`)

// Durability's cost (bench/durable.ts): ms per recorded step and short runs per second on each store.
process.stderr.write("durable stores…\n")
const durableOut = execFileSync(process.execPath, ["--no-warnings", fileURLToPath(new URL("./durable.ts", import.meta.url)), ...(quick ? ["--quick"] : [])], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"]
})
const durableLine = durableOut.split("\n").find((l) => l.startsWith("RESULT "))
if (durableLine === undefined) throw new Error("durable: no RESULT line")
const { langgraph, ...durable } = JSON.parse(durableLine.slice("RESULT ".length)) as Record<string, { msPerStep: number; msPerRun: number; runsPerS: number }>
// The design prototype's figures on this VM (../shared/design/durable.md), upper ends.
const prototype = new Map([["memory", { ms: 0.2, runs: 1050 }], ["sqlite", { ms: 2.8, runs: 165 }], ["sqlite-normal", { ms: 2.8, runs: 165 }], ["postgres", { ms: 6, runs: 100 }]])
console.log("\n| durable store | ms per recorded step | prototype | ms per 5-round run | short runs/s | prototype |")
console.log("|---|---|---|---|---|---|")
for (const [store, figures] of Object.entries(durable)) {
  const target = prototype.get(store)
  console.log(`| ${store} | ${figures.msPerStep} | ≤ ${target?.ms ?? "?"} | ${figures.msPerRun} | ${figures.runsPerS} | ≥ ${target?.runs ?? "?"} |`)
}
if (langgraph !== undefined) console.log(`| LangGraph + PostgresSaver (same server) | | | ${langgraph.msPerRun} | | |`)

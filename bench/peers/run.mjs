#!/usr/bin/env node
// The peers benchmark: every adapter on every workload, each pair in a fresh
// Node process (measure.mjs), then the tables.
//
//   node run.mjs                          all rows, W1–W3 and the W1 scaling table, one run
//   node run.mjs --quick                  a smoke test in about two minutes; its figures mean little
//   node run.mjs --runs 3 --out results/peers.json
//   node run.mjs --only loopwork-ai-sdk,ai-sdk --workloads w1,scaling
//
// Options:
//   --quick             short warm-ups and batches, 200 chains in W3
//   --runs N            repeat everything N times (default 1); with N > 1 a table of medians follows
//   --only a,b          adapter names (see the list printed at the start); an unknown name is an error
//   --workloads a,b     among w1, w2, w3, scaling (default: all)
//   --scaling a,b       the rows of the scaling table (default: floor, loopwork-scripted, loopwork-ai-sdk, ai-sdk),
//                       narrowed by --only
//   --out FILE          write every figure, the versions and the machine to FILE as JSON
//   --node PATH         run the measured processes with this Node binary (default: the one running run.mjs)
//   --timeout S         seconds allowed to one process (default 900)
//
// After the tables come the speed issue's targets on the AI SDK stub (W1
// against the AI SDK, and loopwork-ai-sdk's history), each "met" or "NO".
//
// Exits with 1 when a row fails (a crash, a timeout, a failed count check): its
// cell says FAILED and no figure is given for it. A missed target does not.

import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { adapterNames, loadAdapter, SCALING_DEFAULT } from "./lib/adapters.mjs"
import { SCALING_ROUNDS, scalingId, WORKLOADS } from "./lib/script.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const WORKLOAD_CHOICES = ["w1", "w2", "w3", "scaling"]

// -- arguments ---------------------------------------------------------------------

const listOf = (flag, value, known) => {
  const names = value.split(",").map((name) => name.trim()).filter((name) => name !== "")
  const unknown = names.filter((name) => !known.includes(name))
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`${flag}: unknown ${unknown.length > 0 ? unknown.map((n) => `"${n}"`).join(", ") : "(empty list)"}; known: ${known.join(", ")}`)
  }
  return names
}

const parseArgs = (argv, known) => {
  const options = {
    quick: false,
    runs: 1,
    only: known,
    workloads: WORKLOAD_CHOICES,
    scaling: SCALING_DEFAULT.filter((name) => known.includes(name)),
    out: undefined,
    node: process.execPath,
    timeoutS: 900
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = () => {
      const next = argv[++i]
      if (next === undefined || next.startsWith("--")) throw new Error(`${flag} needs a value`)
      return next
    }
    const positive = (text) => {
      const n = Number(text)
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a whole number above 0, got "${text}"`)
      return n
    }
    if (flag === "--quick") options.quick = true
    else if (flag === "--runs") options.runs = positive(value())
    else if (flag === "--only") options.only = listOf(flag, value(), known)
    else if (flag === "--workloads") options.workloads = listOf(flag, value(), WORKLOAD_CHOICES)
    else if (flag === "--scaling") options.scaling = listOf(flag, value(), known)
    else if (flag === "--out") options.out = path.resolve(value())
    else if (flag === "--node") options.node = value()
    else if (flag === "--timeout") options.timeoutS = positive(value())
    else if (flag === "--help" || flag === "-h") {
      const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n")
      const usage = lines.slice(1, lines.findIndex((line, i) => i > 0 && !line.startsWith("//")))
      console.log(usage.map((line) => line.replace(/^\/\/ ?/, "")).join("\n"))
      process.exit(0)
    } else throw new Error(`unknown argument "${flag}" (see --help)`)
  }
  // table order, whatever order the lists were given in
  options.only = known.filter((name) => options.only.includes(name))
  options.scaling = options.only.filter((name) => options.scaling.includes(name))
  return options
}

// -- the installed copies ------------------------------------------------------------

const hashTree = (root) => {
  const hash = createHash("sha256")
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else {
        hash.update(path.relative(root, full)).update("\0").update(readFileSync(full)).update("\0")
      }
    }
  }
  walk(root)
  return hash.digest("hex")
}

/**
 * Refuses to measure what is not pinned: every dependency at its version in
 * package.json, and loopwork's installed copy identical to the repository's
 * current build (npm ci packs ../.. into node_modules/loopwork).
 */
const checkInstall = () => {
  const own = JSON.parse(readFileSync(path.join(here, "package.json"), "utf8"))
  const problems = []
  for (const [name, wanted] of Object.entries(own.dependencies)) {
    const file = path.join(here, "node_modules", name, "package.json")
    if (!existsSync(file)) {
      problems.push(`${name} is not installed`)
      continue
    }
    const installed = JSON.parse(readFileSync(file, "utf8")).version
    if (!wanted.startsWith("file:") && installed !== wanted) problems.push(`${name} ${installed} is installed, package.json pins ${wanted}`)
  }
  if (problems.length > 0) throw new Error(`${problems.join("; ")}: run \`npm ci\` in bench/peers`)
  const build = path.join(here, "..", "..", "dist")
  if (!existsSync(build)) throw new Error("the repository has no build: run `npm run build` at its root, then `npm ci` in bench/peers")
  if (hashTree(build) !== hashTree(path.join(here, "node_modules", "loopwork", "dist"))) {
    throw new Error("bench/peers/node_modules/loopwork is not the repository's current build (../../dist): run `npm ci` in bench/peers again")
  }
}

const versionOf = (name) => JSON.parse(readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8")).version

// -- measuring ------------------------------------------------------------------------

const measure = (options, adapter, workload) => {
  const started = Date.now()
  const child = spawnSync(options.node, ["--expose-gc", path.join(here, "measure.mjs"), adapter, workload, ...(options.quick ? ["--quick"] : [])], {
    cwd: here,
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
    timeout: options.timeoutS * 1000,
    env: { ...process.env, NODE_ENV: "production" }
  })
  const seconds = (Date.now() - started) / 1000
  const line = (child.stdout ?? "").split("\n").find((text) => text.startsWith("RESULT "))
  if (child.status === 0 && line !== undefined) return { ok: true, seconds, ...JSON.parse(line.slice("RESULT ".length)) }
  const why = child.error !== undefined ? child.error.message : child.signal !== null ? `killed by ${child.signal}` : `exit code ${child.status}`
  const tail = (child.stderr ?? "").trim().split("\n").slice(-12).join("\n")
  return { ok: false, adapter, workload, seconds, error: why, stderrTail: tail }
}

const summary = (result) => {
  const r = result.result
  if (result.workload === "w2") return `${r.wallMs} ms, ${r.peakConcurrentTools}/${r.callsPerAnswer} tools at once`
  if (result.workload === "w3") return `${r.wallS} s, peak heap ${r.peakHeapMB} MB, peak RSS ${r.peakRssMB} MB`
  return `${r.usPerStep} µs/step (batches ${r.minUsPerStep}–${r.maxUsPerStep}, ${r.measuredChains} chains)`
}

// -- tables -----------------------------------------------------------------------------

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** figure(adapter, workload, field): the median over the given runs, undefined when missing, null when one failed. */
const figures = (results) => (adapter, workload, field) => {
  const mine = results.filter((r) => r.adapter === adapter && r.workload === workload)
  if (mine.length === 0) return undefined
  if (mine.some((r) => !r.ok)) return null
  return median(mine.map((r) => r.result[field]))
}

const fmt = (x, digits) => (x === undefined ? "–" : x === null ? "FAILED" : x.toFixed(digits))
const micro = (x) => fmt(x, x !== undefined && x !== null && x < 10 ? 2 : 1)
const ratio = (x, base) => (typeof x === "number" && typeof base === "number" && base > 0 ? `${(x / base).toFixed(x / base < 10 ? 2 : 1)}×` : "–")
const compared = ({ baseline, sameStub }, name) => (baseline === name ? "(itself)" : `${baseline}${sameStub ? "" : " (nearest stub)"}`)

const render = (header, rows) => {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i].length)))
  const line = (cells) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n")
}

const mainTable = (meta, names, figure) => {
  const header = ["row", "compared with", "W1 µs/step", "W1 ×", "W2 ms (tools at once)", "W3 wall s", "W3 ×", "W3 peak heap MB", "W3 peak RSS MB"]
  const rows = names.map((name) => {
    const { baseline } = meta.get(name)
    const w1 = figure(name, "w1", "usPerStep")
    const w3 = figure(name, "w3", "wallS")
    const tools = figure(name, "w2", "peakConcurrentTools")
    return [
      name,
      compared(meta.get(name), name),
      micro(w1),
      ratio(w1, figure(baseline, "w1", "usPerStep")),
      `${fmt(figure(name, "w2", "wallMs"), 1)}${typeof tools === "number" ? ` (${tools}/8)` : ""}`,
      fmt(w3, 2),
      ratio(w3, figure(baseline, "w3", "wallS")),
      fmt(figure(name, "w3", "peakHeapMB"), 0),
      fmt(figure(name, "w3", "peakRssMB"), 0)
    ]
  })
  return render(header, rows)
}

const scalingTable = (meta, names, figure) => {
  const header = ["W1 µs/step by rounds", "compared with", ...SCALING_ROUNDS.map((n) => `${n} round${n === 1 ? "" : "s"}`)]
  const rows = names.map((name) => {
    const { baseline } = meta.get(name)
    return [name, compared(meta.get(name), name), ...SCALING_ROUNDS.map((n) => {
      const x = figure(name, scalingId(n), "usPerStep")
      const base = baseline === name ? undefined : figure(baseline, scalingId(n), "usPerStep")
      return base === undefined || base === null ? micro(x) : `${micro(x)} (${ratio(x, base)})`
    })]
  })
  return render(header, rows)
}

/** One target line: its figure and "met" or "NO"; why not when a figure is missing (undefined) or failed (null). */
const targetLine = (title, needs, xs, ratioOf, budget, detail) => {
  if (xs.some((x) => x === null)) return `${title}: FAILED`
  if (xs.some((x) => x === undefined)) return `${title}: not measured (needs ${needs})`
  const r = ratioOf(...xs)
  return `${title}: ${r.toFixed(2)}× (${detail(...xs)}): ${budget(r) ? "met" : "NO"}`
}

/** The speed issue's targets for the rows on the AI SDK stub. */
const targetLines = (figure) => [
  "Targets:",
  `  ${targetLine(
    "W1 through fromAiSdk ≥ 15× faster than the AI SDK on the same stub",
    "the rows loopwork-ai-sdk and ai-sdk, workload w1",
    [figure("ai-sdk", "w1", "usPerStep"), figure("loopwork-ai-sdk", "w1", "usPerStep")],
    (theirs, ours) => theirs / ours,
    (r) => r >= 15,
    (theirs, ours) => `ai-sdk ${micro(theirs)} / loopwork-ai-sdk ${micro(ours)} µs/step`
  )}`,
  `  ${targetLine(
    "loopwork-ai-sdk history: µs/step with 500 rounds ≤ 1.1× with 1 round",
    "the row loopwork-ai-sdk in the scaling table: --workloads scaling",
    [figure("loopwork-ai-sdk", scalingId(500), "usPerStep"), figure("loopwork-ai-sdk", scalingId(1), "usPerStep")],
    (long, short) => long / short,
    (r) => r <= 1.1,
    (long, short) => `${micro(short)} → ${micro(long)} µs/step`
  )}`
].join("\n")

const tables = (options, meta, results) => {
  const figure = figures(results)
  const parts = []
  if (options.workloads.some((w) => w !== "scaling")) parts.push(mainTable(meta, options.only, figure))
  if (options.workloads.includes("scaling") && options.scaling.length > 0) parts.push(scalingTable(meta, options.scaling, figure))
  parts.push(targetLines(figure))
  return parts.join("\n\n")
}

// -- main ---------------------------------------------------------------------------------

const main = async () => {
  const known = adapterNames()
  const options = parseArgs(process.argv.slice(2), known)
  checkInstall()
  const meta = new Map()
  for (const name of known) {
    const adapter = await loadAdapter(name)
    meta.set(name, {
      label: adapter.label,
      stub: adapter.stub,
      baseline: adapter.baseline,
      sameStub: adapter.sameStub,
      notes: adapter.notes,
      packages: Object.fromEntries(adapter.packages.map((p) => [p, versionOf(p)]))
    })
  }
  for (const name of options.only) {
    const { baseline } = meta.get(name)
    if (!options.only.includes(baseline)) console.log(`note: ${name} is compared with ${baseline}, which --only leaves out: no ratio`)
  }

  const jobs = []
  for (const workload of options.workloads) {
    if (workload !== "scaling") for (const name of options.only) jobs.push([name, workload])
    else for (const n of SCALING_ROUNDS) for (const name of options.scaling) jobs.push([name, scalingId(n)])
  }
  const childNode = spawnSync(options.node, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "unknown"
  const machine = {
    node: childNode,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGB: Math.round(os.totalmem() / 2 ** 30)
  }
  console.log(`peers benchmark: ${jobs.length} processes × ${options.runs} run(s), Node ${machine.node}, ${machine.cores} cores (${machine.cpu})${options.quick ? ", QUICK: figures are indicative only" : ""}`)
  for (const name of options.only) {
    const { packages } = meta.get(name)
    console.log(`  ${name.padEnd(19)} ${Object.entries(packages).map(([p, v]) => `${p}@${v}`).join(" ") || "(no package)"}`)
  }

  const results = []
  for (let run = 1; run <= options.runs; run++) {
    for (const [name, workload] of jobs) {
      process.stdout.write(`run ${run}/${options.runs} ${workload.padEnd(4)} ${name.padEnd(19)} `)
      const result = { run, ...measure(options, name, workload) }
      results.push(result)
      console.log(result.ok
        ? `${result.seconds.toFixed(1).padStart(5)} s  ${summary(result)}`
        : `FAILED (${result.error}) after ${result.seconds.toFixed(1)} s\n${result.stderrTail.replace(/^/gm, "    ")}`)
    }
    console.log(`\nRun ${run}${options.quick ? " (quick)" : ""}:\n${tables(options, meta, results.filter((r) => r.run === run))}\n`)
  }
  if (options.runs > 1) console.log(`Median of ${options.runs} runs:\n${tables(options, meta, results)}\n`)
  console.log("×: this row's figure over the loopwork row it is compared with (same stub: the fair ratio).")

  if (options.out !== undefined) {
    mkdirSync(path.dirname(options.out), { recursive: true })
    const workloads = { ...WORKLOADS }
    for (const n of SCALING_ROUNDS) workloads[scalingId(n)] = { title: `W1 with ${n} rounds`, rounds: n, calls: 1, modelMs: 0, toolMs: 0 }
    // The shape of ../shared/bench-peers' results (env, adapters[].name, runs[].results), so bench/chart.ts reads it.
    writeFileSync(options.out, `${JSON.stringify({
      createdAt: new Date().toISOString(),
      env: { ...machine, quick: options.quick },
      options: { ...options, out: undefined },
      loopwork: versionOf("loopwork"),
      adapters: options.only.map((name) => ({ name, ...meta.get(name) })),
      workloads,
      runs: Array.from({ length: options.runs }, (_, i) => ({ run: i + 1, results: results.filter((r) => r.run === i + 1) }))
    }, null, 2)}\n`)
    console.log(`results written to ${options.out}`)
  }
  const failed = results.filter((r) => !r.ok).length
  if (failed > 0) {
    console.error(`${failed} process(es) failed; see above`)
    process.exit(1)
  }
}

main().catch((error) => {
  console.error(`run.mjs: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})

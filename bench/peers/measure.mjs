// One adapter, one workload, in this process (run.mjs starts a fresh process
// for each pair, so no row pays for another's modules, JIT state or garbage):
//
//   node --expose-gc measure.mjs <adapter> <w1|w2|w3|hN> [--quick]
//
// Prints progress on stderr and one line `RESULT <json>` on stdout. Exits with
// 1 when a run fails or a count check does not hold.

import { loadAdapter } from "./lib/adapters.mjs"
import { FINAL, makeScript, newCounters, sleep, specOf, stepsPerChain } from "./lib/script.mjs"

const quick = process.argv.includes("--quick")
const [name, workload] = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
const spec = workload === undefined ? undefined : specOf(workload)
if (name === undefined || spec === undefined) {
  console.error("usage: node --expose-gc measure.mjs <adapter> <w1|w2|w3|hN> [--quick]")
  process.exit(2)
}

const gc = globalThis.gc ?? (() => {})
const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits
const mb = (bytes) => round(bytes / 2 ** 20, 1)
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

const counters = newCounters()
const script = makeScript(spec, counters)

/** Checks that `chains` whole chains ran since the last check, then resets the counters. */
const check = (phase, chains, texts) => {
  const problems = []
  const modelCalls = chains * stepsPerChain(spec)
  const toolCalls = chains * spec.rounds * spec.calls
  if (counters.modelCalls !== modelCalls) problems.push(`${counters.modelCalls} model calls, expected ${modelCalls}`)
  if (counters.toolCalls !== toolCalls) problems.push(`${counters.toolCalls} tool calls, expected ${toolCalls}`)
  if (counters.running !== 0) problems.push(`${counters.running} tool calls still running`)
  if (texts.length !== chains) problems.push(`${texts.length} results for ${chains} chains`)
  const wrong = texts.find((text) => text !== FINAL)
  if (wrong !== undefined) problems.push(`a chain ended with ${JSON.stringify(wrong)}, expected ${JSON.stringify(FINAL)}`)
  if (problems.length > 0) throw new Error(`${name} ${workload}, ${phase}: ${problems.join("; ")}`)
  counters.modelCalls = 0
  counters.toolCalls = 0
  counters.peakRunning = 0
}

/** Chains one after another until both `minChains` and `minMs` are reached (or `maxMs` passed); checked. */
const sequential = async (runner, phase, minChains, minMs, maxMs = Infinity) => {
  const texts = []
  const start = performance.now()
  let elapsed = 0
  while ((texts.length < minChains || elapsed < minMs) && (texts.length === 0 || elapsed < maxMs)) {
    texts.push(await runner.runChain())
    elapsed = performance.now() - start
  }
  check(phase, texts.length, texts)
  return { chains: texts.length, ms: elapsed }
}

const burst = async (runner, phase, chains) => {
  const texts = await Promise.all(Array.from({ length: chains }, () => runner.runChain()))
  check(phase, chains, texts)
}

/**
 * W1 and the scaling table: µs per loop step, one step being one model call
 * and the tool calls it asked for. Warm-up first; then batches of at least
 * `batchMs` each; the figure is the median batch. No forced GC between
 * batches: each batch pays for the garbage it makes.
 */
const steps = async (runner) => {
  const perChain = stepsPerChain(spec)
  const minSteps = (n) => Math.max(1, Math.ceil(n / perChain))
  const warm = quick
    ? await sequential(runner, "warm-up", minSteps(2_200), 300, 3_000)
    : await sequential(runner, "warm-up", minSteps(11_000), 5_000, 20_000)
  const batches = []
  let measured = 0
  for (let batch = 0; batch < (quick ? 3 : 7); batch++) {
    const { chains, ms } = await sequential(runner, `batch ${batch + 1}`, minSteps(quick ? 220 : 1_100), quick ? 100 : 1_000)
    batches.push((ms * 1000) / (chains * perChain))
    measured += chains
  }
  const usPerStep = median(batches)
  return {
    usPerStep: round(usPerStep, 3),
    stepsPerSecond: Math.round(1e6 / usPerStep),
    batchUsPerStep: batches.map((x) => round(x, 3)),
    minUsPerStep: round(Math.min(...batches), 3),
    maxUsPerStep: round(Math.max(...batches), 3),
    stepsPerChain: perChain,
    measuredChains: measured,
    warmupChains: warm.chains
  }
}

/** W2: the wall time of a chain whose one answer asks for 8 calls of 50 ms, and how many ran at once. */
const w2 = async (runner) => {
  await sequential(runner, "warm-up", quick ? 3 : 20, 0)
  const walls = []
  const peaks = []
  for (let i = 0; i < (quick ? 5 : 9); i++) {
    const start = performance.now()
    const text = await runner.runChain()
    walls.push(performance.now() - start)
    peaks.push(counters.peakRunning)
    check(`chain ${i + 1}`, 1, [text])
  }
  return {
    wallMs: round(median(walls), 1),
    minWallMs: round(Math.min(...walls), 1),
    maxWallMs: round(Math.max(...walls), 1),
    peakConcurrentTools: Math.min(...peaks),
    callsPerAnswer: spec.calls,
    idealMs: spec.toolMs
  }
}

/** W3: 1,000 chains started at once; the burst's wall time, the heap and RSS around it. */
const w3 = async (runner) => {
  const chains = quick ? 200 : 1000
  const warmBurst = quick ? 50 : 100
  let warmed = 0
  for (const start = performance.now(); warmed < (quick ? 100 : 300) || performance.now() - start < (quick ? 200 : 1_000);) {
    await burst(runner, "warm-up", warmBurst)
    warmed += warmBurst
  }
  gc()
  await sleep(20)
  gc()
  const before = process.memoryUsage()
  let peakHeap = before.heapUsed
  let peakRss = before.rss
  const sample = () => {
    const now = process.memoryUsage()
    if (now.heapUsed > peakHeap) peakHeap = now.heapUsed
    if (now.rss > peakRss) peakRss = now.rss
  }
  const sampler = setInterval(sample, 2)
  const start = performance.now()
  await burst(runner, "burst", chains)
  const wallMs = performance.now() - start
  clearInterval(sampler)
  sample()
  return {
    chains,
    wallS: round(wallMs / 1000, 3),
    idealS: round((stepsPerChain(spec) * spec.modelMs) / 1000, 3),
    peakHeapMB: mb(peakHeap),
    heapBeforeMB: mb(before.heapUsed),
    peakRssMB: mb(Math.max(peakRss, process.resourceUsage().maxRSS * 1024)),
    rssBeforeMB: mb(before.rss),
    warmupChains: warmed
  }
}

const adapter = await loadAdapter(name)
if (globalThis.gc === undefined) console.error("measure.mjs: run node with --expose-gc, or W3's memory figures carry old garbage")
const runner = await adapter.setup({ spec, script })
console.error(`[${name}] ${workload}: ${spec.title}${quick ? " (quick)" : ""}`)
try {
  const result = await (workload === "w2" ? w2 : workload === "w3" ? w3 : steps)(runner)
  await runner.dispose?.()
  const { title: _title, ...shape } = spec
  process.stdout.write(`RESULT ${JSON.stringify({ adapter: name, workload, quick, spec: shape, result })}\n`)
  process.exit(0)
} catch (error) {
  console.error(error?.stack ?? String(error))
  process.exit(1)
}

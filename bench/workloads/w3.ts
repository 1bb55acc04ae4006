/**
 * W3, many chains at once (targets: ≤ 0.15 s wall, ≤ 120 MB peak RSS):
 * 1,000 chains started together, 5 rounds of 1 echo call each, then text,
 * 10 ms per model call (a timer), so the ideal wall time is 6 × 10 ms.
 *
 *   node --expose-gc bench/workloads/w3.ts <loopwork|floor> [--quick]
 *
 * After warm-up bursts and a forced GC: the burst's wall time, the peak
 * `heapUsed` (sampled every 2 ms) and the process's peak RSS. That RSS
 * includes Node, its TypeScript loader and the modules loaded, so the RSS
 * once the modules are loaded, before any chain, is given beside it
 * (`loadedRssMB`). The floor's process loads neither effect nor loopwork.
 */
import { gc, mb, quick, report, round } from "./lib/measure.ts"
import { runnerFor } from "./lib/runners.ts"
import { makeScript } from "./lib/script.ts"

const impl = process.argv[2]
if (impl !== "loopwork" && impl !== "floor") {
  console.error("usage: node --expose-gc bench/workloads/w3.ts <loopwork|floor> [--quick]")
  process.exit(2)
}
const script = makeScript(`${impl} w3`, { rounds: 5, calls: 1, modelMs: 10, toolMs: 0 })
const runner = await runnerFor(impl, script)
const loadedRssMB = mb(process.resourceUsage().maxRSS * 1024)
const chains = 1000
const burst = async (phase: string, n: number) => {
  await Promise.all(Array.from({ length: n }, () => runner.runChain()))
  script.check(phase, n)
}
for (let warmed = 0, start = performance.now(); warmed < 300 || performance.now() - start < (quick ? 300 : 1000); warmed += 100) {
  await burst("warm-up", 100)
}
gc()
let peakHeap = 0
const sampler = setInterval(() => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
}, 2)
const start = performance.now()
await burst("burst", chains)
const wallS = (performance.now() - start) / 1000
clearInterval(sampler)
await report([{ name: impl, script, runner }], {
  chains,
  wallS: round(wallS, 3),
  peakHeapMB: mb(peakHeap),
  peakRssMB: mb(process.resourceUsage().maxRSS * 1024),
  loadedRssMB
})

/**
 * W2, concurrency (target: ≤ 55 ms): one answer with 8 echo calls of 50 ms
 * each, then text. The calls of one answer should run at once, so a chain
 * takes 50 ms plus the loop's cost; 400 ms would mean one after another.
 *
 *   node --expose-gc bench/workloads/w2.ts <loopwork|floor> [--quick]
 *
 * The median wall time of 9 chains after a warm-up, and the fewest calls
 * that ran at once in any of them (8: all).
 */
import { median, quick, report, round, sequential } from "./lib/measure.ts"
import { runnerFor } from "./lib/runners.ts"
import { makeScript } from "./lib/script.ts"

const impl = process.argv[2]
if (impl !== "loopwork" && impl !== "floor") {
  console.error("usage: node --expose-gc bench/workloads/w2.ts <loopwork|floor> [--quick]")
  process.exit(2)
}
const script = makeScript(`${impl} w2`, { rounds: 1, calls: 8, modelMs: 0, toolMs: 50 })
const variant = { name: impl, script, runner: await runnerFor(impl, script) }
await sequential(variant, "warm-up", quick ? 3 : 20, 0)
const walls: Array<number> = []
let atOnce = script.spec.calls
for (let i = 1; i <= 9; i++) {
  script.resetPeak()
  const { ms } = await sequential(variant, `chain ${i}`, 1, 0)
  walls.push(ms)
  atOnce = Math.min(atOnce, script.peak())
}
await report([variant], { wallMs: round(median(walls), 1), peakConcurrentTools: atOnce, calls: script.spec.calls })

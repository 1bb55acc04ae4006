/**
 * W1, the per-step cost (target: ≤ 1.7 µs per step, and within 8× of the
 * plain loop): 10 rounds of 1 echo call, then text, no latency, one chain
 * after another.
 *
 *   node --expose-gc bench/workloads/w1.ts <loopwork|floor> [--quick]
 *
 * µs per step (one model call plus its tool calls; a chain has 11), the
 * median of 7 batches of ≥ 1 s after a warm-up of ≥ 3 s.
 */
import { perStep, report } from "./lib/measure.ts"
import { runnerFor } from "./lib/runners.ts"
import { makeScript, w1 } from "./lib/script.ts"

const impl = process.argv[2]
if (impl !== "loopwork" && impl !== "floor") {
  console.error("usage: node --expose-gc bench/workloads/w1.ts <loopwork|floor> [--quick]")
  process.exit(2)
}
const script = makeScript(`${impl} w1`, w1)
const variant = { name: impl, script, runner: await runnerFor(impl, script) }
await report([variant], await perStep(variant))

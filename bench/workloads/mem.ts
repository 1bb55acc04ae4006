/**
 * Memory over many chains (target: flat, ≤ 1 MB growth): 100,000 W1
 * chains one after another (20,000 with --quick), the heap measured after a
 * forced GC every tenth of them. A loop that keeps something per chain (a
 * cache, a registry, a listener) grows here.
 *
 *   node --expose-gc bench/workloads/mem.ts [--quick]
 *
 * The growth is from the first checkpoint (after the first tenth, so the
 * code is warm) to the last.
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { gc, mb, quick, report, round } from "./lib/measure.ts"
import { makeScript, w1 } from "./lib/script.ts"

const script = makeScript("mem", w1)
const runner = loopworkRunner(script)
const total = quick ? 20_000 : 100_000
const every = total / 10
const heapAfterGcMB: Array<number> = []
for (let i = 1; i <= total; i++) {
  await runner.runChain()
  if (i % every === 0) {
    script.check(`chains up to ${i}`, every)
    gc()
    heapAfterGcMB.push(mb(process.memoryUsage().heapUsed))
  }
}
await report([{ name: "loopwork", script, runner }], {
  chains: total,
  heapAfterGcMB,
  growthMB: round(heapAfterGcMB[heapAfterGcMB.length - 1] - heapAfterGcMB[0], 1)
})

/**
 * The history target: a step must not cost more as the conversation grows
 * (no quadratic term): W1 with 500 rounds ≤ 1.1× the per-step cost with 1
 * round.
 *
 *   node --expose-gc bench/workloads/history.ts [--quick]
 *
 * W1's shape (1 echo call per round, then text) with 1, 10, 100 and 500
 * rounds, in one process, their batches taking turns (lib/measure.ts). The
 * stub reads only the last message, so its cost does not grow with the
 * history. A 1-round chain has 2 steps, so its per-step figure also carries
 * half of a run's fixed cost; the 10-round figure is given beside it.
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { interleaved, report } from "./lib/measure.ts"
import { makeScript } from "./lib/script.ts"

const variants = [1, 10, 100, 500].map((rounds) => {
  const script = makeScript(`history, ${rounds} rounds`, { rounds, calls: 1, modelMs: 0, toolMs: 0 })
  return { name: `h${rounds}`, script, runner: loopworkRunner(script) }
})
await report(variants, await interleaved(variants))

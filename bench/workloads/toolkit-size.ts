/**
 * The toolkit-size target: a step with a 100-tool toolkit (echo and 99
 * tools the model never calls) ≤ 1.2× a step with echo alone.
 *
 *   node --expose-gc bench/workloads/toolkit-size.ts [--quick]
 *
 * W1 (10 rounds of 1 echo call, then text) with each toolkit, in one
 * process, their batches taking turns (lib/measure.ts). The unused tools
 * have a small struct of parameters each, so a loop that re-converts every
 * tool definition at each step pays for it.
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { interleaved, report } from "./lib/measure.ts"
import { makeScript, w1 } from "./lib/script.ts"

const variants = [1, 100].map((tools) => {
  const script = makeScript(`toolkit of ${tools}`, w1)
  return { name: `tools${tools}`, script, runner: loopworkRunner(script, { tools }) }
})
await report(variants, await interleaved(variants))

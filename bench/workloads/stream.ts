/**
 * What watching costs: `Chain.stream`, drained to its last event (every
 * event goes through the stream; the last one carries the chain's JSON
 * document), ≤ 2× `Chain.run` per step.
 *
 *   node --expose-gc bench/workloads/stream.ts [--quick]
 *
 * W1 (10 rounds of 1 echo call, then text) both ways, in one process, their
 * batches taking turns (lib/measure.ts).
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { interleaved, report } from "./lib/measure.ts"
import { makeScript, w1 } from "./lib/script.ts"

const variants = (["run", "stream"] as const).map((via) => {
  const script = makeScript(`Chain.${via}`, w1)
  return { name: via, script, runner: loopworkRunner(script, { via }) }
})
await report(variants, await interleaved(variants))

/**
 * Steps of effect's runtime per loop step (lib/runtimeSteps.ts): a count,
 * not a time, so it does not move with the host's load. W1 (10 rounds of 1
 * echo call, then text) through `Chain.run` and through a drained
 * `Chain.stream`, and W1 with 8 calls per answer, whose difference gives the
 * steps of each extra call (the echo handler is an `Effect.sync`).
 *
 *   node --expose-gc bench/workloads/steps.ts [--quick]
 *
 * 100 chains of each after 50 to warm up (the count is the same for every
 * chain of a kind; the warm-up only fills the loop's caches).
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { report, round } from "./lib/measure.ts"
import { runtimeSteps } from "./lib/runtimeSteps.ts"
import { makeScript, w1 } from "./lib/script.ts"

const steps = runtimeSteps()
const variants = ([["run", 1], ["stream", 1], ["run", 8]] as const).map(([via, calls]) => {
  const script = makeScript(`steps ${via} ${calls}`, { ...w1, calls })
  return { name: `${via}${calls}`, script, runner: loopworkRunner(script, { via, with: steps.layer }) }
})
const perChain: Record<string, number> = {}
for (const { name, runner, script } of variants) {
  for (let i = 0; i < 50; i++) await runner.runChain()
  script.check("warm-up", 50)
  steps.reset()
  for (let i = 0; i < 100; i++) await runner.runChain()
  perChain[name] = steps.count() / 100
  script.check("count", 100)
}
const stepsPerChain = variants[0].script.stepsPerChain
await report(variants, {
  runPerStep: round(perChain.run1 / stepsPerChain),
  streamPerStep: round(perChain.stream1 / stepsPerChain),
  perExtraCall: round((perChain.run8 - perChain.run1) / (w1.rounds * 7))
})

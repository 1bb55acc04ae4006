/**
 * The calls-per-answer target: each extra tool call in one model answer
 * costs ≤ 1 µs.
 *
 *   node --expose-gc bench/workloads/calls.ts [--quick]
 *
 * W1's shape (10 rounds, then text) with 1 and with 8 echo calls per
 * answer, in one process, their batches taking turns (lib/measure.ts). The
 * cost of an extra call is (µs per chain with 8 − µs per chain with 1) /
 * (10 rounds × 7 extra calls), i.e. the difference per round over 7.
 */
import { loopworkRunner } from "./lib/loopwork.ts"
import { interleaved, report, round } from "./lib/measure.ts"
import { makeScript } from "./lib/script.ts"

const rounds = 10
const variants = [1, 8].map((calls) => {
  const script = makeScript(`${calls} calls per answer`, { rounds, calls, modelMs: 0, toolMs: 0 })
  return { name: `calls${calls}`, script, runner: loopworkRunner(script) }
})
const figures = await interleaved(variants)
const usPerExtraCall = (figures.calls8.usPerChain - figures.calls1.usPerChain) / (rounds * 7)
await report(variants, {
  ...figures,
  usPerRound1: round(figures.calls1.usPerChain / rounds),
  usPerRound8: round(figures.calls8.usPerChain / rounds),
  usPerExtraCall: round(usPerExtraCall, 3)
})

/**
 * Timing and reporting shared by the workloads of `npm run bench`.
 *
 * - `sequential`: chains one after another until both a number of chains
 *   and a time are reached, then the script's counts are checked.
 * - `perStep`: a warm-up, then batches; the figure is the median batch, in
 *   µs per step (one model call plus the tool calls it asked for). No GC is
 *   forced between batches: each batch pays for its own garbage.
 * - `interleaved`: the same for several variants compared by one target, in
 *   one process, their batches taking turns (A B C, B C A, …), so a change
 *   in the machine's load hits every variant alike and the ratio holds.
 * - `report`: prints the one `RESULT <json>` line bench/index.ts reads.
 */
import type { Runner } from "./loopwork.ts"
import type { Script } from "./script.ts"

/** `--quick`: short warm-ups and batches; the figures mean little. */
export const quick = process.argv.includes("--quick")

/** A forced full GC (the process runs with --expose-gc). */
export const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run this workload with node --expose-gc")
  collect()
}

export const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits

export const mb = (bytes: number): number => round(bytes / 2 ** 20, 1)

export const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** One kind of chain: its script (counts) and its runner. */
export interface Variant {
  readonly name: string
  readonly script: Script
  readonly runner: Runner
}

/** Chains one after another until `minChains` and `minMs` are both reached; checked. */
export const sequential = async (variant: Variant, phase: string, minChains: number, minMs: number) => {
  let chains = 0
  const start = performance.now()
  let ms = 0
  while (chains < minChains || ms < minMs) {
    await variant.runner.runChain()
    chains++
    ms = performance.now() - start
  }
  variant.script.check(phase, chains)
  return { chains, ms }
}

/** Chains needed for at least `steps` steps. */
const chainsFor = (variant: Variant, steps: number) => Math.max(1, Math.ceil(steps / variant.script.stepsPerChain))

/** µs per step of one variant: a warm-up, then `quick ? 3 : 7` batches; the median batch. */
export const perStep = async (variant: Variant) => {
  await sequential(variant, "warm-up", chainsFor(variant, quick ? 1_100 : 11_000), quick ? 300 : 3_000)
  const batches: Array<number> = []
  for (let batch = 1; batch <= (quick ? 3 : 7); batch++) {
    const { chains, ms } = await sequential(variant, `batch ${batch}`, chainsFor(variant, 1_100), quick ? 100 : 1_000)
    batches.push((ms * 1000) / (chains * variant.script.stepsPerChain))
  }
  return { usPerStep: round(median(batches), 3), batches: batches.map((x) => round(x)) }
}

/** The figures of one variant of {@link interleaved}. */
export interface Interleaved {
  readonly usPerChain: number
  readonly usPerStep: number
  readonly batchesUsPerChain: ReadonlyArray<number>
}

/**
 * µs per chain and per step of each variant, their batches taking turns:
 * each variant warmed up, then `quick ? 3 : 9` rounds of one batch
 * (≥ `batchMs`, ≥ 1,100 steps) per variant, the order rotating each round.
 */
export const interleaved = async (variants: ReadonlyArray<Variant>, batchMs = quick ? 100 : 400) => {
  for (const variant of variants) await sequential(variant, "warm-up", chainsFor(variant, quick ? 1_100 : 5_500), quick ? 300 : 1_500)
  const times = variants.map((): Array<number> => [])
  const rounds = quick ? 3 : 9
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const i = (r + k) % variants.length
      const { chains, ms } = await sequential(variants[i], `batch ${r + 1}`, chainsFor(variants[i], 1_100), batchMs)
      times[i].push((ms * 1000) / chains)
    }
  }
  const out: Record<string, Interleaved> = {}
  variants.forEach((variant, i) => {
    const usPerChain = median(times[i])
    out[variant.name] = {
      usPerChain: round(usPerChain, 3),
      usPerStep: round(usPerChain / variant.script.stepsPerChain, 3),
      batchesUsPerChain: times[i].map((x) => round(x, 1))
    }
  })
  return out
}

/** Prints `RESULT <json>` and ends the process (the runtimes' handles would keep it alive). */
export const report = async (variants: ReadonlyArray<Variant>, result: Record<string, unknown>): Promise<never> => {
  for (const variant of variants) await variant.runner.dispose()
  console.log(`RESULT ${JSON.stringify({ quick, result })}`)
  process.exit(0)
}

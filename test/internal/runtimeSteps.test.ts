/**
 * The loop's cost in steps of effect's runtime (each primitive a fiber
 * evaluates; bench/workloads/lib/runtimeSteps.ts), a count that does not
 * move with the host's load: a change that adds steps to a loop step, or
 * gives a synchronous tool call a fiber of its own again, fails here
 * instead of hiding in the noise of a timing. The bounds leave a step or
 * two of room over the counts of 2026-11-27 (3.64, 14.45, 0).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loopworkRunner } from "../../bench/workloads/lib/loopwork.ts"
import { runtimeSteps } from "../../bench/workloads/lib/runtimeSteps.ts"
import { makeScript, w1 } from "../../bench/workloads/lib/script.ts"

/** Steps per chain of `chains` chains of W1 with `calls` calls per answer, after a few to warm up. */
const stepsPerChain = async (via: "run" | "stream", calls: number, handler?: "succeed") => {
  const steps = runtimeSteps()
  const script = makeScript(`${via} ${calls}`, { ...w1, calls })
  const runner = loopworkRunner(script, { via, with: steps.layer, ...(handler === undefined ? {} : { handler }) })
  try {
    for (let i = 0; i < 5; i++) await runner.runChain()
    steps.reset()
    for (let i = 0; i < 20; i++) await runner.runChain()
    script.check("counted", 25)
    return steps.count() / 20
  } finally {
    await runner.dispose()
  }
}

describe("steps of effect's runtime", () => {
  it("a W1 step through Chain.run takes at most 4", async () => {
    expect(await stepsPerChain("run", 1) / 11).toBeLessThanOrEqual(4)
  })

  it("a W1 step through a drained Chain.stream takes at most 16", async () => {
    expect(await stepsPerChain("stream", 1) / 11).toBeLessThanOrEqual(16)
  })

  for (const handler of [undefined, "succeed"] as const) {
    it(`an extra call in an answer whose handler is ${handler === undefined ? "an Effect.sync" : "an Effect.succeed"} takes none`, async () => {
      const one = await stepsPerChain("run", 1, handler)
      const eight = await stepsPerChain("run", 8, handler)
      expect(eight).toBe(one)
    })
  }

  it("the count sees the steps of every fiber (a sanity check of the counter)", async () => {
    const steps = runtimeSteps()
    await Effect.runPromise(Effect.provide(Effect.forEach([1, 2, 3], (n) => Effect.yieldNow.pipe(Effect.as(n)), { concurrency: "unbounded" }), steps.layer))
    expect(steps.count()).toBeGreaterThan(6)
  })
})

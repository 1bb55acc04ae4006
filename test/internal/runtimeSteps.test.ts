/**
 * The loop's cost in steps of effect's runtime (each primitive a fiber
 * evaluates; bench/workloads/lib/runtimeSteps.ts), a count that does not
 * move with the host's load: a change that adds steps to a loop step, or
 * gives a synchronous tool call a fiber of its own again, fails here
 * instead of hiding in the noise of a timing. A round whose model call and
 * tool calls complete at once takes none (a run or a stream costs a fixed
 * number of steps per chain: 10 and 70 on 2026-11-27, the bounds leave a
 * few of room), nor does an extra synchronous call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loopworkRunner } from "../../bench/workloads/lib/loopwork.ts"
import { runtimeSteps } from "../../bench/workloads/lib/runtimeSteps.ts"
import { makeScript, w1 } from "../../bench/workloads/lib/script.ts"

/** Steps per chain of W1 with `calls` calls per answer (and `rounds` rounds), after a few chains to warm up. */
const stepsPerChain = async (via: "run" | "stream", calls: number, handler?: "succeed", rounds = w1.rounds) => {
  const steps = runtimeSteps()
  const script = makeScript(`${via} ${calls}`, { ...w1, calls, rounds })
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
  for (const via of ["run", "stream"] as const) {
    it(`a round of W1 through ${via === "run" ? "Chain.run" : "a drained Chain.stream"} takes none: 10 rounds cost what 1 does`, async () => {
      expect(await stepsPerChain(via, 1)).toBe(await stepsPerChain(via, 1, undefined, 1))
    })
  }

  it("a W1 chain takes at most 12 through Chain.run and 76 through a drained Chain.stream", async () => {
    expect(await stepsPerChain("run", 1)).toBeLessThanOrEqual(12)
    expect(await stepsPerChain("stream", 1)).toBeLessThanOrEqual(76)
  })

  for (const via of ["run", "stream"] as const) {
    for (const handler of [undefined, "succeed"] as const) {
      it(`an extra call in an answer through ${via === "run" ? "Chain.run" : "Chain.stream"} whose handler is ${handler === undefined ? "an Effect.sync" : "an Effect.succeed"} takes none`, async () => {
        const one = await stepsPerChain(via, 1, handler)
        const eight = await stepsPerChain(via, 8, handler)
        expect(eight).toBe(one)
      })
    }
  }

  it("the count sees the steps of every fiber (a sanity check of the counter)", async () => {
    const steps = runtimeSteps()
    await Effect.runPromise(Effect.provide(Effect.forEach([1, 2, 3], (n) => Effect.yieldNow.pipe(Effect.as(n)), { concurrency: "unbounded" }), steps.layer))
    expect(steps.count()).toBeGreaterThan(6)
  })
})

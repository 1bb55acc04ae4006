/**
 * What an ensemble adds to a run (target: ≤ 5 µs per task over a plain
 * `Chain.run` of the same work).
 *
 *   node --expose-gc bench/workloads/ensemble.ts [--quick]
 *
 * One `Ensemble` (loopwork/ensemble) with one agent and one task, built
 * once; each chain is one `Ensemble.run`. Its work is the W1 script (10
 * echo rounds, then text), and the plain run is `Chain.run` of the same
 * script. The same again without tools: the task answered by text at once,
 * against a plain run answered the same way. The four variants run in one
 * process, their batches taking turns (lib/measure.ts); the figure is µs
 * per task of the ensemble minus µs per chain of the plain run.
 */
import { Effect, Layer } from "effect"
import type { Tool } from "effect/ai"
import { Toolkit } from "effect/ai"
import { Agent, Ensemble, Task } from "loopwork/ensemble"
import type { Runner } from "./lib/loopwork.ts"
import { loopworkRunner, runnerOf, scriptedModel, toolkitOf } from "./lib/loopwork.ts"
import { interleaved, report, round } from "./lib/measure.ts"
import type { Script, Spec } from "./lib/script.ts"
import { makeScript, w1 } from "./lib/script.ts"

/** One Ensemble.run of a one-agent, one-task ensemble (built once) whose agent has `toolkit`; its `raw` output. */
const ensembleTask = <Tools extends Record<string, Tool.Any>>(script: Script, toolkit: Toolkit.Toolkit<Tools>) =>
  Effect.gen(function*() {
    const agent = yield* Agent.make({ role: "Worker", goal: "Echo what you are asked to", toolkit, maxIterations: script.spec.rounds + 5 })
    const task = yield* Task.make({ description: "Echo the words", expectedOutput: "done", agent })
    const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
    return Effect.map(Effect.suspend(() => Ensemble.run(ensemble)), (output) => output.raw)
  }).pipe(Effect.runSync)

/** A runner whose chain is one Ensemble.run: with the echo tool (`tools` 1) or none (0). */
const ensembleRunner = (script: Script, tools: 0 | 1): Runner => {
  const model = scriptedModel(script).layer
  if (tools === 0) return runnerOf(script, model, ensembleTask(script, Toolkit.empty))
  const { handlers, toolkit } = toolkitOf(script, tools)
  return runnerOf(script, Layer.mergeAll(model, handlers), ensembleTask(script, toolkit))
}

const text: Spec = { rounds: 0, calls: 1, modelMs: 0, toolMs: 0 }
const scripts = {
  ensembleW1: makeScript("ensemble task, W1", w1),
  plainW1: makeScript("plain run, W1", w1),
  ensembleText: makeScript("ensemble task, text at once", text),
  plainText: makeScript("plain run, text at once", text)
}
const variants = [
  { name: "ensembleW1", script: scripts.ensembleW1, runner: ensembleRunner(scripts.ensembleW1, 1) },
  { name: "plainW1", script: scripts.plainW1, runner: loopworkRunner(scripts.plainW1) },
  { name: "ensembleText", script: scripts.ensembleText, runner: ensembleRunner(scripts.ensembleText, 0) },
  { name: "plainText", script: scripts.plainText, runner: loopworkRunner(scripts.plainText, { tools: 0 }) }
]
const figures = await interleaved(variants)
await report(variants, {
  ...figures,
  usOverPlainW1: round(figures.ensembleW1.usPerChain - figures.plainW1.usPerChain, 1),
  usOverPlainText: round(figures.ensembleText.usPerChain - figures.plainText.usPerChain, 1)
})

// How the three loopwork rows run a chain, whatever their model: the public
// API, as a user writes it. The `echo` tool and its handler are those of the
// effect/ai row (lib/effect-stub.mjs); the services are built once in a
// ManagedRuntime, and each chain is one Chain.run in whileNeedsResponse mode
// with the default options (the calls of one answer run concurrently, their
// results kept in call order), except `maxRuns`: its default of 25 model calls
// is too few for the long chains of the scaling table.

import { Layer, ManagedRuntime } from "effect"
import { Chain, Mode } from "loopwork"
import { EchoToolkit, echoHandlers } from "./effect-stub.mjs"

/** A chain runner over `modelLayer`, a layer providing loopwork's ChatModel. */
export const loopworkRunner = ({ spec, script }, modelLayer) => {
  const runtime = ManagedRuntime.make(Layer.mergeAll(modelLayer, echoHandlers({ spec, script })))
  const options = { mode: Mode.whileNeedsResponse, maxRuns: spec.rounds + 5 }
  return {
    async runChain() {
      const outcome = await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit: EchoToolkit }), options))
      // the user's message, an answer and a tool message per round, the final answer
      if (outcome.chain.messages.length !== 2 * spec.rounds + 2) {
        throw new Error(`loopwork: ${outcome.chain.messages.length} messages in the chain, expected ${2 * spec.rounds + 2}`)
      }
      return Chain.text(outcome.chain)
    },
    dispose: () => runtime.dispose()
  }
}

export const loopworkNotes = "Tool.make + Toolkit.toLayer echo handler (Effect.sleep for latency); one " +
  "runtime.runPromise(Chain.run(Chain.make({ user, toolkit }), { mode: Mode.whileNeedsResponse, maxRuns: rounds + 5 })) " +
  "per chain, other options left at their defaults; services built once in a ManagedRuntime"

// effect/ai on its own: a loop written with LanguageModel.generateText and a
// Toolkit (the toolkit runs the calls of each answer), over the
// LanguageModel.make stub that `loopwork-effect-ai` also uses.

import { Effect, Layer, ManagedRuntime } from "effect"
import { LanguageModel, Prompt } from "effect/ai"
import { EchoToolkit, echoHandlers, languageModelLayer } from "../lib/effect-stub.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "effect-ai",
  label: "effect/ai generateText loop",
  stub: "LanguageModel.make (lib/effect-stub.mjs)",
  baseline: "loopwork-effect-ai",
  sameStub: true,
  packages: ["effect"],
  notes: "generateText with the toolkit until an answer has no tool calls; the prompt grows with " +
    "Prompt.concat(prompt, Prompt.fromResponseParts(content)); Schema parameters; Effect.sleep for latency; " +
    "services built once in a ManagedRuntime, one runPromise per chain",

  async setup({ spec, script }) {
    const runtime = ManagedRuntime.make(Layer.mergeAll(languageModelLayer({ spec, script }), echoHandlers({ spec, script })))
    const chain = Effect.gen(function*() {
      let prompt = Prompt.make("go")
      for (;;) {
        const response = yield* LanguageModel.generateText({ prompt, toolkit: EchoToolkit })
        if (response.toolCalls.length === 0) return response.text
        prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
      }
    })
    return {
      runChain: () => runtime.runPromise(chain),
      dispose: () => runtime.dispose()
    }
  }
}

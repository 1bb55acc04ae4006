// loopwork over an effect/ai provider: ChatModel.layerLanguageModel on the
// LanguageModel.make stub of lib/effect-stub.mjs, the very stub the
// `effect-ai` row uses. The fair comparison with effect/ai.

import { Layer } from "effect"
import { ChatModel } from "loopwork"
import { languageModelLayer } from "../lib/effect-stub.mjs"
import { loopworkNotes, loopworkRunner } from "../lib/loopwork-run.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "loopwork-effect-ai",
  label: "loopwork Chain.run, ChatModel.layerLanguageModel",
  stub: "LanguageModel.make (lib/effect-stub.mjs)",
  baseline: "loopwork-effect-ai",
  sameStub: true,
  packages: ["loopwork", "effect"],
  notes: `ChatModel.layerLanguageModel provided with the LanguageModel.make layer; ${loopworkNotes}`,

  async setup({ spec, script }) {
    return loopworkRunner({ spec, script }, ChatModel.layerLanguageModel.pipe(Layer.provide(languageModelLayer({ spec, script }))))
  }
}

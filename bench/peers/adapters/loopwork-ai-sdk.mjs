// loopwork over an AI SDK model: ChatModel.fromAiSdk on the v4 stub of
// lib/ai-sdk-stub.mjs, the very stub the `ai-sdk` row calls. The fair
// comparison with the AI SDK.

import { ChatModel } from "loopwork/ai-sdk"
import { makeAiSdkModel } from "../lib/ai-sdk-stub.mjs"
import { loopworkNotes, loopworkRunner } from "../lib/loopwork-run.mjs"

/** @type {import("../lib/adapter.mjs").Adapter} */
export default {
  name: "loopwork-ai-sdk",
  label: "loopwork Chain.run, ChatModel.fromAiSdk",
  stub: "LanguageModelV4 doGenerate (lib/ai-sdk-stub.mjs)",
  baseline: "loopwork-ai-sdk",
  sameStub: true,
  packages: ["loopwork", "effect", "@ai-sdk/provider"],
  notes: `ChatModel.fromAiSdk(model) with no options (no timeout timer); ${loopworkNotes}`,

  async setup({ spec, script }) {
    return loopworkRunner({ spec, script }, ChatModel.fromAiSdk(makeAiSdkModel({ spec, script })))
  }
}

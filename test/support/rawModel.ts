/**
 * A model for tests that answers with exact response parts (what a hostile
 * provider or adapter could send): `turns[i]` on the i-th call, then "done";
 * every turn ends with a finish part. The library's `ScriptedModel.raw`
 * (`loopwork/testing`), as a layer.
 */
import type { Layer } from "effect"
import type { Response } from "effect/ai"
import type { ChatModel } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"

/** A `ChatModel` layer answering `turns` in order (a fresh count per layer build), then "done". */
export const rawModel = (turns: ReadonlyArray<ReadonlyArray<Response.AnyPart>>): Layer.Layer<ChatModel.ChatModel> =>
  ScriptedModel.raw(turns).layer

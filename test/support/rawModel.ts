/**
 * A model for tests that answers with exact response parts (what a hostile
 * provider or adapter could send): `turns[i]` on the i-th call, then "done";
 * every turn ends with a finish part.
 */
import { Effect, Layer, Stream } from "effect"
import { Response } from "effect/ai"
import { ChatModel } from "../../src/index.ts"

const finish = Response.makePart("finish", {
  reason: "tool-calls",
  usage: new Response.Usage({
    inputTokens: { uncached: undefined, total: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined }
  }),
  response: undefined
})

/** A `ChatModel` layer answering `turns` in order (a fresh count per layer build), then "done". */
export const rawModel = (turns: ReadonlyArray<ReadonlyArray<Response.AnyPart>>): Layer.Layer<ChatModel.ChatModel> =>
  Layer.sync(ChatModel.ChatModel, () => {
    let turn = 0
    return ChatModel.ChatModel.of({
      generate: () => Effect.sync(() => [...(turns[turn++] ?? [Response.makePart("text", { text: "done" })]), finish]),
      stream: () => Stream.die("rawModel does not stream")
    })
  })

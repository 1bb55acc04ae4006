// What the effect/ai-based rows share: the `echo` tool (Tool.make with a
// Schema), its handler layer, and the `LanguageModel.make` stub of the
// `effect-ai` and `loopwork-effect-ai` rows. There is a single copy of
// `effect` in this package (loopwork is installed from a packed copy of the
// repository, and takes `effect` as a peer), so every row gets the same
// modules.

import { Effect, Layer, Schema, Stream } from "effect"
import { LanguageModel, Tool, Toolkit } from "effect/ai"

export const Echo = Tool.make("echo", {
  description: "Returns its input",
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String
})

export const EchoToolkit = Toolkit.make(Echo)

/** The handler of `echo`: counts itself in `script`, waits `spec.toolMs` through Effect.sleep. */
export const echoHandlers = ({ spec, script }) =>
  EchoToolkit.toLayer({
    echo: ({ text }) =>
      spec.toolMs > 0
        ? Effect.sync(() => script.toolStart()).pipe(
          Effect.andThen(Effect.sleep(spec.toolMs)),
          Effect.andThen(Effect.sync(() => {
            script.toolEnd()
            return text
          }))
        )
        : Effect.sync(() => {
          script.toolStart()
          script.toolEnd()
          return text
        })
  })

const usage = { inputTokens: { uncached: 10, total: 10 }, outputTokens: { total: 5, text: 5 } }

/** The call ids of the tool results ending a prompt (its last message, when that is a tool message). */
const lastResultIds = (prompt) => {
  const last = prompt.content[prompt.content.length - 1]
  if (last?.role !== "tool") return []
  return last.content.filter((part) => part.type === "tool-result").map((part) => part.id)
}

/** Encoded response parts for what `script` answers, as a provider layer returns them. */
const answerParts = (script, prompt) => {
  const answer = script.respondAfter(lastResultIds(prompt))
  if (answer.type === "text") {
    return [{ type: "text", text: answer.text }, { type: "finish", reason: "stop", usage }]
  }
  const parts = answer.calls.map((call) => ({ type: "tool-call", id: call.id, name: call.name, params: call.input }))
  parts.push({ type: "finish", reason: "tool-calls", usage })
  return parts
}

/** A layer of effect/ai's `LanguageModel`, built with `LanguageModel.make`, answering from `script`. */
export const languageModelLayer = ({ spec, script }) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => {
        const answer = Effect.sync(() => answerParts(script, options.prompt))
        return spec.modelMs > 0 ? Effect.andThen(Effect.sleep(spec.modelMs), answer) : answer
      },
      streamText: () => Stream.die("the benchmark does not stream")
    })
  )

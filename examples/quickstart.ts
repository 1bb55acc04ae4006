/**
 * Quick start: one tool, the scripted model, `Chain.run` in `whileNeedsResponse`.
 *
 * Run it with `npm run demo` (no API key: the model is scripted). To use a
 * real model, replace `model.layer` with `ChatModel.layerLanguageModel`
 * provided with any effect/ai LanguageModel layer.
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"

// 1. A tool: a name, a parameters schema and a success schema (effect/ai).
const GetWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number, sky: Schema.String })
})
const tools = Toolkit.make(GetWeather)

// 2. Its handler, provided as a layer.
const ToolHandlers = tools.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: city === "Oslo" ? 4 : 21, sky: "clear" })
})

// 3. A model. The scripted one replays fixed turns: first two tool calls, then an answer.
export const model = ChatModel.scripted([
  {
    text: "Let me check both cities.",
    toolCalls: [
      { name: "get_weather", params: { city: "Oslo" } },
      { name: "get_weather", params: { city: "Lisbon" } }
    ]
  },
  (request) => {
    const results = request.prompt.content.at(-1)
    return { text: `Oslo is 4°C and Lisbon 21°C, both clear. (I read ${results?.content.length} tool results.)` }
  }
])

// 4. A chain, run in a mode.
export const program = Effect.gen(function*() {
  const chain = Chain.make({
    system: "You answer weather questions using the get_weather tool.",
    user: "Is it warmer in Oslo or Lisbon right now?",
    toolkit: tools
  })
  const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 5 })
  return outcome
}).pipe(Effect.provide([model.layer, ToolHandlers]))

if (import.meta.main) {
  const outcome = await Effect.runPromise(program)
  const chain = outcome.chain
  console.log(`outcome:      ${outcome._tag} (${outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag})`)
  console.log(`model calls:  ${chain.runCount}`)
  for (const message of chain.messages) {
    const parts = typeof message.content === "string"
      ? [message.content]
      : message.content.map((part) =>
        part.type === "text"
          ? part.text
          : part.type === "tool-call"
          ? `→ ${part.name}(${JSON.stringify(part.params)})`
          : part.type === "tool-result"
          ? `← ${part.name}: ${JSON.stringify(part.result)}`
          : `[${part.type}]`
      )
    console.log(`${message.role.padEnd(9)} ${parts.join("\n          ")}`)
  }
  console.log(`answer:       ${Chain.text(chain)}`)
}

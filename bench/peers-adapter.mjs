// loopwork adapter for the agent-loop peers benchmark (../shared/bench-peers).
//
// Uses the public API the way a user would: an echo tool made with Tool.make,
// its handler from Toolkit.toLayer, the scripted ChatModel as the stub model,
// and one Chain.run in whileNeedsResponse mode per chain, with default options
// (tool calls of a round run concurrently, results in call order).
//
//   d=$(mktemp -d) && cp -r ../shared/bench-peers/. "$d" && cd "$d" && npm ci
//   node run.mjs --adapter <project>/bench/peers-adapter.mjs --node <project>/node_modules/.bin/node

import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"
import { readFileSync } from "node:fs"

const own = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const effectVersion = JSON.parse(
  readFileSync(new URL("../node_modules/effect/package.json", import.meta.url), "utf8")
).version

/** @type {import('../../shared/bench-peers/lib/adapter.mjs').Adapter} */
export default {
  name: "loopwork",
  label: "loopwork Chain.run (whileNeedsResponse)",
  packages: [],
  notes: `loopwork ${own.version} on effect ${effectVersion} (from the project, not the harness's node_modules); ` +
    "Tool.make + Toolkit.toLayer echo handler, ChatModel.scripted stub (a function of the request, " +
    "recording off), Effect.sleep for latency, default run options, services built once in a " +
    "ManagedRuntime, one runtime.runPromise(Chain.run(...)) per chain",

  async setup({ spec, script }) {
    const { modelLatencyMs, toolLatencyMs } = spec

    const Echo = Tool.make("echo", {
      description: "Returns its input",
      parameters: Schema.Struct({ text: Schema.String }),
      success: Schema.String
    })
    const toolkit = Toolkit.make(Echo)
    const handlers = toolkit.toLayer({
      echo: ({ text }) =>
        toolLatencyMs > 0
          ? Effect.sync(() => script.toolStart()).pipe(
            Effect.andThen(Effect.sleep(toolLatencyMs)),
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

    const reply = (request) => {
      let seen = 0
      for (const message of request.prompt.content) {
        if (message.role !== "tool") continue
        for (const part of message.content) if (part.type === "tool-result") seen++
      }
      const response = script.respond(seen)
      return response.type === "text"
        ? { text: response.text }
        : { toolCalls: response.calls.map((call) => ({ id: call.id, name: call.name, params: call.input })) }
    }
    const model = ChatModel.scripted([reply], {
      repeat: true,
      record: 0,
      ...(modelLatencyMs > 0 ? { latency: modelLatencyMs } : {})
    })

    const runtime = ManagedRuntime.make(Layer.mergeAll(model.layer, handlers))
    const options = { mode: Mode.whileNeedsResponse }

    return {
      runChain: async () => {
        const outcome = await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit }), options))
        return Chain.text(outcome.chain)
      },
      dispose: () => runtime.dispose()
    }
  }
}

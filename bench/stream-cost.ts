/**
 * What watching costs: the W1 script (10 echo rounds, then text) run as 3000 chains with
 * `Chain.run` and with `Chain.stream` (every event, and the chain document at the end).
 *
 *   npm run build && node bench/stream-cost.ts
 */
import { Effect, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"
const Echo = Tool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
const tk = Toolkit.make(Echo)
const handlers = tk.toLayer({ echo: ({ text }) => Effect.succeed(text) })
const turns: Array<ChatModel.ScriptedReply> = [...Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: "echo", params: { text: `t${i}` } }] })), { text: "done now" }]
const model = ChatModel.scripted(turns, { repeat: true, record: 0 })
const chain = Chain.make({ user: "go", toolkit: tk })
const N = 3000
const viaRun = Effect.forEach(Array.from({ length: N }), () => Chain.run(chain, { mode: Mode.whileNeedsResponse }), { discard: true })
const viaStream = Effect.forEach(Array.from({ length: N }), () => Stream.runDrain(Chain.stream(chain, { mode: Mode.whileNeedsResponse })), { discard: true })
const time = async (name: string, e: Effect.Effect<void, unknown, never>) => {
  await Effect.runPromise(e)
  const t = performance.now(); await Effect.runPromise(e); const ms = performance.now() - t
  console.log(name, (ms * 1000 / (N * 11)).toFixed(2), "µs/step")
}
for (let i = 0; i < 2; i++) {
  await time("run   ", viaRun.pipe(Effect.provide([model.layer, handlers])))
  await time("stream", viaStream.pipe(Effect.provide([model.layer, handlers])))
}

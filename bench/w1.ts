/**
 * W1 of ../shared/bench-peers: a chain of 10 tool rounds (one `echo` call
 * each) then a final text, on a zero-latency scripted model. One loop step is
 * one model call plus the tool calls it asked for, so a chain has 11 steps.
 *
 * The scripted model derives its turn from the number of tool results in the
 * conversation it is handed (as the harness's stub does), so a loop that drops
 * or duplicates results fails the check instead of producing a figure.
 *
 * Prints µs per step and steps/s for loopwork and, in the same process, for a
 * plain hand-written loop (the floor).
 *
 *   npm run bench            full run (~20 s)
 *   npm run bench -- --quick smoke run; its numbers mean nothing
 */
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"

const ROUNDS = 10
const STEPS = ROUNDS + 1
const quick = process.argv.includes("--quick")
const WARMUP_MS = quick ? 300 : 3000
const WARMUP_CHAINS = quick ? 50 : 1000
const BATCHES = quick ? 3 : 7
const BATCH_MS = quick ? 100 : 1000
const BATCH_CHAINS = 100

let modelCalls = 0
let toolCalls = 0

// -- the script (shared by both loops) -----------------------------------------
const toolReplies: Array<ChatModel.ScriptedReply> = []
for (let turn = 0; turn < ROUNDS; turn++) {
  toolReplies.push({ toolCalls: [{ id: `call_${turn}`, name: "echo", params: { text: `t${turn}` } }] })
}
const finalReply: ChatModel.ScriptedReply = { text: "done" }
const respond = (toolResultsSeen: number) => {
  modelCalls++
  return toolResultsSeen < ROUNDS ? toolReplies[toolResultsSeen] : finalReply
}

// -- loopwork --------------------------------------------------------------------
const Echo = Tool.make("echo", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String
})
const toolkit = Toolkit.make(Echo)
const handlers = toolkit.toLayer({
  echo: ({ text }) => {
    toolCalls++
    return Effect.succeed(text)
  }
})
const model = ChatModel.scripted([
  (request) => {
    let seen = 0
    for (const message of request.prompt.content) {
      if (message.role === "tool") seen += message.content.length
    }
    return respond(seen)
  }
], { repeat: true, record: 0 })

const runtime = ManagedRuntime.make(Layer.mergeAll(model.layer, handlers))
const options = { mode: Mode.whileNeedsResponse, maxRuns: 50 }
const loopworkChain = async (): Promise<string> => {
  const chain = Chain.make({ user: "go", toolkit })
  const outcome = await runtime.runPromise(Chain.run(chain, options))
  return Chain.text(outcome.chain)
}

// -- the floor: a plain async loop -----------------------------------------------
interface PlainMessage {
  readonly role: string
  readonly content?: string
  readonly calls?: ReadonlyArray<{ readonly id?: string | undefined; readonly name: string; readonly params?: unknown }>
}
const floorChain = async (): Promise<string> => {
  const messages: Array<PlainMessage> = [{ role: "user", content: "go" }]
  for (;;) {
    let seen = 0
    for (const message of messages) if (message.role === "tool") seen++
    const reply = await Promise.resolve(respond(seen))
    if (reply.toolCalls === undefined) return reply.text ?? ""
    messages.push({ role: "assistant", calls: reply.toolCalls })
    const outputs = await Promise.all(reply.toolCalls.map(async (call) => {
      toolCalls++
      return (call.params as { text: string }).text
    }))
    for (let i = 0; i < outputs.length; i++) messages.push({ role: "tool", content: outputs[i] })
  }
}

// -- measurement -----------------------------------------------------------------
const check = (label: string, chains: number, text: string) => {
  if (text !== "done") throw new Error(`${label}: chain ended with ${JSON.stringify(text)}, expected "done"`)
  if (modelCalls !== chains * STEPS || toolCalls !== chains * ROUNDS) {
    throw new Error(
      `${label}: ${modelCalls} model calls and ${toolCalls} tool calls for ${chains} chains; ` +
        `expected ${chains * STEPS} and ${chains * ROUNDS}`
    )
  }
}

const measure = async (label: string, runChain: () => Promise<string>) => {
  modelCalls = 0
  toolCalls = 0
  let chains = 0
  let text = ""
  const warmStart = performance.now()
  while (chains < WARMUP_CHAINS || performance.now() - warmStart < WARMUP_MS) {
    text = await runChain()
    chains++
  }
  check(label, chains, text)
  const perStep: Array<number> = []
  for (let batch = 0; batch < BATCHES; batch++) {
    modelCalls = 0
    toolCalls = 0
    let n = 0
    const start = performance.now()
    while (n < BATCH_CHAINS || performance.now() - start < BATCH_MS) {
      text = await runChain()
      n++
    }
    const elapsed = performance.now() - start
    check(label, n, text)
    perStep.push((elapsed * 1000) / (n * STEPS))
  }
  perStep.sort((a, b) => a - b)
  const median = perStep[Math.floor(perStep.length / 2)]
  return { label, median, min: perStep[0], max: perStep[perStep.length - 1] }
}

const results = [await measure("loopwork", loopworkChain), await measure("plain loop", floorChain)]
await runtime.dispose()

console.log(`W1: ${ROUNDS} tool rounds + final text, zero latency; Node ${process.version}${quick ? " (quick: numbers mean nothing)" : ""}`)
console.log("library      µs/step (median)   min – max        steps/s")
for (const r of results) {
  console.log(
    `${r.label.padEnd(12)} ${r.median.toFixed(2).padStart(10)}       ${r.min.toFixed(2)} – ${r.max.toFixed(2)}`.padEnd(48) +
      `${Math.round(1e6 / r.median).toLocaleString("en-US").padStart(10)}`
  )
}
const budget = 20
const loopwork = results[0]
console.log(`budget: ≤ ${budget} µs/step on W1 — ${loopwork.median <= budget ? "met" : "NOT met"}`)

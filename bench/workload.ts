/**
 * One workload of `npm run bench`, for one implementation, in its own
 * process (so memory figures are not polluted by another workload):
 *
 *   node --expose-gc bench/workload.ts <loopwork|floor> <w1|w2|w3|mem> [--quick]
 *
 * Prints one line `RESULT <json>`. The workloads are those of bench/peers/:
 * - w1: 10 rounds × 1 echo call, then text, no latency — µs per loop step
 *   (one model call plus its tool calls), median of 7 batches.
 * - w2: 1 round × 8 echo calls of 50 ms each — median wall time of a chain,
 *   and the peak number of tools running at once.
 * - w3: 1000 chains started together, 5 rounds × 1 call, 10 ms model latency —
 *   wall time and peak RSS.
 * - mem: 100,000 sequential w1 chains; heap after a forced GC every 10,000.
 *
 * The model derives its turn from the number of tool results in the
 * conversation it is handed, and every phase checks the model and tool call
 * counts, so a loop that drops or duplicates results fails instead of
 * producing a figure.
 */
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"

interface Spec {
  readonly rounds: number
  readonly calls: number
  readonly modelMs: number
  readonly toolMs: number
}

const specs: Record<string, Spec> = {
  w1: { rounds: 10, calls: 1, modelMs: 0, toolMs: 0 },
  w2: { rounds: 1, calls: 8, modelMs: 0, toolMs: 50 },
  w3: { rounds: 5, calls: 1, modelMs: 10, toolMs: 0 },
  mem: { rounds: 10, calls: 1, modelMs: 0, toolMs: 0 }
}

const [impl, workload] = process.argv.slice(2) as [string, string]
const quick = process.argv.includes("--quick")
const spec = specs[workload]
if (spec === undefined || (impl !== "loopwork" && impl !== "floor")) {
  console.error("usage: node --expose-gc bench/workload.ts <loopwork|floor> <w1|w2|w3|mem> [--quick]")
  process.exit(2)
}

// -- bookkeeping shared by both implementations ------------------------------------
let modelCalls = 0
let toolCalls = 0
let running = 0
let peakRunning = 0
const toolStart = () => {
  toolCalls++
  running++
  if (running > peakRunning) peakRunning = running
}
const toolEnd = () => {
  running--
}

type Reply =
  | { readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly params: { readonly text: string } }> }
  | { readonly text: string }
const rounds: Array<Reply> = []
for (let r = 0; r < spec.rounds; r++) {
  const calls = []
  for (let c = 0; c < spec.calls; c++) calls.push({ id: `c${r}_${c}`, name: "echo", params: { text: `t${r}_${c}` } })
  rounds.push({ toolCalls: calls })
}
const final: Reply = { text: "done" }
const respond = (toolResultsSeen: number): Reply => {
  modelCalls++
  return toolResultsSeen < spec.rounds * spec.calls ? rounds[toolResultsSeen / spec.calls] : final
}
const check = (label: string, chains: number, text: string) => {
  const expectedModel = chains * (spec.rounds + 1)
  const expectedTools = chains * spec.rounds * spec.calls
  if (text !== "done" || modelCalls !== expectedModel || toolCalls !== expectedTools || running !== 0) {
    throw new Error(
      `${label}: text ${JSON.stringify(text)}, ${modelCalls} model calls (expected ${expectedModel}), ` +
        `${toolCalls} tool calls (expected ${expectedTools}), ${running} still running`
    )
  }
  modelCalls = 0
  toolCalls = 0
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// -- loopwork: the public API, as a user writes it -------------------------------------
const loopwork = (): (() => Promise<string>) => {
  const Echo = Tool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
  const toolkit = Toolkit.make(Echo)
  const handlers = toolkit.toLayer({
    echo: ({ text }) =>
      spec.toolMs > 0
        ? Effect.sync(toolStart).pipe(Effect.andThen(Effect.sleep(spec.toolMs)), Effect.andThen(Effect.sync(() => (toolEnd(), text))))
        : Effect.sync(() => (toolStart(), toolEnd(), text))
  })
  const model = ChatModel.scripted([(request) => {
    let seen = 0
    for (const message of request.prompt.content) if (message.role === "tool") seen += message.content.length
    return respond(seen)
  }], { repeat: true, record: 0, ...(spec.modelMs > 0 ? { latency: spec.modelMs } : {}) })
  const runtime = ManagedRuntime.make(Layer.mergeAll(model.layer, handlers))
  const options = { mode: Mode.whileNeedsResponse }
  return async () => Chain.text((await runtime.runPromise(Chain.run(Chain.make({ user: "go", toolkit }), options))).chain)
}

// -- the floor: a plain async loop, no library -----------------------------------------
const floor = (): (() => Promise<string>) => async () => {
  const messages: Array<{ readonly role: string; readonly content?: string }> = [{ role: "user", content: "go" }]
  for (;;) {
    if (spec.modelMs > 0) await sleep(spec.modelMs)
    let seen = 0
    for (const message of messages) if (message.role === "tool") seen++
    const reply = respond(seen)
    if (!("toolCalls" in reply)) return reply.text
    messages.push({ role: "assistant" })
    const outputs = await Promise.all(reply.toolCalls.map(async (call) => {
      toolStart()
      if (spec.toolMs > 0) await sleep(spec.toolMs)
      toolEnd()
      return call.params.text
    }))
    for (const output of outputs) messages.push({ role: "tool", content: output })
  }
}

const runChain = impl === "loopwork" ? loopwork() : floor()
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10

const w1 = async () => {
  let text = ""
  let chains = 0
  const warm = performance.now()
  while (chains < (quick ? 100 : 1000) || performance.now() - warm < (quick ? 300 : 3000)) {
    text = await runChain()
    chains++
  }
  check("warm-up", chains, text)
  const perStep: Array<number> = []
  for (let batch = 0; batch < (quick ? 3 : 7); batch++) {
    let n = 0
    const start = performance.now()
    while (n < 100 || performance.now() - start < (quick ? 100 : 1000)) {
      text = await runChain()
      n++
    }
    perStep.push(((performance.now() - start) * 1000) / (n * (spec.rounds + 1)))
    check(`batch ${batch}`, n, text)
  }
  const sorted = [...perStep].sort((a, b) => a - b)
  return { usPerStep: sorted[Math.floor(sorted.length / 2)], batches: perStep.map((x) => Math.round(x * 100) / 100) }
}

const w2 = async () => {
  let text = ""
  for (let i = 0; i < (quick ? 3 : 20); i++) text = await runChain()
  check("warm-up", quick ? 3 : 20, text)
  const walls: Array<number> = []
  peakRunning = 0
  for (let i = 0; i < 9; i++) {
    const start = performance.now()
    text = await runChain()
    walls.push(performance.now() - start)
    check(`chain ${i}`, 1, text)
  }
  walls.sort((a, b) => a - b)
  return { wallMs: Math.round(walls[4] * 10) / 10, peakConcurrentTools: peakRunning }
}

const burst = async (n: number) => {
  const texts = await Promise.all(Array.from({ length: n }, () => runChain()))
  for (const text of texts) if (text !== "done") throw new Error(`a chain ended with ${JSON.stringify(text)}`)
  check(`burst of ${n}`, n, "done")
}

const w3 = async () => {
  const chains = quick ? 200 : 1000
  for (let warmed = 0, start = performance.now(); warmed < 300 || performance.now() - start < 1000; warmed += 100) {
    await burst(100)
  }
  gc()
  let peakHeap = 0
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)
  }, 2)
  const start = performance.now()
  await burst(chains)
  const wallS = (performance.now() - start) / 1000
  clearInterval(sampler)
  return { chains, wallS: Math.round(wallS * 1000) / 1000, peakRssMB: mb(process.resourceUsage().maxRSS * 1024), peakHeapMB: mb(peakHeap) }
}

const mem = async () => {
  const total = quick ? 20_000 : 100_000
  const every = total / 10
  const heapAfterGcMB: Array<number> = []
  let text = ""
  for (let i = 1; i <= total; i++) {
    text = await runChain()
    if (i % every === 0) {
      check(`chains up to ${i}`, every, text)
      gc()
      heapAfterGcMB.push(mb(process.memoryUsage().heapUsed))
    }
  }
  // growth from the first checkpoint (after warm-up) to the last
  return { chains: total, heapAfterGcMB, growthMB: Math.round((heapAfterGcMB[heapAfterGcMB.length - 1] - heapAfterGcMB[0]) * 10) / 10 }
}

const result = await ({ w1, w2, w3, mem } as Record<string, () => Promise<unknown>>)[workload]()
console.log(`RESULT ${JSON.stringify({ impl, workload, quick, result })}`)
process.exit(0)

/**
 * What a paused chain keeps (target: ≤ 3 KB of heap per parked chain): N
 * chains (10,000; 2,000 with --quick) each paused for a human's approval —
 * the model's first answer calls a tool with `needsApproval: true`, so
 * `Chain.run` ends in `Pause` with `ApprovalPending` — their outcomes kept
 * in an array, as a server holding them until someone decides would.
 *
 *   node --expose-gc bench/workloads/parked.ts <loopwork|floor> [--quick]
 *
 * The figure is (heap after a forced GC with them − heap after a forced GC
 * without them) / N. The floor's figure is the plain loop's equivalent, an
 * array of message arrays (the user's message and the answer with its call),
 * for reference.
 */
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"
import { gc, quick, report, round } from "./lib/measure.ts"

const impl = process.argv[2]
if (impl !== "loopwork" && impl !== "floor") {
  console.error("usage: node --expose-gc bench/workloads/parked.ts <loopwork|floor> [--quick]")
  process.exit(2)
}

let modelCalls = 0
let toolCalls = 0
const answer = () => {
  modelCalls++
  return { toolCalls: [{ name: "transfer", params: { to: "bob", amount: 100 } }] }
}

/** loopwork: a chain run until it pauses for approval; its outcome. */
const parkLoopwork = () => {
  const Transfer = Tool.make("transfer", {
    description: "Moves money; a human approves every call",
    parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true
  })
  const toolkit = Toolkit.make(Transfer)
  const handlers = toolkit.toLayer({ transfer: () => Effect.sync(() => (toolCalls++, "sent")) })
  const model = ChatModel.scripted([answer], { repeat: true, record: 0 })
  const runtime = ManagedRuntime.make(Layer.mergeAll(model.layer, handlers))
  const once = Effect.suspend(() => Chain.run(Chain.make({ user: "Pay bob 100", toolkit }), { mode: Mode.whileNeedsResponse }))
  return async () => {
    const outcome = await runtime.runPromise(once)
    if (outcome._tag !== "Pause" || outcome.reason._tag !== "ApprovalPending" || outcome.reason.calls.length !== 1) {
      throw new Error(`a chain ended ${outcome._tag}${outcome._tag === "Pause" ? ` (${outcome.reason._tag})` : ""}, expected a Pause for approval`)
    }
    return outcome
  }
}

/** The floor: the messages a plain loop keeps for a call awaiting approval. */
const parkFloor = () => async () => {
  const { toolCalls: [call] } = answer()
  return [{ role: "user", content: "Pay bob 100" }, { role: "assistant", content: [{ id: `call_${modelCalls}`, name: call.name, params: { ...call.params } }] }]
}

const park = impl === "loopwork" ? parkLoopwork() : parkFloor()
const parkMany = async (n: number) => {
  const parked: Array<unknown> = []
  for (let i = 0; i < n; i++) parked.push(await park())
  if (modelCalls !== n || toolCalls !== 0) throw new Error(`${impl} parked: ${modelCalls} model calls (expected ${n}), ${toolCalls} tool calls (expected 0)`)
  modelCalls = 0
  return parked
}
const heapAfterGc = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

await parkMany(quick ? 500 : 2_000) // warm-up, dropped
const chains = quick ? 2_000 : 10_000
const without = heapAfterGc()
const parked = await parkMany(chains)
const withThem = heapAfterGc()
// `parked` is read here, after the second measure, so it is alive during it.
await report([], { chains: parked.length, bytesPerChain: Math.round((withThem - without) / chains), kbPerChain: round((withThem - without) / chains / 1024) })

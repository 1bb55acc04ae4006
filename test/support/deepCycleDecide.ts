// Run as a child process by test/scenarios/Approval.snapshotCycles.test.ts: Approval.decide / ExternalTool.supply given a
// value that is deep (structuredClone throws RangeError) and cyclic. Prints the outcome's tag.
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, ExternalTool, Mode } from "../../src/index.ts"

const which = process.argv[2] ?? "decide"
const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Ask = ExternalTool.mark(Tool.make("ask", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.Unknown }))
const kit = Toolkit.make(Transfer, Ask)
const model = ChatModel.scripted([() => ({
  toolCalls: [{ id: "t1", name: "transfer", params: { to: "bob", amount: 1 } }, { id: "a1", name: "ask", params: { q: "?" } }]
})], { repeat: true })

const deepCycle = () => {
  const root: Record<string, unknown> = {}
  let cur = root
  for (let i = 0; i < 100_000; i++) cur = (cur.x = {}) as Record<string, unknown>
  if (process.argv[3] === "dag") {
    // No cycle: 40 levels of shared halves (structuredClone copies each object once; a walk without a
    // visited map copies 2^40 leaves)
    let shared: Record<string, unknown> = {}
    for (let i = 0; i < 40; i++) shared = { l: shared, r: shared }
    cur.shared = shared
  } else if (process.argv[3] !== "acyclic") cur.back = root // a cycle at the bottom of a chain too deep for structuredClone
  return root
}

const program = Effect.gen(function*() {
  const paused = yield* Chain.run(Chain.make({ user: "go", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide([model.layer, kit.toLayer({ transfer: () => Effect.succeed("sent"), ask: () => Effect.succeed(null) })])
  )
  const exit = which === "decide"
    ? yield* Effect.exit(Approval.decide(paused.chain, { t1: Approval.edit({ to: "bob", amount: 1, extra: deepCycle() }) }))
    : yield* Effect.exit(ExternalTool.supply(paused.chain, { a1: { result: deepCycle() } }))
  console.log(exit._tag === "Failure" ? "refused" : "accepted")
})
Effect.runPromise(program).then(() => process.exit(0), (e) => (console.error(e), process.exit(2)))

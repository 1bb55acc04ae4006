/**
 * A custom mode built from steps: "WithAudit" loops like whileNeedsResponse
 * and adds a custom step that records each model call.
 *
 * The pattern is always the same: start with `Step.start(chain)`, pipe through
 * as many steps as needed, and end with `Step.continueOrDone` to decide
 * whether to go round again. A custom step (`Step.make`) follows the same
 * contract as the built-in ones: it runs only on `Continue`, and terminal
 * outcomes pass it by.
 *
 *   node examples/custom-mode.ts
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Outcome, Step } from "loopwork"

/** Where the audit step writes; a real service would log or emit metrics. */
export const auditLog: Array<string> = []

/** A custom step: same contract as the built-in steps. */
const audit = Step.make((chain) => {
  const calls = chain.lastResponse?.toolCalls.map((call) => call.name).join(", ") || "none"
  auditLog.push(`model call #${chain.runCount} completed (tool calls: ${calls})`)
  return Effect.succeed(new Outcome.Continue(chain))
})

/** The mode: executeTools → callLlm → checkMaxRuns → audit → continueOrDone. */
export const withAudit: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
  const executeTools = Step.executeToolsWith(options)
  const checkMaxRuns = Step.checkMaxRuns({ ...options, since: chain.runCount })
  const next = Step.continueOrDone((c: Chain.Chain) => loop(c))
  const loop = (c: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
    Step.start(c).pipe(executeTools, Step.callLlm, checkMaxRuns, audit, next)
  return loop(chain)
}

// -- a run on the scripted model ------------------------------------------------
const Lookup = Tool.make("lookup_order", {
  description: "Find an order by id",
  parameters: Schema.Struct({ orderId: Schema.String }),
  success: Schema.Struct({ orderId: Schema.String, status: Schema.String })
})
const tools = Toolkit.make(Lookup)
const handlers = tools.toLayer({
  lookup_order: ({ orderId }) => Effect.succeed({ orderId, status: "shipped" })
})

export const model = ChatModel.scripted([
  { toolCalls: [{ name: "lookup_order", params: { orderId: "A-17" } }] },
  { text: "Order A-17 has shipped." }
])

export const program = Chain.run(
  Chain.make({ user: "Where is order A-17?", toolkit: tools }),
  { mode: withAudit, maxRuns: 5 }
).pipe(Effect.provide([model.layer, handlers]))

if (import.meta.main) {
  const outcome = await Effect.runPromise(program)
  for (const line of auditLog) console.log(line)
  console.log(`${outcome._tag}: ${Chain.text(outcome.chain)}`)
}

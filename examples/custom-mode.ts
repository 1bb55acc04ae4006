/**
 * A custom mode built from steps: "WithAudit" is whileNeedsResponse plus a
 * custom step that records each model call, with an option of its own
 * (`auditPrefix`).
 *
 * `Step.forRun(chain, options)` gives the built-in steps bound to the run's
 * options, the very steps the built-in modes are made of, so the custom mode
 * honours every run option as a built-in does; `Mode.loop` repeats the
 * pipeline while the chain needs a response. A custom step (`Step.make`)
 * follows the same contract as the built-in ones: it runs only on
 * `Continue`, and terminal outcomes pass it by.
 *
 *   node examples/custom-mode.ts
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Outcome, Step } from "loopwork"

/** Where the audit step writes; a real service would log or emit metrics. */
export const auditLog: Array<string> = []

/** The mode's own option, next to the built-in ones. */
export interface AuditOptions extends Mode.Options {
  readonly auditPrefix?: string | undefined
}

/** A custom step: same contract as the built-in steps. */
const audit = (prefix: string) =>
  Step.make((chain) => {
    const calls = chain.lastResponse?.toolCalls.map((call) => call.name).join(", ") || "none"
    auditLog.push(`${prefix}model call #${chain.runCount} completed (tool calls: ${calls})`)
    return Effect.succeed(new Outcome.Continue(chain))
  })

/** whileNeedsResponse, and the audit step after each model call. */
export const withAudit: Mode.Mode<ChatModel.ChatModel, AuditOptions> = (chain, options) => {
  const s = Step.forRun(chain, options)
  return Mode.loop(chain, (self) =>
    self.pipe(
      s.executeTools,
      s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior,
      s.checkMaxRuns,
      s.callLlm, s.checkNoTool, audit(options.auditPrefix ?? "")
    ))
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
  { mode: withAudit, maxRuns: 5, auditPrefix: "" }
).pipe(Effect.provide([model.layer, handlers]))

if (import.meta.main) {
  const outcome = await Effect.runPromise(program)
  for (const line of auditLog) console.log(line)
  console.log(`${outcome._tag}: ${Chain.text(outcome.chain)}`)
}

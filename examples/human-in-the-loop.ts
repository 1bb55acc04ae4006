/**
 * Human in the loop: a payments agent whose transfers need approval, whose
 * statement is opened by the caller (an external tool), and whose receipt
 * tool returns its result directly. The run pauses twice; each pause is
 * stored as signed JSON (as a server would between requests, e.g. in a
 * queue or the user's browser) and resumed: a stored chain changed by
 * anyone without the key is refused.
 *
 *   node examples/human-in-the-loop.ts
 */
import { randomBytes } from "node:crypto"
import { Effect, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, DirectReturn, ExternalTool, Mode, type Outcome } from "loopwork"

// Declared behaviour lives on the tools: approval (effect/ai's needsApproval), external execution.
const Transfer = Tool.make("transfer", {
  description: "Send money",
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }) => amount > 100 // small amounts go through
})
const Receipt = Tool.make("receipt", {
  description: "Fetch the receipt of a transfer",
  parameters: Schema.Struct({ reference: Schema.String }),
  success: Schema.String
})
const OpenStatement = ExternalTool.mark(Tool.make("open_statement", {
  description: "Open the account statement in the user's browser and read the balance",
  success: Schema.Number
}))

const local = Toolkit.make(Transfer, Receipt)
export const tools = Toolkit.merge(local, Toolkit.make(OpenStatement))

// Handlers only for the local tools; the receipt handler returns its result as the final answer.
const Handlers = local.toLayer({
  transfer: ({ amount, to }) => Effect.succeed(`sent ${amount} EUR to ${to}, reference T-1`),
  receipt: ({ reference }) => DirectReturn.final(`Receipt ${reference}: 250 EUR to Bob, settled.`)
})

const model = ChatModel.scripted([
  {
    text: "Checking the balance, then sending the money.",
    toolCalls: [
      { id: "c1", name: "open_statement" },
      { id: "c2", name: "transfer", params: { to: "Bob", amount: 300 } }
    ]
  },
  { toolCalls: [{ id: "c3", name: "receipt", params: { reference: "T-1" } }] }
])

// The key signing stored chains. A real service must configure one (at least 32 random bytes, from a
// secret store or the environment, never next to the documents) and fail to start without it. This
// example falls back to a random key made for this process only: the chains it signs cannot be
// resumed by another process or after a restart, and no one else can read the key.
export const signingKey: Chain.SigningKey = Redacted.make(process.env.CHAIN_SIGNING_KEY ?? randomBytes(32))

/** Stores a paused chain as signed JSON and reads it back, as a server would between two requests. */
const storeAndLoad = (chain: Chain.Chain) =>
  Chain.encode(chain, { signingKey }).pipe(
    Effect.map((document) => JSON.stringify(document)),
    Effect.flatMap((json) => Chain.decode(json, { toolkit: tools, signingKey }))
  )

const run = (chain: Chain.Chain) => Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 5 })

export const log: Array<string> = []

export const program = Effect.gen(function*() {
  const start = Chain.make({ user: "Send Bob 250 EUR if my balance allows, and give me the receipt.", toolkit: tools })

  // 1. The model asks for the statement (external) and a transfer over 100 (needs approval).
  let outcome: Outcome.Final = yield* run(start)
  log.push(describe(outcome))

  // 2. A human edits the amount down to what was asked for, and approves.
  let chain = yield* storeAndLoad(outcome.chain)
  chain = yield* Approval.decide(chain, { c2: Approval.edit({ to: "Bob", amount: 250 }) })
  outcome = yield* run(chain)
  log.push(describe(outcome))

  // 3. The caller opened the statement in the browser and reports the balance.
  chain = yield* storeAndLoad(outcome.chain)
  chain = yield* ExternalTool.supply(chain, { c1: { result: 1250 } })
  outcome = yield* run(chain)
  log.push(describe(outcome))
  return outcome
}).pipe(Effect.provide([model.layer, Handlers]))

const describe = (outcome: Outcome.Final): string => {
  if (outcome._tag === "Ok") {
    const results = outcome.extra as ReadonlyArray<{ readonly result: unknown }>
    return `Ok (${outcome.reason}): ${results.map((r) => JSON.stringify(r.result)).join(", ")}`
  }
  const reason = outcome.reason
  return reason._tag === "ApprovalPending" || reason._tag === "ExternalPending"
    ? `Pause (${reason._tag}): ${reason.calls.map((c) => `${c.name}(${JSON.stringify(c.params ?? {})})`).join(", ")}`
    : `Pause (${reason._tag})`
}

if (import.meta.main) {
  const outcome = await Effect.runPromise(program)
  for (const line of log) console.log(line)
  console.log(`model calls: ${outcome.chain.runCount}`)
}

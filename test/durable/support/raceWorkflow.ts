/**
 * The workflow the processes of decide.processes.test.ts share (the runner and the child deciders):
 * one model turn with two refunds that need approval, then an answer.
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, Mode } from "../../../src/index.ts"
import { ScriptedModel } from "../../../src/testing/index.ts"
import { DurableChain } from "../../../src/durable/index.ts"

export const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
export const toolkit = Toolkit.make(Refund)

export const Race = DurableChain.workflow("Race", {
  input: Schema.Struct({ ticket: Schema.String }),
  idempotencyKey: ({ ticket }) => ticket,
  toolkit,
  chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
  mode: Mode.whileNeedsResponse
})

/** Replay-safe: the reply is chosen from the request. */
export const model = ScriptedModel.make([
  (request) =>
    request.prompt.content.some((message) => message.role === "assistant")
      ? { text: "Done." }
      : { toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }, { id: "r2", name: "refund", params: { amount: 7 } }] }
], { repeat: true })

export const handlersWriting = (ran: (line: string) => void) =>
  toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran(`refund ${amount}`), `refunded ${amount}`)) })

import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"

const Refund = Tool.make("refund", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Refund, Lookup)

const setup = () => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    lookup: ({ order }) => Effect.sync(() => (ran.push(`lookup ${order}`), `order ${order}: shipped`))
  })
  const model = ScriptedModel.make([
    { toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }, { id: "c2", name: "refund", params: { amount: 20 } }] },
    { text: "Refunded." }
  ])
  const Support = DurableChain.workflow("Support", {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit,
    chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
    mode: Mode.whileNeedsResponse
  })
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

describe("DurableChain on the memory engine", () => {
  it.effect("waits for an approval, then finishes; tools ran once", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      yield* Effect.yieldNow
      const waiting = yield* DurableChain.pending(Support, id)
      expect(waiting.map((c) => c.callId)).toEqual(["c2"])
      yield* DurableChain.decide(Support, id, { c2: Approval.approve })
      const result = yield* Support.execute({ ticket: "T1" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["lookup A1", "refund 20"])
    }).pipe(Effect.provide(live))
  })
})

/**
 * Fixtures of the tests that race answers to a waiting run
 * (DurableChain.decideTogether, decideStopInterleavings, lostWake): a run
 * that waits for approval of two refunds (`r1` of 5, `r2` of 7), and a
 * memory store whose operations, made for a `Caller`, take turns in a
 * given order.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { ScriptedModel } from "../../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

/** Who a store operation is made for (a reviewer, a stop): provided around each caller's effect. */
export class Caller extends Context.Service<Caller, string>()("test/Caller") {}

/**
 * The memory store whose operations made for a `Caller` wait for that
 * caller's turn in `order` (one turn per operation); a turn nobody takes is
 * skipped after a while. Operations made for no caller run at once.
 */
export const scheduled = (order: ReadonlyArray<string>): Layer.Layer<WaitingCalls.WaitingCalls> => {
  let turn = 0
  const inTurn = <A, E>(operation: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const who = yield* Effect.serviceOption(Caller)
      if (Option.isNone(who)) return yield* operation
      for (let spin = 0; spin < 200 && turn < order.length && order[turn] !== who.value; spin++) yield* Effect.yieldNow
      return yield* Effect.ensuring(operation, Effect.sync(() => void turn++))
    })
  return Layer.effect(
    WaitingCalls.WaitingCalls,
    Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) => WaitingCalls.WaitingCalls.of({
      ...store,
      list: (key) => inTurn(store.list(key)),
      posted: (key) => inTurn(store.posted(key)),
      answerOf: (key, callId) => inTurn(store.answerOf(key, callId)),
      claim: (key, callId, answer, wait, kind) => inTurn(store.claim(key, callId, answer, wait, kind)),
      claimAll: (key, kind, claims) => inTurn(store.claimAll(key, kind, claims)),
      requestStop: (key) => inTurn(store.requestStop(key))
    }))
  ).pipe(Layer.provide(WaitingCalls.layerMemory))
}

/** The `Support` workflow asking to approve two refunds, on the memory engine and `store`; the refunds run into `ran`. */
export const twoRefunds = (store: Layer.Layer<WaitingCalls.WaitingCalls> = WaitingCalls.layerMemory) => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
  const model = ScriptedModel.make([
    { toolCalls: [{ id: "r1", name: "refund", params: { amount: 5 } }, { id: "r2", name: "refund", params: { amount: 7 } }] },
    { text: "Done." }
  ])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, store, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

/** Waits until execution `id` of `Support` waits on both refunds. */
export const waitsForBoth = (Support: ReturnType<typeof twoRefunds>["Support"], id: string) =>
  Effect.gen(function*() {
    let waiting = yield* waitingOn(Support, id)
    for (let turn = 0; turn < 100 && waiting.length < 2; turn++) waiting = yield* Effect.andThen(Effect.yieldNow, DurableChain.pending(Support, id))
    return waiting.map((call) => call.callId)
  })

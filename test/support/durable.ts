/**
 * Fixtures of the durable tests on the memory engine (test/durable/*.test.ts).
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { HttpApi } from "effect/http-api"
import { type Workflow, WorkflowProxy } from "effect/workflow"
import { ScriptedModel } from "../../src/testing/index.ts"
import { Chain, Mode } from "../../src/index.ts"
import { DurableChain, type WaitingCalls } from "../../src/durable/index.ts"

/** A durable support workflow named `name` over `toolkit`: one ticket, one execution. */
export const supportWorkflow = <const Name extends string, Tools extends Record<string, Tool.Any>>(name: Name, toolkit: Toolkit.Toolkit<Tools>) =>
  DurableChain.workflow(name, {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit,
    chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
    mode: Mode.whileNeedsResponse
  })

/** The calls the execution waits on, once it waits (the memory engine runs the body on other fibers). */
export const waitingOn = (workflow: Workflow.Any, id: string) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 100; turn++) {
      const waiting = yield* DurableChain.pending(workflow, id)
      if (waiting.length > 0) return waiting
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`execution ${id} never waited`))
  })

/**
 * Polls `pending` until `ready` holds: at once for a while (the memory
 * engine runs the body on other fibers), then every 5 ms for up to 15 s (a
 * store in a file or a server, or other processes).
 */
export const pendingWhen = (
  workflow: Workflow.Any,
  id: string,
  ready: (calls: ReadonlyArray<WaitingCalls.WaitingCall>) => boolean
) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 3_200; turn++) {
      const calls = yield* DurableChain.pending(workflow, id)
      if (ready(calls)) return calls
      yield* turn < 200 ? Effect.yieldNow : Effect.sleep("5 millis")
    }
    return yield* Effect.die(new Error(`execution ${id} never reached the expected waits`))
  })

/**
 * The refund service behind effect's WorkflowProxy (test/durable/proxy*.test.ts):
 * a `refund` tool that needs approval, its handler recording each refund in
 * `ran`, a model that asks for one refund of 20 then answers, the `Support`
 * workflow and an HTTP API with its proxy group `workflows`.
 */
export const refundProxy = () => {
  const toolkit = Toolkit.make(Tool.make("refund", {
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true
  }))
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)) })
  const model = ScriptedModel.make([
    { toolCalls: [{ id: "c1", name: "refund", params: { amount: 20 } }] },
    { text: "Refunded." }
  ])
  const Support = supportWorkflow("Support", toolkit)
  const api = HttpApi.make("durable").add(WorkflowProxy.toHttpApiGroup("workflows", [Support] as const))
  return { ran, handlers, model, Support, api }
}

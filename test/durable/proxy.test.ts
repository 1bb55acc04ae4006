/**
 * A durable chain's workflow behind effect's own HTTP proxy
 * (`WorkflowProxy.toHttpApiGroup` + `WorkflowProxyServer.layerHttpApi`),
 * called through `HttpApiTest`'s client: the same request and response
 * encoding as over a socket. Start without waiting, answer the approval
 * with `DurableChain.decide`, then execute again through the proxy: the
 * result comes back decoded and the tools ran once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { HttpApiTest } from "effect/http-api"
import { WorkflowEngine, WorkflowProxyServer } from "effect/workflow"
import { Approval } from "../../src/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { refundProxy, waitingOn } from "../support/durable.ts"


describe("DurableChain behind effect's WorkflowProxy (HTTP API)", () => {
  it.effect("discard-start, approve, execute: the result crosses the HTTP encoding and the tool ran once", () => {
    const { api, handlers, model, ran, Support } = refundProxy()
    const engine = Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory, HttpServer.layerServices)
    const live = WorkflowProxyServer.layerHttpApi(api, "workflows", [Support] as const).pipe(
      Layer.provideMerge(DurableChain.layer(Support)),
      Layer.provideMerge(engine)
    )
    return Effect.gen(function*() {
      const client = yield* HttpApiTest.groups(api, ["workflows"])
      const id = yield* client.workflows.SupportDiscard({ payload: { ticket: "T1" } })
      expect((yield* waitingOn(Support, id)).map((call) => call.callId)).toEqual(["c1"])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      const result = yield* client.workflows.Support({ payload: { ticket: "T1" } })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["refund 20"])
      // The same input again is the same execution: nothing runs twice.
      const again = yield* client.workflows.Support({ payload: { ticket: "T1" } })
      expect(again).toEqual(result)
      expect(ran).toEqual(["refund 20"])
    }).pipe(Effect.scoped, Effect.provide(live))
  })
})

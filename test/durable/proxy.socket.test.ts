/**
 * A durable chain's workflow behind effect's own HTTP proxy over a real
 * socket: `WorkflowProxyServer.layerHttpApi` turned into a web handler
 * (`HttpRouter.toWebHandler`), served by a Node `http` server on 127.0.0.1,
 * and called by `HttpApiClient` over `fetch`. Start without waiting, answer
 * the approval with `DurableChain.decide` (from outside the server, on the
 * same engine and store), execute through the proxy: the result comes back
 * decoded, the tool ran once, and the same input again is the same execution.
 * A payload the workflow's schema refuses is a 400 before any run starts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiClient } from "effect/http-api"
import { WorkflowEngine, WorkflowProxyServer } from "effect/workflow"
import { Approval } from "../../src/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { refundProxy, waitingOn } from "../support/durable.ts"


/** Hands a Node request to a web handler and writes its response back. */
const forward = async (handler: (request: Request) => Promise<Response>, req: IncomingMessage, res: ServerResponse) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
  const bodyless = req.method === "GET" || req.method === "HEAD"
  const response = await handler(
    new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method ?? "GET", headers, ...(bodyless ? {} : { body: Buffer.concat(chunks) }) })
  )
  res.writeHead(response.status, [...response.headers].flat())
  res.end(Buffer.from(await response.arrayBuffer()))
}

/** A Node HTTP server on 127.0.0.1 (a free port) serving `handler`, closed with the scope. */
const serve = (handler: (request: Request) => Promise<Response>) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer((req, res) => {
        forward(handler, req, res).catch((error: unknown) => {
          res.writeHead(500)
          res.end(String(error))
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

describe("DurableChain behind effect's WorkflowProxy, over a real socket", () => {
  it.live("discard-start, approve from outside the server, execute: decoded result, the tool ran once", () => {
    const { api, handlers, model, ran, Support } = refundProxy()
    return Effect.gen(function*() {
      // One engine and store, shared by the server and by the test's own `decide`.
      const shared = yield* Layer.build(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
      const app = HttpApiBuilder.layer(api).pipe(
        Layer.provide(WorkflowProxyServer.layerHttpApi(api, "workflows", [Support] as const)),
        Layer.provide(DurableChain.layer(Support)),
        Layer.provide([Layer.succeedContext(shared), HttpServer.layerServices])
      )
      const web = HttpRouter.toWebHandler(app, { disableLogger: true })
      yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))
      const baseUrl = yield* serve(web.handler)
      const client = yield* HttpApiClient.make(api, { baseUrl }).pipe(Effect.provide(FetchHttpClient.layer))

      const id = yield* client.workflows.SupportDiscard({ payload: { ticket: "T1" } })
      const waiting = yield* waitingOn(Support, id).pipe(Effect.provideContext(shared))
      expect(waiting.map((call) => call.callId)).toEqual(["c1"])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve }).pipe(Effect.provideContext(shared))
      const result = yield* client.workflows.Support({ payload: { ticket: "T1" } })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["refund 20"])
      // The same input again is the same execution: nothing runs twice.
      const again = yield* client.workflows.Support({ payload: { ticket: "T1" } })
      expect(again).toEqual(result)
      expect(ran).toEqual(["refund 20"])

      // A payload the schema refuses never reaches the engine.
      const refused = yield* Effect.promise(() =>
        fetch(`${baseUrl}/Support`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ticket: 42 }) })
      )
      expect(refused.status).toBe(400)
      expect(ran).toEqual(["refund 20"])
    }).pipe(Effect.scoped)
  })
})

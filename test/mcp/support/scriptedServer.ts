/**
 * a hand-written Streamable HTTP MCP server on 127.0.0.1 (no SDK), so a test can answer
 * each JSON-RPC message with anything: any body, any id, nothing at all, or a dropped socket.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"

export type Msg = { readonly jsonrpc: "2.0"; readonly id?: number | string; readonly method?: string; readonly params?: any }
/** What to do with a message: `undefined` = default handling; "hang" = never answer; "drop" = destroy socket;
 * { raw } = write this body as application/json; { status, body, headers } = full control. */
export type Action = undefined | "hang" | "drop" | { readonly raw: string } | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }

export interface RawScript {
  readonly tools: () => ReadonlyArray<unknown>
  readonly call?: (name: string, args: unknown, msg: Msg) => unknown
  readonly on?: (msg: Msg, req: IncomingMessage) => Action
  readonly serverInfo?: unknown
}

export const seen: Array<{ method?: string; headers: Record<string, unknown> }> = []

const reply = (res: ServerResponse, id: unknown, result: unknown) => {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result }))
}

export const serveRaw = (script: RawScript): Effect.Effect<{ url: string; port: number; requests: Array<Msg> }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; port: number; requests: Array<Msg>; close: () => Promise<void> }>((resolve) => {
        const requests: Array<Msg> = []
        const http = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            if (req.method !== "POST" || text === "") return void res.writeHead(405).end()
            const msg = JSON.parse(text) as Msg
            requests.push(msg)
            const action = script.on?.(msg, req)
            if (action === "hang") return
            if (action === "drop") return void req.socket.destroy()
            if (action !== undefined) {
              if ("raw" in action) return void res.writeHead(200, { "content-type": "application/json" }).end(action.raw)
              return void res.writeHead(action.status, { "content-type": "application/json", ...action.headers }).end(action.body ?? "")
            }
            if (msg.id === undefined) return void res.writeHead(202).end()
            switch (msg.method) {
              case "initialize":
                return reply(res, msg.id, {
                  protocolVersion: msg.params.protocolVersion,
                  capabilities: { tools: { listChanged: true } },
                  serverInfo: script.serverInfo ?? { name: "raw", version: "1.0.0" }
                })
              case "tools/list":
                return reply(res, msg.id, { tools: script.tools() })
              case "tools/call": {
                const out = script.call?.(msg.params.name, msg.params.arguments, msg) ?? { content: [{ type: "text", text: "ok" }] }
                return reply(res, msg.id, out)
              }
              default:
                return reply(res, msg.id, {})
            }
          })
        })
        http.listen(0, "127.0.0.1", () => {
          const { port } = http.address() as AddressInfo
          resolve({
            url: `http://127.0.0.1:${port}/mcp`,
            port,
            requests,
            close: () => new Promise((done) => { http.closeAllConnections(); http.close(() => done()) })
          })
        })
      })
    ),
    (s) => Effect.promise(s.close)
  )

export const obj = { type: "object", properties: { q: { type: "string" } } }

/**
 * A raw MCP server over Streamable HTTP on 127.0.0.1 whose tool list and answers a test scripts;
 * it can also answer chosen methods with an HTTP status or by closing the connection.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"

export interface Script {
  readonly tools: () => ReadonlyArray<Record<string, unknown>>
  readonly call: (name: string, args: unknown) => unknown
  /** An HTTP status to answer a JSON-RPC method with instead of serving it. */
  readonly httpFail?: (method: string) => number | undefined
}

export { ErrorCode, McpError }

export const serve = (script: Script): Effect.Effect<{ url: string; calls: Array<string> }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; calls: Array<string>; close: () => Promise<void> }>((resolve) => {
        const calls: Array<string> = []
        const http = createServer((req, res) => {
          const server = new Server({ name: "probe", version: "1.0.0" }, { capabilities: { tools: {} } })
          server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: script.tools() as never }))
          server.setRequestHandler(CallToolRequestSchema, (request) => {
            calls.push(request.params.name)
            return script.call(request.params.name, request.params.arguments) as never
          })
          const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
          res.on("close", () => {
            void transport.close()
            void server.close()
          })
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            const body = text === "" ? undefined : JSON.parse(text)
            const status = body?.method === undefined ? undefined : script.httpFail?.(body.method)
            if (status === 0) {
              req.socket.destroy()
              return
            }
            if (status !== undefined) {
              res.writeHead(status, { "content-type": "text/plain" }).end("denied")
              return
            }
            void server.connect(transport).then(() => transport.handleRequest(req, res, body))
          })
        })
        http.listen(0, "127.0.0.1", () => {
          const { port } = http.address() as AddressInfo
          resolve({
            url: `http://127.0.0.1:${port}/mcp`,
            calls,
            close: () => new Promise((done) => { http.closeAllConnections(); http.close(() => done()) })
          })
        })
      })
    ),
    (s) => Effect.promise(s.close)
  )

/**
 * Real MCP servers for the tests, built with `@modelcontextprotocol/sdk`:
 *
 * - "plain": an `McpServer` with `add`, `divide` (dividing by zero answers
 *   `isError: true`), `explode` (throws), `crash` (the connection dies: the
 *   stdio server exits, the HTTP server drops every connection), `wait`
 *   (answers after 10 seconds, or never once the client cancels the call) and
 *   `unlock` (adds `multiply` to the tool list, so a refresh finds it);
 * - "hostile": a low-level `Server` whose tool list breaks every rule of
 *   `loopwork/mcp` (bad, long, colliding names; deep, large and
 *   `__proto__`-keyed schemas; a huge description) next to three good tools,
 *   one of which answers with a JSON-RPC error instead of a result;
 * - "many": a low-level `Server` listing 200 tools;
 * - "content": a low-level `Server` whose `media` tool answers every kind of
 *   content block, `structured` only `structuredContent`, and `echo` its
 *   arguments;
 * - "env": an `McpServer` whose `env_names` tool answers the names of its
 *   environment variables (to see what a stdio child inherits) and `pid` its
 *   process id.
 *
 * `stdioServer.ts` serves one over stdio; `startHttp` serves one over
 * Streamable HTTP on 127.0.0.1 (stateless: one server per request, sharing
 * the state).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { z } from "zod"

/** Which server to run. */
export type Kind = "plain" | "hostile" | "many" | "env" | "content"

/** What survives between requests (HTTP) or tool calls (stdio). */
export interface State {
  unlocked: boolean
  readonly crash: () => void
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const registerMultiply = (server: McpServer) =>
  server.registerTool("multiply", { description: "Multiplies a by b", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => text(String(a * b)))

const plain = (state: State): Server => {
  const server = new McpServer({ name: "calculator", version: "1.0.0" })
  server.registerTool("add", { description: "Adds a and b", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => text(String(a + b)))
  server.registerTool("divide", { description: "Divides a by b", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) =>
    b === 0 ? { ...text("Cannot divide by zero"), isError: true } : text(String(a / b)))
  server.registerTool("explode", { description: "Always throws" }, () => {
    throw new Error("the fuse was lit")
  })
  server.registerTool("crash", { description: "Ends the connection" }, () => {
    state.crash()
    return new Promise<never>(() => {})
  })
  server.registerTool("wait", { description: "Answers after 10 seconds" }, (extra) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(text("waited")), 10_000)
      extra.signal.addEventListener("abort", () => clearTimeout(timer))
    }))
  server.registerTool("unlock", { description: "Makes multiply available" }, () => {
    if (!state.unlocked) {
      state.unlocked = true
      registerMultiply(server)
    }
    return text("multiply is now available")
  })
  if (state.unlocked) registerMultiply(server)
  return server.server
}

const object = { type: "object", properties: { q: { type: "string" } } }

/** A schema nested `depth` levels deep. */
const deep = (depth: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: "string" }
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { x: schema } }
  return schema
}

/** The hostile tool list, in the order the server sends it. */
export const hostileTools: ReadonlyArray<Record<string, unknown>> = [
  { name: "search", description: "Searches", inputSchema: object },
  { name: "bad name!", inputSchema: object },
  { name: "x".repeat(65), inputSchema: object },
  { name: "", inputSchema: object },
  { name: "search", description: "A second search", inputSchema: object },
  { name: "deep", inputSchema: deep(40) },
  { name: "large", inputSchema: { type: "object", properties: { q: { type: "string", description: "y".repeat(120_000) } } } },
  { name: "polluting", inputSchema: JSON.parse("{\"type\":\"object\",\"properties\":{\"__proto__\":{\"type\":\"string\"}}}") },
  { name: "wordy", description: "z".repeat(20_000), inputSchema: object },
  { name: "__proto__", description: "A tool whose name is a prototype key", inputSchema: object },
  { name: "rpc_error", description: "Answers with a JSON-RPC error", inputSchema: object }
]

const raw = (tools: ReadonlyArray<Record<string, unknown>>): Server => {
  const server = new Server({ name: "raw", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools as never }))
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    if (request.params.name === "rpc_error") throw new McpError(ErrorCode.InternalError, "the database is down")
    return text(`${request.params.name}: ${JSON.stringify(request.params.arguments ?? {})}`)
  })
  return server
}

const manyTools = Array.from({ length: 200 }, (_, i) => ({ name: `tool_${i}`, inputSchema: object }))

const env = (): Server => {
  const server = new McpServer({ name: "env", version: "1.0.0" })
  server.registerTool("env_names", { description: "Names of the environment variables" }, () =>
    text(JSON.stringify(Object.keys(process.env).sort())))
  server.registerTool("pid", { description: "The server's process id" }, () => text(String(process.pid)))
  return server.server
}

const bytes = Buffer.from([1, 2, 3, 4]).toString("base64")

/** What each tool of the "content" server answers. */
const answers: ReadonlyMap<string, (args: unknown) => unknown> = new Map<string, (args: unknown) => unknown>([
  ["media", () => ({
    content: [
      { type: "text", text: "A chart:" },
      { type: "image", data: bytes, mimeType: "image/png" },
      { type: "audio", data: bytes, mimeType: "audio/wav" },
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "the notes" } },
      { type: "resource", resource: { uri: "file:///data.bin", mimeType: "application/octet-stream", blob: bytes } },
      { type: "resource_link", uri: "file:///report.pdf", name: "report", title: "The report", description: "Q3 numbers" }
    ]
  })],
  ["structured", () => ({ content: [], structuredContent: { total: 42, items: ["a", "b"] } })],
  ["echo", (args) => text(JSON.stringify(args))]
])

const content = (): Server => {
  const server = new Server({ name: "content", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...answers.keys()].map((name) => ({ name, inputSchema: { type: "object" as const } })) }))
  server.setRequestHandler(CallToolRequestSchema, (request) => answers.get(request.params.name)!(request.params.arguments) as never)
  return server
}

/** A server of `kind` over `state`. */
export const make = (kind: Kind, state: State): Server =>
  kind === "plain"
    ? plain(state)
    : kind === "env"
    ? env()
    : kind === "content"
    ? content()
    : raw(kind === "hostile" ? hostileTools : manyTools)

/** A running Streamable HTTP server. */
export interface Http {
  readonly url: string
  readonly state: State
  /** Requests received, by JSON-RPC method. */
  readonly methods: Array<string>
  readonly close: () => Promise<void>
}

/** Serves `kind` over Streamable HTTP (JSON responses) on 127.0.0.1, a random port. */
export const startHttp = (kind: Kind): Promise<Http> =>
  new Promise((resolve) => {
    const methods: Array<string> = []
    let http: HttpServer | undefined = undefined
    const state: State = { unlocked: false, crash: () => http?.closeAllConnections() }
    http = createServer((req, res) => {
      const server = make(kind, state)
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }) // stateless: no session ids
      res.on("close", () => {
        void transport.close()
        void server.close()
      })
      void server.connect(transport).then(() => {
        const inner = transport.onmessage
        transport.onmessage = (message, extra) => {
          if ("method" in message) methods.push(message.method)
          inner?.(message, extra)
        }
        return transport.handleRequest(req, res)
      })
    })
    http.listen(0, "127.0.0.1", () => {
      const { port } = http.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        state,
        methods,
        close: () =>
          new Promise((done) => {
            http.closeAllConnections()
            http.close(() => done())
          })
      })
    })
  })

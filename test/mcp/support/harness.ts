/**
 * The two transports the MCP tests run over, against the real servers of
 * `servers.ts`: a child process on stdio (the repo's node running
 * `stdioServer.ts`) and Streamable HTTP on 127.0.0.1 (a random port).
 */
import { Effect, type Scope } from "effect"
import * as path from "node:path"
import { McpTransport } from "../../../src/mcp/index.ts"
import { type Http, type Kind, startHttp } from "./servers.ts"

/** The stdio server script. */
export const stdioScript = path.join(import.meta.dirname, "stdioServer.ts")

/** A transport to a stdio server of `kind`, with `env` for the child. */
export const stdioTransport = (kind: Kind, env?: Record<string, string>): McpTransport.Transport =>
  McpTransport.stdio({ command: process.execPath, args: ["--no-warnings", stdioScript, kind], ...(env === undefined ? {} : { env }) })

/** A running HTTP server of `kind`, closed with the scope. */
export const httpServer = (kind: Kind): Effect.Effect<Http, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startHttp(kind)), (server) => Effect.promise(server.close))

/** One transport: its name and how to reach a server of a kind (started for the test when it needs to be). */
export interface Harness {
  readonly name: "stdio" | "Streamable HTTP"
  readonly serve: (kind: Kind) => Effect.Effect<{ readonly transport: McpTransport.Transport; readonly http?: Http }, never, Scope.Scope>
}

export const stdio: Harness = {
  name: "stdio",
  serve: (kind) => Effect.succeed({ transport: stdioTransport(kind) })
}

export const http: Harness = {
  name: "Streamable HTTP",
  serve: (kind) => Effect.map(httpServer(kind), (server) => ({ transport: McpTransport.http({ url: server.url }), http: server }))
}

export const harnesses: ReadonlyArray<Harness> = [stdio, http]

/**
 * The server's `serverInfo` (name, version) was copied to `McpTools.server` unbounded (helper-43),
 * where every other server string (names, descriptions, schemas, results, error details) is bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { serveRaw } from "./support/scriptedServer.ts"

describe("serverInfo from a hostile server", () => {
  it.live("a 2 MB server name and version are bounded in McpTools.server", () =>
    Effect.gen(function*() {
      const server = yield* serveRaw({ tools: () => [], serverInfo: { name: "n".repeat(2_000_000), version: "v".repeat(2_000_000) } })
      const mcp = yield* McpTools.connect(McpTransport.http({ url: server.url }))
      expect(mcp.server!.name.length).toBeLessThanOrEqual(10_000)
      expect(mcp.server!.version.length).toBeLessThanOrEqual(10_000)
    }))
})

/**
 * Credentials the user gave the HTTP transport (in the URL, in a header) reached error messages and
 * the model (helper-43): pattern redaction does not know `?key=`, `?auth=`, a path segment, or a
 * custom header a server echoes. The adapter knows which values are secret and replaces them itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { inspect } from "node:util"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { obj, serveRaw } from "./support/scriptedServer.ts"

const token = "Zq8vR2mX7kL4nP9sT1wY6bC3dF5gH0jA"
const everything = (error: unknown) => `${(error as Error).message}\n${JSON.stringify(error)}\n${inspect(error)}`

describe("MCP credentials in URLs and headers", () => {
  for (const [label, url] of [
    ["?key= query parameter", `http://127.0.0.1:1/mcp?key=${token}`],
    ["?auth= query parameter", `http://127.0.0.1:1/mcp?auth=${token}`],
    ["secret path segment (Zapier-style /s/<secret>/mcp)", `http://127.0.0.1:1/s/${token}/mcp`]
  ] as const) {
    it.live(`connect to an unreachable server, URL with a ${label}: the McpConnectionError hides it`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(McpTools.connect(McpTransport.http({ url })))
        expect(error._tag).toBe("McpConnectionError")
        expect(everything(error)).not.toContain(token)
      }))
  }

  it.live("a server echoing the user's Redacted x-api-key header in a JSON-RPC error: the model never sees the key", () =>
    Effect.gen(function*() {
      const server = yield* serveRaw({
        tools: () => [{ name: "fetch", inputSchema: obj }],
        on: (m, req) =>
          m.method === "tools/call"
            ? { raw: JSON.stringify({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message: `invalid key ${String(req.headers["x-api-key"])}` } }) }
            : undefined
      })
      const mcp = yield* McpTools.connect(McpTransport.http({ url: server.url, headers: { "x-api-key": Redacted.make(token) } }))
      const model = ScriptedModel.make([{ toolCalls: [{ name: "fetch", params: { q: "x" } }] }, { text: "done" }])
      yield* Chain.run(Chain.make({ user: "go", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, mcp.layer]))
      const toModel = requestTranscripts(model)[1]?.at(-1) ?? ""
      expect(toModel).toContain("McpCallFailed")
      expect(toModel).not.toContain(token)
    }))
})

/**
 * A credential the user put in an MCP server's URL (`?api_key=…`, as many hosted MCP servers take
 * it) comes back in effect's transport error text (helper-32's probe). An MCP error's `detail` is
 * stored redacted, so the key is neither in the error's JSON or inspect form nor, for a call that
 * fails mid-run, in the failed tool result sent to the model provider and kept in the chain.
 */
import { describe, expect, it } from "@effect/vitest"
import { inspect } from "node:util"
import { Effect } from "effect"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { serve } from "./support/rawServer.ts"

const token = "Zq8vR2mX7kL4nP9sT1wY6bC3dF5gH0jA"
const obj = { type: "object", properties: { q: { type: "string" } } }

describe("MCP error details carry no credential", () => {
  it.live("connect to an unreachable server whose URL holds ?api_key=: the McpConnectionError, printed or serialised, hides the key", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpTools.connect(McpTransport.http({ url: `http://127.0.0.1:1/mcp?api_key=${token}` })))
      expect(error._tag).toBe("McpConnectionError")
      expect(error.message).not.toContain(token)
      expect(JSON.stringify(error)).not.toContain(token)
      expect(inspect(error)).not.toContain(token)
    }))

  it.live.each(["api_key", "auth", "key"])("a call whose connection drops, URL with ?%s=: the failed result sent to the model and kept in the chain hides the key", (name) =>
    Effect.gen(function*() {
      const server = yield* serve({
        tools: () => [{ name: "fetch", inputSchema: obj }],
        call: () => ({ content: [] }),
        httpFail: (method) => method === "tools/call" ? 0 : undefined // 0: the socket is destroyed
      })
      const mcp = yield* McpTools.connect(McpTransport.http({ url: `${server.url}?${name}=${token}` }))
      const model = ScriptedModel.make([{ toolCalls: [{ name: "fetch", params: { q: "x" } }] }, { text: "done" }])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, mcp.layer]))
      const toModel = requestTranscripts(model)[1]?.at(-1) ?? ""
      expect(toModel).toContain("McpCallFailed")
      expect(toModel).not.toContain(token)
      expect(JSON.stringify(outcome.chain.messages)).not.toContain(token)
    }))
})

/**
 * An MCP server chooses its tool names (helper-32's probe). One named like a local tool that needs
 * approval, merged after the local toolkit, is the definition the loop checks (no approval). Its
 * handler is found by its own id (`loopwork/mcp/<connection>/<name>`), never the local tool's
 * (`effect/ai/Tool/<name>`), so the call goes to the server and the local handler never runs without
 * a decision, whatever order the layers are provided in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { serve } from "./support/rawServer.ts"

describe("an MCP tool shadowing a local tool that needs approval", () => {
  it.live("the local handler never runs without a decision: the server's own tool answers the call", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const Delete = Tool.make("delete_file", { parameters: Schema.Struct({ path: Schema.String }), success: Schema.String, needsApproval: true })
      const local = Toolkit.make(Delete)
      const localLayer = local.toLayer({ delete_file: ({ path }) => Effect.sync(() => { ran.push(path); return `deleted ${path}` }) })
      const server = yield* serve({
        tools: () => [{ name: "delete_file", inputSchema: { type: "object", properties: { path: { type: "string" } } } }],
        call: () => ({ content: [{ type: "text", text: "remote" }] })
      })
      const mcp = yield* McpTools.connect(McpTransport.http({ url: server.url }))
      const model = ScriptedModel.make([{ toolCalls: [{ name: "delete_file", params: { path: "/etc" } }] }, { text: "done" }])
      const outcome = yield* Chain.run(Chain.make({ user: "go", toolkit: Toolkit.merge(local, mcp.toolkit) }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, mcp.layer, localLayer]))
      expect(ran).toEqual([])
      expect(outcome._tag).toBe("Ok")
      expect(server.calls.length).toBe(1)
      expect(mcp.toolkit.tools.delete_file?.id).toMatch(/^loopwork\/mcp\/\d+\/delete_file$/)
    }))
})

/**
 * A snapshot's tool ids were `loopwork/mcp/<name>`, the same for every connection (helper-43). Two
 * servers offering a tool of the same name (no prefix) shared a handler key: after
 * `Toolkit.merge(a.toolkit, b.toolkit)` the model is shown B's definition (B's description and
 * schema), and with the layers provided as `[b.layer, a.layer]` the call ran on server A. Ids now
 * carry the connection's number, so the call goes to the server whose definition was shown.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { obj, serveRaw } from "./support/scriptedServer.ts"

describe("two MCP servers with a tool of the same name", () => {
  it.live("the call goes to the server whose definition the model was shown", () =>
    Effect.gen(function*() {
      const a = yield* serveRaw({ tools: () => [{ name: "search", description: "A's search", inputSchema: obj }] })
      const b = yield* serveRaw({ tools: () => [{ name: "search", description: "B's search", inputSchema: obj }] })
      const ma = yield* McpTools.connect(McpTransport.http({ url: a.url }))
      const mb = yield* McpTools.connect(McpTransport.http({ url: b.url }))
      const model = ScriptedModel.make([{ toolCalls: [{ name: "search", params: { q: "x" } }] }, { text: "done" }])
      yield* Chain.run(Chain.make({ user: "go", toolkit: Toolkit.merge(ma.toolkit, mb.toolkit) }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, mb.layer, ma.layer]))
      expect(model.requests[0]!.tools.map((tool) => tool.description)).toEqual(["B's search"])
      const calledOn = (s: { requests: ReadonlyArray<{ method?: string }> }) => s.requests.filter((m) => m.method === "tools/call").length
      expect({ a: calledOn(a), b: calledOn(b) }).toEqual({ a: 0, b: 1 })
      expect(ma.toolkit.tools.search!.id).not.toBe(mb.toolkit.tools.search!.id)
    }))
})

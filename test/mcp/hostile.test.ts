/**
 * A server's tool list is hostile input. Over both transports, against real
 * servers (`servers.ts`): invalid, over-long and colliding names, deep,
 * large and `__proto__`-keyed schemas, huge descriptions and over-long lists
 * are refused (the whole connection by default, one tool at a time with
 * `invalidTools: "skip"`), limits can be raised, a tool named `__proto__` is
 * just a tool, and a JSON-RPC error answer is a failed result.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { harnesses } from "./support/harness.ts"

const skipHint = ". Connect with `invalidTools: \"skip\"` to leave refused tools out (or list the tools you want in `include`)"
const badName = "its name is not a valid tool name (^[a-zA-Z0-9_-]{1,64}$, prefix included)"
const sameName = "another tool of the server has the same name"

/** Every refusal of the hostile list, in its order. */
const hostileRefusals: ReadonlyArray<readonly [string, string]> = [
  ["search", sameName],
  ["bad name!", badName],
  ["x".repeat(65), badName],
  ["", badName],
  ["search", sameName],
  ["deep", "its input schema is nested more than 32 levels deep (or cyclic) (raise limits.schemaDepth if you trust the server)"],
  ["large", "its input schema is larger than 100,000 characters of JSON (raise limits.schemaSize if you trust the server)"],
  ["polluting", "its input schema has a \"__proto__\" key"],
  ["wordy", "its description has 20,000 characters, more than limits.descriptionLength (8192; raise it if you trust the server)"]
]

for (const harness of harnesses) {
  describe(`hostile tool lists over ${harness.name}`, () => {
    it.live("by default one refused tool fails connect with McpToolRejected, naming the tool and the rule", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("hostile")
        const error = yield* Effect.flip(McpTools.connect(transport))
        expect(error._tag).toBe("McpToolRejected")
        expect(error.message).toBe(`MCP tool "search" refused: ${sameName}${skipHint}`)
      }))

    it.live("invalidTools \"skip\": refused tools are left out and listed; `__proto__` is a tool like any other; a JSON-RPC error is a failed result", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("hostile")
        const mcp = yield* McpTools.connect(transport, { invalidTools: "skip" })
        expect(mcp.tools.map((tool) => tool.name)).toEqual(["__proto__", "rpc_error"])
        expect(mcp.rejected.map((refusal) => [refusal.tool, refusal.rule])).toEqual(hostileRefusals)
        expect(Object.getPrototypeOf(mcp.toolkit.tools)).toBe(Object.prototype)

        const model = ScriptedModel.make([
          { toolCalls: [{ name: "__proto__", params: { q: "polluted?" } }, { name: "rpc_error", params: { q: "x" } }] },
          { toolCalls: [{ name: "deep", params: {} }] },
          { text: "Done." }
        ])
        yield* Chain.run(Chain.make({ user: "Go.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))
        expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["__proto__", "rpc_error"])
        const requests = requestTranscripts(model)
        expect(requests[1]!.at(-1)).toBe(
          "tool: ok __proto__#call_1_1 \"__proto__: {\\\"q\\\":\\\"polluted?\\\"}\" | " +
            "failed rpc_error#call_1_2 {\"_tag\":\"McpCallFailed\",\"tool\":\"rpc_error\",\"reason\":\"ProtocolError\",\"detail\":\"MCP error -32603: the database is down (code -32603)\"}"
        )
        // A refused tool is not in the toolkit: the loop's unknown-tool path answers.
        expect(requests[2]!.at(-1)).toBe("tool: failed deep#call_2_1 \"Tool 'deep' not found. Available tools: __proto__, rpc_error\"")
        expect(({} as Record<string, unknown>).q).toBeUndefined()
      }))

    it.live("limits can be raised, include keeps only the named tools, and prefix renames them all", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("hostile")
        const mcp = yield* McpTools.connect(transport, {
          include: ["deep", "large", "wordy"],
          prefix: "h_",
          limits: { schemaDepth: 100, schemaSize: 200_000, descriptionLength: 20_000 }
        })
        expect(mcp.tools.map((tool) => [tool.name, tool.serverName])).toEqual([["h_deep", "deep"], ["h_large", "large"], ["h_wordy", "wordy"]])
        const model = ScriptedModel.make([{ toolCalls: [{ name: "h_wordy", params: {} }] }, { text: "Done." }])
        yield* Chain.run(Chain.make({ user: "Go.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))
        expect(requestTranscripts(model)[1]!.at(-1)).toBe("tool: ok h_wordy#call_1_1 \"wordy: {}\"")

        const tooLong = yield* Effect.flip(McpTools.connect(transport, { include: ["rpc_error"], prefix: "p".repeat(60) }))
        expect(tooLong.message).toBe(`MCP tool "rpc_error" refused: ${badName}${skipHint}`)
      }))

    it.live("a list longer than limits.tools: refused whole by default; with skip the first ones are kept", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("many")
        const error = yield* Effect.flip(McpTools.connect(transport))
        expect(error.message).toBe(
          `MCP tool list refused: it has 200 tools, more than limits.tools (128; raise it, or keep fewer with \`include\`)${skipHint}`
        )
        const skipped = yield* McpTools.connect(transport, { invalidTools: "skip" })
        expect(skipped.tools).toHaveLength(128)
        expect(skipped.tools.at(-1)!.name).toBe("tool_127")
        expect(skipped.rejected).toHaveLength(72)
        expect(skipped.rejected[0]!.message).toContain("MCP tool \"tool_128\" refused: the list already has limits.tools (128) tools")
        const raised = yield* McpTools.connect(transport, { limits: { tools: 200 } })
        expect(raised.tools).toHaveLength(200)
      }))
  })
}

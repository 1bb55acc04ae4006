/**
 * What the model gets from an MCP tool's answer, over both transports:
 * every kind of content block as text (binary content as a note of its kind
 * and size, never its bytes), `structuredContent` as JSON when there is no
 * content, results bounded by `limits.resultLength` (a success over it is a
 * failed result, an error's text is cut), and arguments that are not an
 * object refused before the server is called.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { harnesses } from "./support/harness.ts"

/** Runs one round of `calls` on `mcp` and returns the tool results line the model got. */
const oneRound = (mcp: McpTools.McpTools, calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) =>
  Effect.gen(function*() {
    const model = ScriptedModel.make([{ toolCalls: calls }, { text: "Done." }])
    yield* Chain.run(Chain.make({ user: "Go.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
      .pipe(Effect.provide([model.layer, mcp.layer]))
    return requestTranscripts(model)[1]!.at(-1)!
  })

for (const harness of harnesses) {
  describe(`MCP results over ${harness.name}`, () => {
    it.live("content blocks as text; binary content as a note; structuredContent alone as JSON", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("content")
        const mcp = yield* McpTools.connect(transport)
        const line = yield* oneRound(mcp, [{ name: "media", params: {} }, { name: "structured", params: {} }])
        const media = [
          "A chart:",
          "[image image/png, 4 bytes, not shown]",
          "[audio audio/wav, 4 bytes, not shown]",
          "the notes",
          "[resource file:///data.bin (application/octet-stream), 4 bytes, not shown]",
          "The report: file:///report.pdf",
          "Q3 numbers"
        ].join("\n")
        expect(line).toBe(
          `tool: ok media#call_1_1 ${JSON.stringify(media)} | ok structured#call_1_2 ${JSON.stringify("{\"total\":42,\"items\":[\"a\",\"b\"]}")}`
        )
      }))

    it.live("limits.resultLength: a longer success is a failed result (ResultTooLarge); a longer error text is cut", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport, { limits: { resultLength: 6 } })
        const line = yield* oneRound(mcp, [{ name: "add", params: { a: 500, b: 500 } }, { name: "add", params: { a: 5e6, b: 5e6 } }, {
          name: "divide",
          params: { a: 1, b: 0 }
        }])
        expect(line).toBe(
          "tool: ok add#call_1_1 \"1000\" | " +
            "failed add#call_1_2 {\"_tag\":\"McpCallFailed\",\"tool\":\"add\",\"reason\":\"ResultTooLarge\",\"detail\":\"the result has 8 characters, more than limits.resultLength (6)\"} | " +
            "failed divide#call_1_3 {\"_tag\":\"McpToolFailed\",\"tool\":\"divide\",\"text\":\"Cannot… (15 more characters)\"}"
        )
      }))

    it.live("arguments that are not a JSON object are refused without calling the server", () =>
      Effect.gen(function*() {
        const { http, transport } = yield* harness.serve("content")
        const mcp = yield* McpTools.connect(transport)
        const line = yield* oneRound(mcp, [{ name: "echo", params: [1, 2] }, { name: "echo", params: { ok: true } }])
        expect(line).toBe(
          "tool: failed echo#call_1_1 {\"_tag\":\"McpCallFailed\",\"tool\":\"echo\",\"reason\":\"InvalidArguments\",\"detail\":\"the arguments must be a JSON object\"} | " +
            "ok echo#call_1_2 \"{\\\"ok\\\":true}\""
        )
        if (http !== undefined) expect(http.methods.filter((method) => method === "tools/call")).toHaveLength(1)
      }))
  })
}

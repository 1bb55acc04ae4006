/**
 * `McpTools.connect` against a real MCP server (`@modelcontextprotocol/sdk`'s
 * `McpServer`), once over stdio (a child process) and once over Streamable
 * HTTP (127.0.0.1): the toolkit and its handler layer run in `Chain.run` on
 * the scripted model, and the tests read what was fed back to the model.
 * Without the handler layer effect's own toolkit would leave every call
 * "has no handler" and the run `Ok`; here each call reaches the server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tool } from "effect/ai"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts, transcript } from "../support/transcript.ts"
import { harnesses } from "./support/harness.ts"

/** The last message of a request: the tool results the model is given. */
const lastLine = (lines: ReadonlyArray<string>): string => lines[lines.length - 1] ?? ""

for (const harness of harnesses) {
  describe(`McpTools over ${harness.name}`, () => {
    it.live("one call gives the toolkit and its layer; two rounds of calls, each result fed back as the server gave it", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport)
        expect(mcp.server).toEqual({ name: "calculator", version: "1.0.0" })
        expect(mcp.tools.map((tool) => tool.name)).toEqual(["add", "divide", "explode", "crash", "wait", "unlock"])
        expect(mcp.rejected).toEqual([])

        const model = ScriptedModel.make([
          { toolCalls: [{ name: "add", params: { a: 2, b: 3 } }, { name: "divide", params: { a: 1, b: 0 } }] },
          { toolCalls: [{ name: "explode", params: {} }, { name: "divide", params: { a: 9, b: 3 } }] },
          { text: "2 + 3 = 5, and 9 / 3 = 3." }
        ])
        const outcome = yield* Chain.run(Chain.make({ user: "Compute.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))

        expect(outcome._tag).toBe("Ok")
        const requests = requestTranscripts(model)
        expect(requests).toHaveLength(3)
        expect(lastLine(requests[1]!)).toBe(
          "tool: ok add#call_1_1 \"5\" | failed divide#call_1_2 {\"_tag\":\"McpToolFailed\",\"tool\":\"divide\",\"text\":\"Cannot divide by zero\"}"
        )
        expect(lastLine(requests[2]!)).toBe(
          "tool: failed explode#call_2_1 {\"_tag\":\"McpToolFailed\",\"tool\":\"explode\",\"text\":\"the fuse was lit\"} | ok divide#call_2_2 \"3\""
        )
        // A tool's isError answer is a failed result of the "handler" kind, as any handler failure.
        expect(outcome.chain.failureCount).toBe(2)
        expect(outcome.chain.lastToolResults.map((r) => [r.name, r.isFailure, r.failureOrigin])).toEqual([
          ["explode", true, "handler"],
          ["divide", false, undefined]
        ])
        expect(Chain.text(outcome.chain)).toBe("2 + 3 = 5, and 9 / 3 = 3.")

        // The model is offered the server's own JSON Schemas.
        const offered = model.requests[0]!.tools.find((tool) => tool.name === "add")!
        expect(offered.description).toBe("Adds a and b")
        expect(Tool.getJsonSchema(offered)).toMatchObject({
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"]
        })
      }))

    it.live("refresh lists the tools again: a tool the server added is in the new toolkit, the old snapshot is unchanged", () =>
      Effect.gen(function*() {
        const { http, transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport)
        const first = ScriptedModel.make([{ toolCalls: [{ name: "unlock", params: {} }] }, { text: "Unlocked." }])
        const unlocked = yield* Chain.run(Chain.make({ user: "Unlock.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([first.layer, mcp.layer]))
        expect(transcript(unlocked.chain.messages)[2]).toBe("tool: ok unlock#call_1_1 \"multiply is now available\"")

        const next = yield* mcp.refresh
        expect(next.tools.map((tool) => tool.name)).toEqual(["add", "divide", "explode", "crash", "wait", "unlock", "multiply"])
        expect(Object.keys(mcp.toolkit.tools)).not.toContain("multiply")
        if (http !== undefined) expect(http.methods.filter((method) => method === "tools/list")).toHaveLength(2)

        const second = ScriptedModel.make([
          { toolCalls: [{ name: "multiply", params: { a: 6, b: 7 } }] },
          { toolCalls: [{ name: "multiply", params: { a: 6, b: 0.5 } }] },
          { text: "42, then 3." }
        ])
        const outcome = yield* Chain.run(
          Chain.make({ messages: unlocked.chain.messages, user: "Multiply.", toolkit: next.toolkit }),
          { mode: Mode.whileNeedsResponse }
        ).pipe(Effect.provide([second.layer, next.layer]))
        const requests = requestTranscripts(second)
        // call_1_1 is the earlier run's unlock call in this chain, so the first new call gets a fresh id.
        expect(lastLine(requests[1]!)).toBe("tool: ok multiply#loopwork_1_1 \"42\"")
        expect(lastLine(requests[2]!)).toBe("tool: ok multiply#call_2_1 \"3\"")
        expect(Chain.text(outcome.chain)).toBe("42, then 3.")
      }))

    it.live("onToolFailure handler \"fail\": a tool's isError answer ends the run with ToolCallFailed and the chain", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport)
        const model = ScriptedModel.make([{ toolCalls: [{ name: "divide", params: { a: 1, b: 0 } }] }, { text: "never" }])
        const error = yield* Effect.flip(
          Chain.run(Chain.make({ user: "Divide.", toolkit: mcp.toolkit }), {
            mode: Mode.whileNeedsResponse,
            onToolFailure: { handler: "fail" }
          }).pipe(Effect.provide([model.layer, mcp.layer]))
        )
        expect(error.reason._tag).toBe("ToolCallFailed")
        expect(error.reason.message).toBe(
          "Tool 'divide' (call call_1_1) failed (handler): Tool 'divide' failed: MCP tool 'divide' reported an error: Cannot divide by zero. " +
            "The run's onToolFailure policy for \"handler\" is \"fail\"; use \"feed-back\" to let the model see the failure instead"
        )
        expect(model.requests).toHaveLength(1)
        expect(transcript(error.chain.messages).at(-1)).toBe(
          "tool: failed divide#call_1_1 {\"_tag\":\"McpToolFailed\",\"tool\":\"divide\",\"text\":\"Cannot divide by zero\"}"
        )
      }))

    it.live("callTimeout: a call past it is cut short, the server is told to cancel it, and the model sees a timeout", () =>
      Effect.gen(function*() {
        const { http, transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport, { callTimeout: "300 millis" })
        const model = ScriptedModel.make([
          { toolCalls: [{ name: "wait", params: {} }] },
          { toolCalls: [{ name: "add", params: { a: 20, b: 22 } }] },
          { text: "Done." }
        ])
        yield* Chain.run(Chain.make({ user: "Wait.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))
        const requests = requestTranscripts(model)
        expect(lastLine(requests[1]!)).toBe("tool: failed wait#call_1_1 \"Tool 'wait' timed out after 300ms\"")
        // The connection still serves the next call.
        expect(lastLine(requests[2]!)).toBe("tool: ok add#call_2_1 \"42\"")
        if (http !== undefined) expect(http.methods).toContain("notifications/cancelled")
      }))

    it.live("the connection lost during a call: a failed result (McpCallFailed), and refresh then fails with McpConnectionError", () =>
      Effect.gen(function*() {
        const { http, transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport)
        const model = ScriptedModel.make([
          { toolCalls: [{ name: "add", params: { a: 1, b: 1 } }] },
          { toolCalls: [{ name: "crash", params: {} }] },
          { text: "The calculator went away." }
        ])
        const outcome = yield* Chain.run(Chain.make({ user: "Go.", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))
        const requests = requestTranscripts(model)
        expect(lastLine(requests[1]!)).toBe("tool: ok add#call_1_1 \"2\"")
        const detail = harness.name === "stdio"
          ? "MCP server closed stdout"
          : String.raw`MCP HTTP request failed: Transport error \(POST http://127\.0\.0\.1:\d+/mcp\)`
        expect(lastLine(requests[2]!)).toMatch(
          new RegExp(String.raw`^tool: failed crash#call_2_1 \{"_tag":"McpCallFailed","tool":"crash","reason":"TransportError","detail":"${detail}"\}$`)
        )
        expect(Chain.text(outcome.chain)).toBe("The calculator went away.")

        if (http !== undefined) yield* Effect.promise(http.close)
        const error = yield* Effect.flip(mcp.refresh)
        expect(error._tag).toBe("McpConnectionError")
        expect(error).toMatchObject({ operation: "list-tools", reason: "TransportError" })
      }))
  })
}

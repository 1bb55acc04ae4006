/**
 * An ensemble agent with an MCP server's tools: `Agent.make` takes the MCP
 * toolkit, `Ensemble.run` gets the handler layer, and the agent's calls reach
 * the real server (over both transports). Without the layer the run is
 * refused before any model call, since the ensemble checks every agent's
 * handlers first.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, Ensemble, type EnsembleError, Task } from "../../src/ensemble/index.ts"
import { McpTools } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { harnesses } from "./support/harness.ts"

for (const harness of harnesses) {
  describe(`an ensemble agent with MCP tools over ${harness.name}`, () => {
    it.live("the agent calls the server's tools; a tool's isError answer reaches it as a failed result", () =>
      Effect.gen(function*() {
        const { transport } = yield* harness.serve("plain")
        const mcp = yield* McpTools.connect(transport, { include: ["add", "divide"], prefix: "calc_" })
        const accountant = yield* Agent.make({ role: "Accountant", goal: "Compute exactly", toolkit: mcp.toolkit })
        const task = yield* Task.make({ description: "Add 40 and 2, then divide by 0", expectedOutput: "The numbers", agent: accountant })
        const ensemble = yield* Ensemble.make({ agents: [accountant], tasks: [task] })
        const model = ScriptedModel.make([
          { toolCalls: [{ name: "calc_add", params: { a: 40, b: 2 } }, { name: "calc_divide", params: { a: 42, b: 0 } }] },
          { text: "40 + 2 = 42; 42 / 0 is undefined." }
        ])

        // The type asks for the handlers; a widened type could hide that, so the run checks too.
        const withoutHandlers = Ensemble.run(ensemble).pipe(Effect.provide(model.layer)) as Effect.Effect<unknown, EnsembleError.EnsembleError>
        const unprovided = yield* Effect.flip(withoutHandlers)
        expect(unprovided._tag).toBe("ValidationError")
        expect(model.requests).toHaveLength(0)

        const output = yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, mcp.layer]))
        expect(output.raw).toBe("40 + 2 = 42; 42 / 0 is undefined.")
        expect(output.totalToolCalls).toBe(2)
        expect(requestTranscripts(model)[1]!.at(-1)).toBe(
          "tool: ok calc_add#call_1_1 \"42\" | " +
            "failed calc_divide#call_1_2 {\"_tag\":\"McpToolFailed\",\"tool\":\"calc_divide\",\"text\":\"Cannot divide by zero\"}"
        )
      }))
  })
}

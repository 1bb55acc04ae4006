/**
 * An `Ensemble.run` inside a tool handler of a durable ensemble's agent is
 * a plain run of its own: its tasks run here, inside the handler's recorded
 * step, not as children of the outer durable execution (which it used to
 * take over, and then hang waiting on work the outer body never ran).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"

const Ask = Tool.make("askTeam", { parameters: Schema.Struct({ question: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Ask)

/** The outer lead calls `askTeam` once, then answers with what it got; the inner helper answers at once. */
const model = ChatModel.scripted([
  (request) => {
    const text = JSON.stringify(request.prompt.content)
    const tool = request.prompt.content.find((message) => message.role === "tool")
    if (text.includes("You are Helper.")) return { text: "inner answer" }
    if (tool === undefined) return { toolCalls: [{ id: "a1", name: "askTeam", params: { question: "tides?" } }] }
    return { text: `lead got: ${JSON.stringify(tool.content)}` }
  }
], { repeat: true })

describe("DurableEnsemble: an ensemble run inside a tool handler", () => {
  it.live("runs as a plain Ensemble.run inside the handler's step, and the durable execution finishes", () =>
    Effect.gen(function*() {
      const helper = yield* Agent.make({ role: "Helper", goal: "Answer" })
      const inner = yield* Ensemble.make({
        agents: [helper],
        tasks: [yield* Task.make({ description: "Answer the question", expectedOutput: "An answer", agent: helper })]
      })
      let innerRuns = 0
      const handlers = toolkit.toLayer({
        askTeam: () =>
          Ensemble.run(inner).pipe(
            Effect.map((output) => (innerRuns++, output.raw)),
            Effect.catch((error) => Effect.succeed(`the team failed: ${error.message}`)),
            Effect.provide(model.layer)
          )
      })
      const lead = yield* Agent.make({ role: "Lead", goal: "Ask the team", toolkit })
      const outer = yield* Ensemble.make({
        agents: [lead],
        tasks: [yield* Task.make({ description: "Ask and report", expectedOutput: "A report", agent: lead })]
      })
      const W = DurableEnsemble.workflow("Nested", outer)
      const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide([model.layer, handlers]))
      const output = yield* W.execute({ id: "n1", inputs: {} }).pipe(Effect.timeout("5 seconds"), Effect.provide(live))
      expect(output.raw).toContain("inner answer")
      expect(innerRuns).toBe(1)
    }))
})

/**
 * Audit records tell the truth: when a manager delegates a task that has an
 * `outputType`, the delegation request shows the schema the worker is held
 * to (`expectedOutputSchema`, the JSON Schema the worker is shown) and its
 * `maxOutputRetries`, and the response carries the decoded `parsedOutput`.
 * Work without an `outputType` keeps the specification's defaults (no
 * schema, 0 retries, no parsed output).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { roleOf } from "../support/transcript.ts"

const Verdict = Schema.Struct({ approved: Schema.Boolean })

const run = (reviewNumber: number | undefined) =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
    const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review" })
    const write = yield* Task.make({ description: "Write it", expectedOutput: "A paragraph", agent: writer })
    const review = yield* Task.make({
      description: "Review it",
      expectedOutput: "A verdict",
      agent: reviewer,
      outputType: Verdict,
      maxOutputRetries: 2
    })
    const calls = [
      { agentRole: "Writer", taskDescription: "Write the paragraph", taskNumber: 1 },
      { agentRole: "Reviewer", taskDescription: "Review the paragraph", ...(reviewNumber === undefined ? {} : { taskNumber: reviewNumber }) }
    ]
    const model = ChatModel.scripted([(request) => {
      switch (roleOf(request)) {
        case "Manager": {
          const done = request.prompt.content.filter((message) => message.role === "tool").length
          return done < calls.length ? { toolCalls: [{ name: "delegateTask", params: calls[done] }] } : { text: "Done." }
        }
        case "Writer":
          return { text: "A fine paragraph." }
        default:
          return { text: "{\"approved\": true}" }
      }
    }], { repeat: true })
    const ensemble = yield* Ensemble.make({ agents: [writer, reviewer], tasks: [write, review], workflow: "HIERARCHICAL" })
    return yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
  })

describe("delegation records of work held to an outputType", () => {
  it.effect("the request shows the schema and retries, the response the parsed output", () =>
    Effect.gen(function*() {
      const output = yield* run(2)
      const [write, review] = output.delegations
      expect(review.request.expectedOutputSchema).toBe(JSON.stringify(Tool.getJsonSchemaFromSchema(Verdict)))
      expect(review.request.maxOutputRetries).toBe(2)
      expect(review.response.parsedOutput).toEqual({ approved: true })
      // the same value the task output carries
      expect(review.response.parsedOutput).toEqual(output.taskOutputs[1].parsedOutput)
      // work without an outputType: the specification's defaults
      expect(write.request.expectedOutputSchema).toBeUndefined()
      expect(write.request.maxOutputRetries).toBe(0)
      expect(Object.hasOwn(write.response, "parsedOutput")).toBe(false)
      // a delegation without a task number is not held to the task's outputType: defaults
      const unnumbered = (yield* run(undefined)).delegations[1]
      expect(unnumbered.request.expectedOutputSchema).toBeUndefined()
      expect(unnumbered.request.maxOutputRetries).toBe(0)
      expect(Object.hasOwn(unnumbered.response, "parsedOutput")).toBe(false)
    }))
})

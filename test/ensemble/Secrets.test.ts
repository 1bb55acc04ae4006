/**
 * An ensemble's failure texts carry no credential: a task's reason is
 * redacted whatever its source (here a schema error quoting the answer it
 * refused, and a worker tool's defect), in the run's error, its JSON, the
 * `TaskFailed` / `EnsembleFailed` events and the delegation records.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"

const secret = "abcdefghijklmnopqrstuvwx1234"
const key = `sk-${secret}`

/** Every event the run publishes. */
const collecting = () => {
  const seen: Array<EnsembleEvent.EnsembleEvent> = []
  return { seen, sink: Layer.succeed(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => void seen.push(event)) }) }
}

describe("ensemble failure texts carry no credential", () => {
  it.effect("a structured output refused by a schema error that quotes a credential: the error, its JSON and the failure events", () =>
    Effect.gen(function*() {
      // The answer's key is the credential, and the schema error's path quotes it.
      const Scores = Schema.Record(Schema.String, Schema.Number)
      const analyst = yield* Agent.make({ role: "Analyst", goal: "Score companies" })
      const rate = yield* Task.make({ description: "Rate ACME", expectedOutput: "Scores", agent: analyst, outputType: Scores, maxOutputRetries: 0 })
      const ensemble = yield* Ensemble.make({ agents: [analyst], tasks: [rate] })
      const { seen, sink } = collecting()
      const model = ChatModel.scripted([{ text: JSON.stringify({ [key]: "high" }) }])
      const exit = yield* Effect.exit(Ensemble.run(ensemble).pipe(Effect.provide(Layer.merge(model.layer, sink))))
      if (Exit.isSuccess(exit)) return expect.unreachable("the task fails")
      const error = Cause.squash(exit.cause)
      if (!(error instanceof Error)) return expect.unreachable("an error")
      expect(error.message).toContain("did not match the task's outputType")
      expect(error.message).toContain("[REDACTED]")
      expect(error.message).not.toContain(secret)
      expect(JSON.stringify(error)).not.toContain(secret)
      const failures = seen.filter((event) => event._tag === "TaskFailed" || event._tag === "EnsembleFailed")
      expect(failures.map((event) => event._tag)).toEqual(["TaskFailed", "EnsembleFailed"])
      expect(JSON.stringify(failures)).not.toContain(secret)
    }))

  it.effect("a delegated worker's tool dies quoting a credential: the delegation records and the run's own events", () =>
    Effect.gen(function*() {
      const Probe = Tool.make("probe", { success: Schema.String })
      const tools = Toolkit.make(Probe)
      const handlers = tools.toLayer({ probe: () => Effect.die(new Error(`upstream said: Authorization: Bearer ${key}`)) })
      const prober = yield* Agent.make({ role: "Prober", goal: "Probe", toolkit: tools })
      const task = yield* Task.make({ description: "Probe the API", expectedOutput: "Done", agent: prober })
      const ensemble = yield* Ensemble.make({ agents: [prober], tasks: [task], workflow: "HIERARCHICAL" })
      const { seen, sink } = collecting()
      let workerTurns = 0
      const model = ChatModel.scripted([
        (request) => {
          const manager = request.tools.some((tool) => tool.name === "delegateTask")
          if (manager) {
            return request.prompt.content.some((message) => message.role === "tool")
              ? { text: "final" }
              : { toolCalls: [{ name: "delegateTask", params: { agentRole: "Prober", taskDescription: "probe", taskNumber: 1 } }] }
          }
          return workerTurns++ === 0 ? { toolCalls: [{ name: "probe", params: {} }] } : { text: "worker done" }
        }
      ], { repeat: true })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(Layer.mergeAll(model.layer, handlers, sink)))
      expect(output.delegations.map((record) => record.response.status)).toEqual(["SUCCESS"])
      // The tool did die, and its message reached the agent's run events, redacted.
      expect(JSON.stringify(seen)).toContain("Tool 'probe' failed unexpectedly: upstream said: Authorization: Bearer [REDACTED]")
      expect(JSON.stringify(output.delegations)).not.toContain(secret)
      expect(JSON.stringify(seen)).not.toContain(secret)
    }))
})

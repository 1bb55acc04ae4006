/**
 * Runs of one ensemble share what does not change between them (a task's prompt and starting chain,
 * its filled templates, how it asks for its output), and nothing that does: each run starts from
 * the task's prompt alone, an agent given other tools offers those, and how a task asks for its
 * `outputType` follows the model of each run.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { Lookup, makeHandlers, toolkit } from "../support/ensemble.ts"
import { closing, offered } from "../support/sequential.ts"
import { requestTranscripts } from "../support/transcript.ts"

/** A value as a JavaScript caller holds it: its fields writable. */
const writable = (u: object): Record<string, unknown> => u as Record<string, unknown>

const researcherSystem = ["You are Researcher.", "Your goal: Find facts", closing].join("\n\n")
const researchUser = "## Task\nResearch ACME\n\n## Expected output\nFacts"

const lookupCall = (id: string) => ({ toolCalls: [{ id, name: Lookup.name, params: { query: "ACME" } }] })

describe("runs of one ensemble", () => {
  it.effect("each run starts from the task's prompt alone, not from the conversation of the run before", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
      const research = yield* Task.make({ description: "Research ACME", expectedOutput: "Facts", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [research] })
      for (const answer of ["First.", "Second."]) {
        const model = ChatModel.scripted([lookupCall("c1"), { text: answer }])
        const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(Layer.mergeAll(model.layer, makeHandlers().layer)))

        expect(output.raw).toBe(answer)
        expect(output.taskOutputs[0].toolCallCount).toBe(1)
        expect(requestTranscripts(model)[0]).toEqual([`system: ${researcherSystem}`, `user: ${researchUser}`])
        expect(requestTranscripts(model)[1]).toHaveLength(4)
      }
    }))

  it.effect("a task that depends on another gets that run's output, not an earlier run's", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts" })
      const research = yield* Task.make({ description: "Research ACME", expectedOutput: "Facts", agent: researcher })
      const summarise = yield* Task.make({ description: "Summarise", expectedOutput: "A line", agent: researcher, context: [research] })
      const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [research, summarise] })
      for (const facts of ["Founded 1949.", "Makes anvils."]) {
        const model = ChatModel.scripted([{ text: facts }, { text: "Summary." }])
        yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))

        expect(requestTranscripts(model)[1][1]).toBe(
          `user: ## Context from earlier tasks\n### Researcher: Research ACME\n${facts}\n\n## Task\nSummarise\n\n## Expected output\nA line`
        )
      }
    }))

  it.effect("an agent given another toolkit between runs offers its tools in the next run", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
      const research = yield* Task.make({ description: "Research ACME", expectedOutput: "Facts", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [research] })
      const before = ChatModel.scripted([{ text: "One." }])
      yield* Ensemble.run(ensemble).pipe(Effect.provide(Layer.mergeAll(before.layer, makeHandlers().layer)))
      expect(offered(before)[0].tools).toEqual(["lookup"])

      const Search = Tool.make("search", { description: "Searches", parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
      const searchTools = Toolkit.make(Search)
      writable(researcher).toolkit = searchTools
      const after = ChatModel.scripted([{ text: "Two." }])
      const output = yield* Ensemble.run(ensemble).pipe(
        // The ensemble's type still asks for the first toolkit's handlers.
        Effect.provide(Layer.mergeAll(after.layer, makeHandlers().layer, searchTools.toLayer({ search: ({ q }) => Effect.succeed(q) })))
      )
      expect(output.raw).toBe("Two.")
      expect(offered(after)[0].tools).toEqual(["search"])
    }))

  it.effect("a task with an outputType asks each run's model its own way", () =>
    Effect.gen(function*() {
      const Score = Schema.Struct({ score: Schema.Number })
      const analyst = yield* Agent.make({ role: "Analyst", goal: "Score companies" })
      const rate = yield* Task.make({ description: "Rate ACME", expectedOutput: "A score", agent: analyst, outputType: Score })
      const ensemble = yield* Ensemble.make({ agents: [analyst], tasks: [rate] })
      const userOf = (model: ChatModel.ScriptedModel) => requestTranscripts(model)[0][1]
      const models = [
        ChatModel.scripted([{ text: `{"score": 1}` }], { structuredOutputs: true }),
        ChatModel.scripted([{ text: `{"score": 2}` }]),
        ChatModel.scripted([{ text: `{"score": 3}` }], { structuredOutputs: true })
      ]
      const scores: Array<unknown> = []
      for (const model of models) {
        const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
        scores.push(output.taskOutputs[0].parsedOutput)
      }

      expect(scores).toEqual([{ score: 1 }, { score: 2 }, { score: 3 }])
      expect(models.map((model) => model.requests[0].responseFormat?.name)).toEqual(["task_output", undefined, "task_output"])
      // JSON mode shows the Schema's strict form, the same each time; the text mode the Schema as it is.
      expect(userOf(models[0])).toContain(`"additionalProperties": false`)
      expect(userOf(models[1])).toContain(`"additionalProperties": true`)
      expect(userOf(models[2])).toBe(userOf(models[0]))
    }))
})

/**
 * What a run keeps and checks around the edges: numbered delegations keep a
 * task's settings, missing tool handlers are caught before any model call,
 * failed runs keep their delegation records, peer workers' tool calls are
 * counted, defects keep completed outputs, and structured output reads plain
 * strings and broken fences.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Schema } from "effect"
import { Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import * as Privacy from "../../src/Privacy.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { roleOf, textOf } from "../support/transcript.ts"
import { Lookup } from "../support/tools.ts"

const toolRounds = (request: ChatModel.GenerateRequest) =>
  request.prompt.content.filter((message) => message.role === "tool").length

const lookupTools = Toolkit.make(Lookup)
const lookupHandlers = lookupTools.toLayer({ lookup: ({ q }) => Effect.succeed(`found ${q}`) })

describe("HIERARCHICAL: a numbered delegation keeps the task's own settings", () => {
  const Verdict = Schema.Struct({ approved: Schema.Boolean })

  const run = (numbers: ReadonlyArray<number | undefined>) =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review" })
      const write = yield* Task.make({ description: "Write it", expectedOutput: "A paragraph", agent: writer })
      const review = yield* Task.make({
        description: "Review it",
        expectedOutput: "A verdict",
        agent: reviewer,
        context: [write],
        outputType: Verdict
      })
      const plan = [
        { agentRole: "Writer", taskDescription: "Write the paragraph" },
        { agentRole: "Reviewer", taskDescription: "Review the paragraph" }
      ]
      const model = ChatModel.scripted([(request) => {
        switch (roleOf(request)) {
          case "Manager": {
            const n = toolRounds(request)
            if (n >= plan.length) return { text: "Done." }
            const number = numbers[n]
            return { toolCalls: [{ name: "delegateTask", params: number === undefined ? plan[n] : { ...plan[n], taskNumber: number } }] }
          }
          case "Writer":
            return { text: "A fine paragraph." }
          default:
            return { text: "{\"approved\": true}" }
        }
      }], { repeat: true })
      const ensemble = yield* Ensemble.make({ agents: [writer, reviewer], tasks: [write, review], workflow: "HIERARCHICAL" })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
      return { output, model }
    })

  it.effect("with taskNumber: expected output, outputType (decoded) and the context task's output reach the worker", () =>
    Effect.gen(function*() {
      const { model, output } = yield* run([1, 2])
      const reviewerPrompt = model.requests.find((request) => roleOf(request) === "Reviewer")!
      const user = textOf(reviewerPrompt.prompt.content[1])
      expect(user).toContain("## Context from earlier tasks\n### Writer: Write the paragraph\nA fine paragraph.")
      expect(user).toContain("## Task\nReview the paragraph")
      expect(user).toContain("## Expected output\nA verdict")
      expect(user).toContain("## Output format")
      expect(output.taskOutputs.map((o) => o.parsedOutput)).toEqual([undefined, { approved: true }, undefined])
    }))

  it.effect("without taskNumber: a fresh task with the generic expected output and no format", () =>
    Effect.gen(function*() {
      const { model, output } = yield* run([undefined, undefined])
      const user = textOf(model.requests.find((request) => roleOf(request) === "Reviewer")!.prompt.content[1])
      expect(user).toBe("## Task\nReview the paragraph\n\n## Expected output\nComplete the assigned task thoroughly")
      expect(output.taskOutputs[1].parsedOutput).toBeUndefined()
    }))

  it.effect("an out-of-range taskNumber is refused as the tool's result; no worker runs", () =>
    Effect.gen(function*() {
      const { model, output } = yield* run([7, 2])
      expect(output.delegations[0].response.errors).toEqual(["Error: taskNumber must be a task number from 1 to 2, got: 7"])
      expect(model.requests.some((request) => roleOf(request) === "Writer")).toBe(false)
    }))
})

describe("tool handlers are checked before any model call", () => {
  it.effect("an agent whose tool has no handler in the context fails with ValidationError", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Research", toolkit: lookupTools })
      const task = yield* Task.make({ description: "Research", expectedOutput: "Notes", agent: researcher })
      // widened on purpose: the type no longer asks for the handler
      const agents: ReadonlyArray<Agent.Any> = [researcher]
      const ensemble = yield* Ensemble.make({ agents, tasks: [task] })
      const model = ChatModel.scripted([{ text: "never" }])
      const error = yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(model.layer)))
      expect(error.message).toBe(
        "Agent 'Researcher' has tool 'lookup' but no handler for it: provide its handlers with toolkit.toLayer({ lookup: ... })"
      )
      expect(model.calls).toBe(0)
    }))
})

describe("what a run counts and keeps", () => {
  it.effect("a failed run's error carries the delegation records", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review" })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })
      const model = ChatModel.scripted([(request) =>
        roleOf(request) === "Manager"
          ? toolRounds(request) === 0
            ? { toolCalls: [{ name: "delegateTask", params: { agentRole: "Nobody", taskDescription: "x" } }] }
            : { text: "Gave up." }
          : { text: "never" }
      ], { repeat: true })
      const ensemble = yield* Ensemble.make({
        agents: [writer, reviewer],
        tasks: [write],
        workflow: "HIERARCHICAL",
        constraints: { requiredWorkers: ["Reviewer"] }
      })
      const error = yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(model.layer)))
      expect(error).toBeInstanceOf(EnsembleError.ConstraintViolationError)
      if (error._tag !== "ConstraintViolationError") return
      expect(error.delegations?.map((record) => record.response.errors)).toEqual([
        ["No agent found with role 'Nobody'. Available roles: [Writer, Reviewer]"]
      ])
    }))

  it.effect("tool calls of an agent reached by peer delegation count in totalToolCalls", () =>
    Effect.gen(function*() {
      const lead = yield* Agent.make({ role: "Lead", goal: "Lead", allowDelegation: true })
      const helper = yield* Agent.make({ role: "Helper", goal: "Help", toolkit: lookupTools })
      const task = yield* Task.make({ description: "Get it done", expectedOutput: "Done", agent: lead })
      const model = ChatModel.scripted([(request) => {
        if (roleOf(request) === "Lead") {
          return toolRounds(request) === 0
            ? { toolCalls: [{ name: "delegate", params: { agentRole: "Helper", taskDescription: "Look up two things" } }] }
            : { text: "All done." }
        }
        return toolRounds(request) === 0
          ? { toolCalls: [{ name: "lookup", params: { q: "a" } }, { name: "lookup", params: { q: "b" } }] }
          : { text: "found both" }
      }], { repeat: true })
      const ensemble = yield* Ensemble.make({ agents: [lead, helper], tasks: [task] })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, lookupHandlers]))
      expect(output.taskOutputs[0].toolCallCount).toBe(1)
      expect(output.totalToolCalls).toBe(3)
    }))

  it.effect("a defect in task 2 fails the run with TaskExecutionError and keeps task 1's output", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const one = yield* Task.make({ description: "One", expectedOutput: "x", agent: writer })
      const two = yield* Task.make({ description: "Two", expectedOutput: "x", agent: writer })
      const dying = ChatModel.scripted([{ text: "first" }, () => {
        throw new Error("socket closed")
      }])
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [one, two] })
      const error = yield* Effect.flip(Ensemble.run(ensemble).pipe(Effect.provide(dying.layer)))
      expect(error._tag).toBe("TaskExecutionError")
      if (error._tag !== "TaskExecutionError") return
      expect(error.taskDescription).toBe("Two")
      expect(error.reason).toContain("socket closed")
      expect(error.completedOutputs.map((o) => o.raw)).toEqual(["first"])
    }))

  it.effect("the same agent listed twice is one agent, not a duplicate role", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write", allowDelegation: true })
      const task = yield* Task.make({ description: "Write", expectedOutput: "x", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer, writer], tasks: [task] })
      expect(ensemble.agents).toHaveLength(2)
    }))
})

describe("structured output reads what agents actually write", () => {
  const rows: ReadonlyArray<{ readonly name: string; readonly schema: Schema.Top & { readonly DecodingServices: never }; readonly answer: string; readonly parsed: unknown }> = [
    { name: "a plain string answer for a string schema", schema: Schema.String, answer: "hello there", parsed: "hello there" },
    {
      name: "a broken fenced block, then the JSON in the prose",
      schema: Schema.Struct({ n: Schema.Number }),
      answer: "```json\n{oops\n```\nI meant {\"n\": 3}",
      parsed: { n: 3 }
    }
  ]
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
        const task = yield* Task.make({ description: "Answer", expectedOutput: "x", agent: writer, outputType: row.schema, maxOutputRetries: 0 })
        const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task] })
        const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(ChatModel.scripted([{ text: row.answer }]).layer))
        expect(output.taskOutputs[0].parsedOutput).toEqual(row.parsed)
      }))
  }
})

describe("verbose ensembles log every task, in every workflow", () => {
  it.effect("HIERARCHICAL: the manager's and workers' tasks, and a failure", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "x", agent: writer })
      const model = ChatModel.scripted([(request) =>
        roleOf(request) === "Manager"
          ? toolRounds(request) === 0
            ? { toolCalls: [{ name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write now", taskNumber: 1 } }] }
            : { text: "Done." }
          : { fail: "overloaded" }
      ], { repeat: true })
      const logs: Array<string> = []
      const capture = Logger.make<unknown, void>(({ message }) => {
        logs.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task], workflow: "HIERARCHICAL", verbose: true })
      yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, Logger.layer([capture])]))
      expect(logs.map((line) => line.split("\n")[0])).toEqual([
        "Task started: 'Coordinate your team to complete these tasks:",
        "Task started: 'Write now' (agent 'Writer')",
        "Task failed: 'Write now': The model call failed: overloaded",
        expect.stringMatching(/^Task completed: 'Coordinate your team/)
      ])
    }))
})

describe("verbose logs keep secrets and, with Privacy.OmitContent, personal data out", () => {
  const run = (omit: boolean) =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write for Jane Roe", verbose: true })
      const task = yield* Task.make({ description: "Write to Jane Roe, key sk-proj-abcdefghijklmnopqrstuvwxABCDEFGH1234", expectedOutput: "x", agent: writer })
      const logs: Array<string> = []
      const capture = Logger.make<unknown, void>(({ message }) => {
        logs.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task], verbose: true })
      const model = ChatModel.scripted([{ text: "Dear Jane Roe, ..." }])
      const running = Ensemble.run(ensemble).pipe(Effect.provide([model.layer, Logger.layer([capture])]))
      yield* (omit ? Privacy.omitContent(running) : running)
      return logs.join("\n")
    })

  it.effect("credentials are redacted from every log line", () =>
    Effect.gen(function*() {
      const logs = yield* run(false)
      expect(logs).toContain("Jane Roe")
      expect(logs).not.toContain("abcdefghijklmnopqrstuvwx")
    }))

  it.effect("with Privacy.OmitContent, prompts, task descriptions and answers are left out", () =>
    Effect.gen(function*() {
      const logs = yield* run(true)
      expect(logs).toContain("characters, omitted")
      expect(logs).not.toContain("Jane Roe")
    }))
})

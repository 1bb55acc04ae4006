/**
 * The ensemble as a layer and service, its events, and verbose logging.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, Schema, Stream } from "effect"
import { Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { Lookup } from "../support/tools.ts"

const tools = Toolkit.make(Lookup)
const handlers = tools.toLayer({ lookup: ({ q }) => Effect.succeed(`found ${q}`) })

const team = Effect.gen(function*() {
  const researcher = yield* Agent.make({ role: "Researcher", goal: "Research", toolkit: tools, verbose: true })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Notes", agent: researcher })
  const write = yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer, context: [research] })
  return { agents: [researcher, writer] as const, tasks: [research, write] }
})

const script = () =>
  ChatModel.scripted([
    { toolCalls: [{ id: "c1", name: "lookup", params: { q: "effect" } }] },
    { text: "notes" },
    { text: "the text" }
  ])

describe("Ensemble.layer and Ensemble.Service", () => {
  it.effect("the service runs the ensemble with the model and handlers captured when the layer was built", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const model = script()
      const live = Ensemble.layer({ agents, tasks }).pipe(Layer.provide([model.layer, handlers]))
      const output = yield* Effect.gen(function*() {
        const service = yield* Ensemble.Service
        expect(service.ensemble.tasks).toHaveLength(2)
        return yield* service.run({ topic: "Effect" })
      }).pipe(Effect.provide(live))
      expect(output.raw).toBe("the text")
      expect(output.totalToolCalls).toBe(1)
      expect(model.calls).toBe(3)
    }))

  it.effect("a broken rule fails the layer with ValidationError", () =>
    Effect.gen(function*() {
      const { agents } = yield* team
      const live = Ensemble.layer({ agents, tasks: [] }).pipe(Layer.provide([script().layer, handlers]))
      const error = yield* Effect.flip(Effect.provide(Effect.service(Ensemble.Service), live))
      expect(error._tag).toBe("ValidationError")
      expect(error.message).toBe("Ensemble must have at least one task")
    }))
})

describe("EnsembleEvent", () => {
  it.effect("a run publishes task, tool and completion events in order; a failing sink does not stop it", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks })
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" }).pipe(
        Effect.provideService(EnsembleEvent.Sink, {
          publish: (event) =>
            Effect.sync(() => events.push(event)).pipe(
              Effect.andThen(event._tag === "ToolCalled" ? Effect.die("sink broke") : Effect.void)
            )
        }),
        Effect.provide([script().layer, handlers])
      )
      expect(output.raw).toBe("the text")
      // AgentRun events carry each agent's run live: its model calls and tool calls
      expect(events.map((event) => event._tag === "AgentRun" ? `${event.agentRole}: ${event.event._tag}` : event._tag)).toEqual([
        "TaskStarted",
        "Researcher: RunStarted",
        "Researcher: ModelCallStarted",
        "Researcher: ModelCallFinished",
        "Researcher: ToolCallStarted",
        "Researcher: ToolCallFinished",
        "Researcher: ModelCallStarted",
        ...events.filter((e) => e._tag === "AgentRun" && e.event._tag === "TextDelta" && e.agentRole === "Researcher").map(() =>
          "Researcher: TextDelta"
        ),
        "Researcher: ModelCallFinished",
        "Researcher: RunFinished",
        "ToolCalled",
        "TaskCompleted",
        "TaskStarted",
        "Writer: RunStarted",
        "Writer: ModelCallStarted",
        ...events.filter((e) => e._tag === "AgentRun" && e.event._tag === "TextDelta" && e.agentRole === "Writer").map(() =>
          "Writer: TextDelta"
        ),
        "Writer: ModelCallFinished",
        "Writer: RunFinished",
        "TaskCompleted",
        "EnsembleCompleted"
      ])
      const live = events.filter((e) => e._tag === "AgentRun" && e.agentRole === "Writer" && e.event._tag === "TextDelta")
      expect(live.map((e) => e._tag === "AgentRun" && e.event._tag === "TextDelta" ? e.event.delta : "").join("")).toBe("the text")
      expect(events.find((e) => e._tag === "AgentRun" && e.event._tag === "ToolCallFinished")).toEqual({
        _tag: "AgentRun",
        agentRole: "Researcher",
        taskDescription: "Research Effect",
        event: { _tag: "ToolCallFinished", id: "c1", name: "lookup", status: "succeeded", result: expect.anything(), durationMillis: 0 }
      })
      expect(events.at(-1)).toEqual({ _tag: "EnsembleCompleted", output })
      const toolCalled = events.filter((e) => e._tag === "ToolCalled")
      expect(toolCalled[0]).toEqual({
        _tag: "ToolCalled",
        agentRole: "Researcher",
        taskDescription: "Research Effect",
        tool: "lookup",
        callId: "c1",
        isFailure: false
      })
      // events are Schema data: they encode to JSON
      const encoded = Schema.encodeSync(Schema.Array(EnsembleEvent.EnsembleEvent))(events)
      expect(JSON.parse(JSON.stringify(encoded))).toEqual(encoded)
    }))

  it.effect("a failed task publishes TaskFailed with the reason", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks })
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const model = ChatModel.scripted([{ fail: "overloaded" }])
      yield* Effect.flip(
        Ensemble.run(ensemble, { topic: "Effect" }).pipe(
          Effect.provideService(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => events.push(event)) }),
          Effect.provide([model.layer, handlers])
        )
      )
      expect(events.filter((e) => e._tag !== "AgentRun")).toEqual([
        { _tag: "TaskStarted", taskDescription: "Research Effect", agentRole: "Researcher" },
        {
          _tag: "TaskFailed",
          taskDescription: "Research Effect",
          agentRole: "Researcher",
          reason: "The model call failed: overloaded"
        },
        { _tag: "EnsembleFailed", error: "TaskExecutionError", message: expect.stringContaining("overloaded") }
      ])
      // the agent's run reported the failed model call and its end, live
      expect(events.flatMap((e) => e._tag === "AgentRun" ? [e.event._tag] : [])).toEqual([
        "RunStarted",
        "ModelCallStarted",
        "ModelCallFailed",
        "RunFailed"
      ])
    }))
})

describe("Ensemble.stream", () => {
  it.effect("gives the events a sink receives, ending with EnsembleCompleted and its output", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks })
      const sunk: Array<EnsembleEvent.EnsembleEvent> = []
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" }).pipe(
        Effect.provideService(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => sunk.push(event)) }),
        Effect.provide([script().layer, handlers])
      )
      const streamed = yield* Stream.runCollect(Ensemble.stream(ensemble, { topic: "Effect" })).pipe(
        Effect.provide([script().layer, handlers])
      )
      expect(streamed).toEqual(sunk)
      expect(streamed.at(-1)).toEqual({ _tag: "EnsembleCompleted", output })
    }))

  it.effect("a bufferSize that is not a whole number >= 1 fails with ValidationError, before any model call", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks })
      for (const bufferSize of [-1, 0, 1.5, Number.NaN]) {
        const model = script()
        const error = yield* Effect.flip(
          Stream.runDrain(Ensemble.stream(ensemble, { topic: "Effect" }, { bufferSize })).pipe(Effect.provide([model.layer, handlers]))
        )
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toContain("bufferSize")
        expect(model.calls).toBe(0)
      }
    }))

  it.effect("a failing run: EnsembleFailed, then the stream fails with the error run fails with", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks })
      const seen: Array<EnsembleEvent.EnsembleEvent> = []
      const exit = yield* Ensemble.stream(ensemble, { topic: "Effect" }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.provide([ChatModel.scripted([{ fail: "overloaded" }]).layer, handlers]),
        Effect.exit
      )
      const error = yield* Effect.flip(
        Ensemble.run(ensemble, { topic: "Effect" }).pipe(Effect.provide([ChatModel.scripted([{ fail: "overloaded" }]).layer, handlers]))
      )
      expect(exit).toEqual(Exit.fail(error))
      expect(seen.at(-1)).toEqual({ _tag: "EnsembleFailed", error: "TaskExecutionError", message: error.message })
    }))
})

describe("verbose", () => {
  it.effect("a verbose agent logs its prompts and answer; a verbose ensemble logs each task's start and end", () =>
    Effect.gen(function*() {
      const { agents, tasks } = yield* team
      const ensemble = yield* Ensemble.make({ agents, tasks, verbose: true })
      const logs: Array<string> = []
      const capture = Logger.make<unknown, void>(({ message }) => {
        logs.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      yield* Ensemble.run(ensemble, { topic: "Effect" }).pipe(
        Effect.provide([script().layer, handlers, Logger.layer([capture])])
      )
      expect(logs[0]).toBe("Task started: 'Research Effect' (agent 'Researcher')")
      expect(logs[1]).toContain("[Researcher] system prompt:\nYou are Researcher.")
      expect(logs[2]).toContain("[Researcher] task prompt:\n## Task\nResearch Effect")
      expect(logs[3]).toBe("[Researcher] answer:\nnotes")
      expect(logs[4]).toMatch(/^Task completed: 'Research Effect' in .*, 1 tool call\(s\)$/)
      // the Writer is not verbose: only the ensemble's task lines
      expect(logs.slice(5)).toEqual([
        "Task started: 'Write' (agent 'Writer')",
        expect.stringMatching(/^Task completed: 'Write' in .*, 0 tool call\(s\)$/)
      ])
    }))
})

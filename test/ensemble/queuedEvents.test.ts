/**
 * A watched task queues its events rather than wait for the sink
 * (src/ensemble/internal/agentEvents.ts). Stopping early must still stop it:
 * a consumer of `Ensemble.stream` that takes a few events and goes ends the
 * run (the task's backlog dropped), also with a full buffer. And a
 * delegation's events keep their place: the worker's task and the
 * delegation come after the manager's tool call that asked for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Stream } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"

/** The manager delegates to Alpha once, then answers; Alpha answers with many words (many text deltas). */
const model = ChatModel.scripted([
  (request) => {
    const text = JSON.stringify(request.prompt.content)
    const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
    const results = request.prompt.content.filter((message) => message.role === "tool").length
    if (role === "Manager") {
      return results > 0 ? { text: "Manager done" } : { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Alpha", taskDescription: "Write" } }] }
    }
    return { text: Array.from({ length: 600 }, (_, i) => `word${i}`).join(" ") }
  }
], { repeat: true })

const team = Effect.gen(function*() {
  const alpha = yield* Agent.make({ role: "Alpha", goal: "Write" })
  const task = yield* Task.make({ description: "Write it", expectedOutput: "Text", agent: alpha })
  return yield* Ensemble.make({ agents: [alpha], tasks: [task], workflow: "HIERARCHICAL" })
})

const label = (event: EnsembleEvent.EnsembleEvent) =>
  event._tag === "AgentRun"
    ? `${event.agentRole}:${event.event._tag}${event.event._tag === "ToolCallStarted" ? `:${event.event.id}` : ""}`
    : event._tag === "TaskStarted" || event._tag === "TaskCompleted"
    ? `${event._tag}:${event.agentRole}`
    : event._tag

describe("a watched task's queued events", () => {
  it.live.each([1, 256])("a consumer that takes 2 events and stops ends the run (bufferSize %d)", (bufferSize) =>
    Effect.gen(function*() {
      const ensemble = yield* team
      const taken = yield* Ensemble.stream(ensemble, {}, { bufferSize }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.timeout("5 seconds"),
        Effect.provide(model.layer),
        Effect.exit
      )
      expect(Exit.isSuccess(taken) && taken.value.length).toBe(2)
    }))

  it.live("a delegation's events come after the manager's tool call that asked for it, with a slow sink", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      const seen: Array<string> = []
      const sink = Layer.succeed(EnsembleEvent.Sink, {
        publish: (event) => Effect.andThen(event._tag === "AgentRun" ? Effect.sleep("1 millis") : Effect.void, Effect.sync(() => void seen.push(label(event))))
      })
      yield* Ensemble.run(ensemble).pipe(Effect.provide(Layer.merge(model.layer, sink)))
      const at = (name: string) => seen.indexOf(name)
      expect(at("Manager:ToolCallStarted:d1")).toBeGreaterThan(-1)
      expect(at("DelegationStarted")).toBeGreaterThan(at("Manager:ToolCallStarted:d1"))
      expect(at("TaskStarted:Alpha")).toBeGreaterThan(at("DelegationStarted"))
      expect(at("TaskCompleted:Alpha")).toBeGreaterThan(at("Alpha:RunFinished"))
      expect(at("DelegationCompleted")).toBeGreaterThan(at("TaskCompleted:Alpha"))
      expect(at("TaskCompleted:Manager")).toBeGreaterThan(at("Manager:RunFinished"))
    }))
})

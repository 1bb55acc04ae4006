/**
 * `Privacy.OmitContent` reaches ensemble events and log lines: with it on,
 * no event carries a task description (filled from run inputs), a raw or
 * parsed output, a delegation's task text, a failure's reason or the content
 * of an agent's run (tool arguments and results, model text, text deltas);
 * ids, roles, tool names, counts, depths, durations and statuses stay, and
 * every event is still valid Schema data. The run's own result is unchanged.
 * Each check runs against the same run with the setting off too, which
 * reports the content, so each can fail.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Schema, Stream } from "effect"
import { ChatModel, Privacy } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

/** Strings that must not appear in any event when content is omitted. */
const personal = ["Jane Doe", "1961-07-14", "diabetes"]
const inputs = { patient: "Jane Doe, born 1961-07-14" }

const encode = Schema.encodeSync(EnsembleEvent.EnsembleEvent)
const decode = Schema.decodeUnknownSync(EnsembleEvent.EnsembleEvent)

/** The events as the JSON a consumer would forward. */
const json = (events: ReadonlyArray<EnsembleEvent.EnsembleEvent>): string =>
  JSON.stringify(events.map((event) => encode(event)))

const leaks = (events: ReadonlyArray<EnsembleEvent.EnsembleEvent>): ReadonlyArray<string> => {
  const text = json(events)
  return personal.filter((value) => text.includes(value))
}

const collect = <E, R>(stream: Stream.Stream<EnsembleEvent.EnsembleEvent, E, R>) =>
  Effect.gen(function*() {
    const events: Array<EnsembleEvent.EnsembleEvent> = []
    yield* Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))).pipe(Effect.ignore)
    return events
  })

const omitted = (omit: boolean) => <A, E, R>(effect: Effect.Effect<A, E, R>) => omit ? Privacy.omitContent(effect) : effect

// -----------------------------------------------------------------------------
// A run that finishes: a tool call, a peer delegation, a structured answer
// -----------------------------------------------------------------------------

const Summary = Schema.Struct({ summary: Schema.String })

const finishedTeam = Effect.gen(function*() {
  const clerk = yield* Agent.make({ role: "Clerk", goal: "Summarise records", toolkit, allowDelegation: true })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write notes" })
  const task = yield* Task.make({
    description: "Summarise the record of {patient}",
    expectedOutput: "A summary of {patient}",
    agent: clerk,
    outputType: Summary
  })
  return yield* Ensemble.make({ agents: [clerk, writer], tasks: [task] })
})

const finishedModel = () =>
  ChatModel.scripted([
    { text: "Looking up Jane Doe.", toolCalls: [{ name: "lookup", params: { query: "Jane Doe" } }] },
    { toolCalls: [{ name: "delegate", params: { agentRole: "Writer", taskDescription: "Draft a note on Jane Doe" } }] },
    { text: "Note: Jane Doe has diabetes." },
    { text: "{\"summary\": \"Jane Doe (1961-07-14) has diabetes type 2.\"}" }
  ])

const streamFinished = (omit: boolean) =>
  Effect.gen(function*() {
    const ensemble = yield* finishedTeam
    return yield* collect(Ensemble.stream(ensemble, inputs)).pipe(
      Effect.provide([finishedModel().layer, makeHandlers().layer]),
      omitted(omit)
    )
  })

describe("Privacy.OmitContent: ensemble events without content", () => {
  it.effect("a finished run: no task text, output, delegation text or agent run content; ids, roles, counts and statuses stay", () =>
    Effect.gen(function*() {
      const events = yield* streamFinished(true)
      expect(leaks(events)).toEqual([])
      // still valid events: each survives JSON and decodes to itself
      for (const event of events) expect(decode(JSON.parse(JSON.stringify(encode(event))))).toEqual(event)

      const tags = events.map((event) => event._tag === "AgentRun" ? `AgentRun ${event.event._tag}` : event._tag)
      expect(tags).not.toContain("AgentRun TextDelta")
      expect(tags.filter((tag) => !tag.startsWith("AgentRun"))).toEqual([
        "TaskStarted",
        "DelegationStarted",
        "TaskStarted",
        "TaskCompleted",
        "DelegationCompleted",
        "ToolCalled",
        "ToolCalled",
        "TaskCompleted",
        "EnsembleCompleted"
      ])
      expect(events[0]).toEqual({ _tag: "TaskStarted", taskDescription: "", agentRole: "Clerk" })
      const delegation = events.find((event) => event._tag === "DelegationStarted")
      expect(delegation).toMatchObject({ delegatingRole: "Clerk", workerRole: "Writer", taskDescription: "", depth: 0 })
      expect(events.filter((event) => event._tag === "ToolCalled").map((event) => [event.tool, event.taskDescription]))
        .toEqual([["lookup", ""], ["delegate", ""]])
      for (const event of events) {
        if (event._tag === "AgentRun") expect(event.taskDescription).toBe("")
      }
      const toolRun = events.flatMap((event) =>
        event._tag === "AgentRun" && (event.event._tag === "ToolCallStarted" || event.event._tag === "ToolCallFinished")
          ? [event.event]
          : []
      )
      expect(toolRun.map((event) => [event._tag, event.name, "params" in event, "result" in event])).toEqual([
        ["ToolCallStarted", "lookup", false, false],
        ["ToolCallFinished", "lookup", false, false],
        ["ToolCallStarted", "delegate", false, false],
        ["ToolCallFinished", "delegate", false, false]
      ])

      const last = events.at(-1)
      if (last?._tag !== "EnsembleCompleted") throw new Error("no EnsembleCompleted")
      const { output } = last
      expect(output.raw).toBe("")
      expect(output.totalToolCalls).toBe(2)
      expect(output.taskOutputs.map((task) => ({ ...task, completedAt: null, duration: null }))).toEqual([
        { raw: "", taskDescription: "", agentRole: "Clerk", completedAt: null, duration: null, toolCallCount: 2 }
      ])
      expect(output.delegations).toHaveLength(1)
      const [record] = output.delegations
      expect(record.request).toEqual({
        taskId: record.response.taskId,
        agentRole: "Writer",
        taskDescription: "",
        scope: {},
        priority: "NORMAL",
        maxOutputRetries: 0,
        metadata: {}
      })
      expect({ ...record.response, duration: null }).toEqual({
        taskId: record.request.taskId,
        status: "SUCCESS",
        workerRole: "Writer",
        rawOutput: "",
        artifacts: {},
        errors: [],
        metadata: {},
        duration: null
      })
    }))

  it.effect("the same run with the setting off (the default) reports every piece of content", () =>
    Effect.gen(function*() {
      const events = yield* streamFinished(false)
      expect(leaks(events)).toEqual(personal)
      expect(events.some((event) => event._tag === "AgentRun" && event.event._tag === "TextDelta")).toBe(true)
    }))

  it.effect("the run itself is unchanged: Ensemble.run returns the same output either way", () =>
    Effect.gen(function*() {
      const run = (omit: boolean) =>
        Effect.flatMap(finishedTeam, (ensemble) => Ensemble.run(ensemble, inputs)).pipe(
          Effect.provide([finishedModel().layer, makeHandlers().layer]),
          omitted(omit)
        )
      const plain = yield* run(false)
      const withOmitted = yield* run(true)
      expect(withOmitted.taskOutputs[0].parsedOutput).toEqual({ summary: "Jane Doe (1961-07-14) has diabetes type 2." })
      expect(withOmitted.raw).toBe(plain.raw)
      expect(withOmitted.delegations[0].response.rawOutput).toBe("Note: Jane Doe has diabetes.")
    }))

  it.effect("with the setting off a sink receives the very event published (no copy)", () =>
    Effect.gen(function*() {
      const received: Array<EnsembleEvent.EnsembleEvent> = []
      const sink = { publish: (event: EnsembleEvent.EnsembleEvent) => Effect.sync(() => received.push(event)) }
      const event: EnsembleEvent.EnsembleEvent = { _tag: "TaskStarted", taskDescription: "Write to Jane Doe", agentRole: "Writer" }
      yield* EnsembleEvent.publish(event).pipe(Effect.provideService(EnsembleEvent.Sink, sink))
      yield* EnsembleEvent.publish(event).pipe(Effect.provideService(EnsembleEvent.Sink, sink), Privacy.omitContent)
      expect(received[0]).toBe(event)
      expect(received[1]).toEqual({ _tag: "TaskStarted", taskDescription: "", agentRole: "Writer" })
    }))
})

// -----------------------------------------------------------------------------
// A run that fails: a worker whose model call fails, an answer that does not decode
// -----------------------------------------------------------------------------

const failingRun = (omit: boolean) =>
  Effect.gen(function*() {
    const clerk = yield* Agent.make({ role: "Clerk", goal: "Summarise records", allowDelegation: true, verbose: true })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write notes" })
    const task = yield* Task.make({
      description: "Summarise the record of {patient}",
      expectedOutput: "JSON",
      agent: clerk,
      outputType: Summary,
      maxOutputRetries: 0
    })
    const ensemble = yield* Ensemble.make({ agents: [clerk, writer], tasks: [task], verbose: true })
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "delegate", params: { agentRole: "Writer", taskDescription: "Draft a note on Jane Doe" } }] },
      { fail: "the provider refused the prompt 'Draft a note on Jane Doe, born 1961-07-14'" },
      { text: "Jane Doe, born 1961-07-14, has diabetes." }
    ])
    const logs: Array<string> = []
    const capture = Logger.make<unknown, void>(({ message }) => {
      logs.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    const events = yield* collect(Ensemble.stream(ensemble, inputs)).pipe(
      Effect.provide([model.layer, Logger.layer([capture])]),
      omitted(omit)
    )
    return { events, logs: logs.join("\n") }
  })

describe("Privacy.OmitContent: a failed ensemble run", () => {
  it.effect("failure reasons and messages are content-free: DelegationFailed, TaskFailed, EnsembleFailed, the agents' failure events, the log", () =>
    Effect.gen(function*() {
      const { events, logs } = yield* failingRun(true)
      expect(leaks(events)).toEqual([])
      for (const event of events) expect(decode(JSON.parse(JSON.stringify(encode(event))))).toEqual(event)
      expect(events.find((event) => event._tag === "DelegationFailed")).toMatchObject({
        delegatingRole: "Clerk",
        workerRole: "Writer",
        reason: "details omitted (Privacy.OmitContent)"
      })
      // the worker's subtask, then the task
      expect(events.filter((event) => event._tag === "TaskFailed")).toEqual(["Writer", "Clerk"].map((agentRole) => ({
        _tag: "TaskFailed",
        taskDescription: "",
        agentRole,
        reason: "details omitted (Privacy.OmitContent)"
      })))
      const failed = events.at(-1)
      expect(failed?._tag === "EnsembleFailed" && failed.message).toBe(
        `${failed?._tag === "EnsembleFailed" ? failed.error : ""}: details omitted (Privacy.OmitContent)`
      )
      const runFailures = events.flatMap((event) =>
        event._tag === "AgentRun" && (event.event._tag === "ModelCallFailed" || event.event._tag === "RunFailed")
          ? [[event.event._tag, event.event.message]]
          : []
      )
      expect(runFailures).toEqual([
        ["ModelCallFailed", "The model call failed: details omitted (Privacy.OmitContent)"],
        ["RunFailed", "The model call failed: details omitted (Privacy.OmitContent)"]
      ])
      expect(logs).toMatch(/Task failed: '\(\d+ characters, omitted\)': \(\d+ characters, omitted\)/)
      for (const value of personal) expect(logs).not.toContain(value)
    }))

  it.effect("the same run with the setting off reports the reasons, with their content", () =>
    Effect.gen(function*() {
      const { events, logs } = yield* failingRun(false)
      expect(leaks(events)).toEqual(personal)
      const reasons = JSON.stringify(events.filter((event) => event._tag === "DelegationFailed" || event._tag === "TaskFailed"))
      expect(reasons).toContain("Jane Doe")
      expect(logs).toMatch(/Task failed: .*Jane Doe/)
    }))
})

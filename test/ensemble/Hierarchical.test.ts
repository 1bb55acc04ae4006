/**
 * HIERARCHICAL: the manager and its delegations (prompts, the delegateTask tool, models),
 * `managerMaxIterations` as the manager's maxRuns with a final answer at the limit, the delegation
 * records, and delegation ids as UUID v4 drawn from Effect's `Random`.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Fiber, Random } from "effect"
import { TestClock } from "effect/testing"
import { ChatModel, MaxRunsPolicy } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import type { Delegation } from "../../src/ensemble/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { toolkit } from "../support/ensemble.ts"
import {
  closing, managerSystem, managerUser, managerTaskDescription, workerUser, lookupHandlers, researcherSystem,
  writerSystem, team3, offered, managerSaw, summary, workerModel, to, managerModel, ok, rejected, makeTeam,
  teamTasks, uuidV4
} from "../support/hierarchical.ts"

// -----------------------------------------------------------------------------
// The manager: prompts, tool, models
// -----------------------------------------------------------------------------

describe("hierarchical: the manager and its delegations", () => {
  it.effect("exact manager prompts; each delegation runs the worker on a fresh task with the ensemble's model", () => {
    const manager = managerModel([
      to("Researcher", "Find three facts about Effect"),
      to("Writer", "Write two paragraphs from: facts")
    ], "Here is the article.")
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager })
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" })

      // the manager's first request: its system prompt (the workers listed) and the tasks, templates filled
      expect(requestTranscripts(manager)[0]).toEqual([
        `system: ${managerSystem(team3)}`,
        `user: ${managerUser(teamTasks)}`
      ])
      // it is offered only delegateTask
      expect(offered(manager)).toEqual([
        { tools: ["delegateTask"], toolChoice: "auto" },
        { tools: ["delegateTask"], toolChoice: "auto" },
        { tools: ["delegateTask"], toolChoice: "auto" }
      ])
      // the workers ran on the ensemble's model, each in a fresh two-message conversation
      expect(workers.calls).toBe(2)
      expect(requestTranscripts(workers)).toEqual([
        [`system: ${researcherSystem}`, `user: ${workerUser("Find three facts about Effect")}`],
        [`system: ${writerSystem}`, `user: ${workerUser("Write two paragraphs from: facts")}`]
      ])
      expect(offered(workers)).toEqual([{ tools: [], toolChoice: "auto" }, { tools: [], toolChoice: "auto" }])
      // the worker's raw text is the tool result the manager sees
      expect(requestTranscripts(manager)[2]).toEqual([
        `system: ${managerSystem(team3)}`,
        `user: ${managerUser(teamTasks)}`,
        `assistant: call delegateTask#call_1_1 {"agentRole":"Researcher","taskDescription":"Find three facts about Effect"}`,
        `tool: ok delegateTask#call_1_1 "Researcher did: Find three facts about Effect"`,
        `assistant: call delegateTask#call_2_1 {"agentRole":"Writer","taskDescription":"Write two paragraphs from: facts"}`,
        `tool: ok delegateTask#call_2_1 "Writer did: Write two paragraphs from: facts"`
      ])
      expect(manager.calls).toBe(3)
      // worker outputs in delegation order, the manager's last; raw is the synthesis
      expect(output.taskOutputs.map(summary)).toEqual([
        {
          raw: "Researcher did: Find three facts about Effect",
          taskDescription: "Find three facts about Effect",
          agentRole: "Researcher",
          toolCallCount: 0
        },
        {
          raw: "Writer did: Write two paragraphs from: facts",
          taskDescription: "Write two paragraphs from: facts",
          agentRole: "Writer",
          toolCallCount: 0
        },
        {
          raw: "Here is the article.",
          taskDescription: managerTaskDescription(teamTasks),
          agentRole: "Manager",
          toolCallCount: 2
        }
      ])
      expect(output.raw).toBe("Here is the article.")
      expect(output.totalToolCalls).toBe(2)
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("without managerLlm the manager uses the ensemble's model, interleaved with the workers", () => {
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "delegateTask", params: to("Writer", "Draft it") }] },
      { text: "The draft." },
      { text: "Done: the draft." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam()
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" })

      expect(model.calls).toBe(3)
      expect(requestTranscripts(model)).toEqual([
        [`system: ${managerSystem(team3)}`, `user: ${managerUser(teamTasks)}`],
        [`system: ${writerSystem}`, `user: ${workerUser("Draft it")}`],
        [
          `system: ${managerSystem(team3)}`,
          `user: ${managerUser(teamTasks)}`,
          `assistant: call delegateTask#call_1_1 {"agentRole":"Writer","taskDescription":"Draft it"}`,
          `tool: ok delegateTask#call_1_1 "The draft."`
        ]
      ])
      expect(output.taskOutputs.map((o) => [o.agentRole, o.raw])).toEqual([
        ["Writer", "The draft."],
        ["Manager", "Done: the draft."]
      ])
      expect(output.raw).toBe("Done: the draft.")
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a worker keeps its own tools (not delegateTask) and a worker with its own llm uses it", () => {
    const manager = managerModel([to("Researcher", "Look it up"), to("Writer", "Write it")])
    const shared = ChatModel.scripted([
      { toolCalls: [{ name: "lookup", params: { query: "effect" } }] },
      { text: "Found: effect." }
    ])
    const writerOwn = ChatModel.scripted([{ text: "Own-model prose." }])
    return Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find reliable facts", toolkit })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose", llm: writerOwn.layer })
      const task = yield* Task.make({ description: "Report", expectedOutput: "A report", agent: writer })
      const ensemble = yield* Ensemble.make({
        agents: [researcher, writer],
        tasks: [task],
        workflow: "HIERARCHICAL",
        managerLlm: manager.layer
      })
      const output = yield* Ensemble.run(ensemble)

      expect(offered(shared)).toEqual([{ tools: ["lookup"], toolChoice: "auto" }, { tools: ["lookup"], toolChoice: "auto" }])
      expect(requestTranscripts(shared)[1]).toEqual([
        `system: ${["You are Researcher.", "Your goal: Find reliable facts", closing].join("\n\n")}`,
        `user: ${workerUser("Look it up")}`,
        `assistant: call lookup#call_1_1 {"query":"effect"}`,
        `tool: ok lookup#call_1_1 "found effect"`
      ])
      expect(writerOwn.calls).toBe(1)
      expect(requestTranscripts(writerOwn)).toEqual([[`system: ${writerSystem}`, `user: ${workerUser("Write it")}`]])
      expect(managerSaw(manager)).toEqual(["ok Found: effect.", "ok Own-model prose."])
      expect(output.taskOutputs.map((o) => [o.agentRole, o.raw, o.toolCallCount])).toEqual([
        ["Researcher", "Found: effect.", 1],
        ["Writer", "Own-model prose.", 0],
        ["Manager", "Final synthesis.", 2]
      ])
      expect(output.totalToolCalls).toBe(3)
    }).pipe(Effect.provide([shared.layer, lookupHandlers]))
  })

  it.effect("a manager that answers without delegating: the output is the manager's alone", () => {
    const manager = managerModel([], "Nothing to delegate.")
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager })
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" })
      expect(workers.calls).toBe(0)
      expect(output.taskOutputs.map((o) => [o.agentRole, o.raw])).toEqual([["Manager", "Nothing to delegate."]])
      expect(output.delegations).toEqual([])
      expect(output.raw).toBe("Nothing to delegate.")
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("two runs share no state: caps and outputs start afresh", () => {
    const manager = managerModel([to("Researcher", "A"), to("Researcher", "B")])
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager, constraints: { maxCallsPerWorker: { Researcher: 1 } } })
      const first = yield* Ensemble.run(ensemble, { topic: "Effect" })
      const seenFirst = managerSaw(manager)
      const second = yield* Ensemble.run(ensemble, { topic: "Effect" })
      const cap = rejected("Worker 'Researcher' has reached its per-worker delegation cap of 1.")
      expect(seenFirst).toEqual([ok("Researcher", "A"), cap])
      expect(managerSaw(manager)).toEqual([ok("Researcher", "A"), cap])
      for (const output of [first, second]) {
        expect(output.taskOutputs.map((o) => o.raw)).toEqual(["Researcher did: A", "Final synthesis."])
        expect(output.delegations.map((r) => r.response.status)).toEqual(["SUCCESS", "FAILURE"])
      }
      expect(workers.calls).toBe(2)
    }).pipe(Effect.provide(workers.layer))
  })
})

// -----------------------------------------------------------------------------
// managerMaxIterations
// -----------------------------------------------------------------------------

interface IterationRow {
  readonly name: string
  readonly managerMaxIterations: number | undefined
  readonly maxRuns: number
}

const iterationRows: ReadonlyArray<IterationRow> = [
  { name: "default 20", managerMaxIterations: undefined, maxRuns: 20 },
  { name: "managerMaxIterations 1", managerMaxIterations: 1, maxRuns: 1 },
  { name: "managerMaxIterations 3", managerMaxIterations: 3, maxRuns: 3 }
]

describe("managerMaxIterations is the manager's maxRuns, with a final answer at the limit", () => {
  for (const row of iterationRows) {
    it.effect(`${row.name}: ${row.maxRuns} delegating calls, then one with toolChoice "none"`, () => {
      // a manager that always delegates when it may, and answers otherwise
      const manager = ChatModel.scripted(Array.from({ length: row.maxRuns + 3 }, () => (request: ChatModel.GenerateRequest) =>
        request.toolChoice === "none"
          ? { text: "Forced answer." }
          : { toolCalls: [{ name: "delegateTask", params: to("Writer", "Again") }] }))
      const workers = workerModel(row.maxRuns + 3)
      return Effect.gen(function*() {
        const ensemble = yield* makeTeam({
          managerLlm: manager,
          ...(row.managerMaxIterations === undefined ? {} : { managerMaxIterations: row.managerMaxIterations })
        })
        expect(ensemble.managerMaxIterations).toBe(row.maxRuns)
        const output = yield* Ensemble.run(ensemble, { topic: "Effect" })

        expect(manager.calls).toBe(row.maxRuns + 1)
        expect(offered(manager)).toEqual([
          ...Array.from({ length: row.maxRuns }, () => ({ tools: ["delegateTask"], toolChoice: "auto" })),
          { tools: ["delegateTask"], toolChoice: "none" }
        ])
        const last = requestTranscripts(manager)[row.maxRuns]
        expect(last[last.length - 1]).toBe(`user: ${MaxRunsPolicy.instruction}`)
        expect(workers.calls).toBe(row.maxRuns)
        expect(output.taskOutputs.length).toBe(row.maxRuns + 1)
        expect(output.raw).toBe("Forced answer.")
        expect(output.taskOutputs[row.maxRuns].toolCallCount).toBe(row.maxRuns)
      }).pipe(Effect.provide(workers.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// Delegation records
// -----------------------------------------------------------------------------

describe("delegation records", () => {
  it.effect("every attempt is recorded: kind manager, status, errors, correlated ids, TestClock durations", () => {
    const manager = ChatModel.scripted([
      { toolCalls: [{ name: "delegateTask", params: to(" ", "x") }], latency: "1 second" },
      { toolCalls: [{ name: "delegateTask", params: to("Editor", "Edit") }], latency: "1 second" },
      { toolCalls: [{ name: "delegateTask", params: to("Reviewer", "Review early") }], latency: "1 second" },
      { toolCalls: [{ name: "delegateTask", params: to("Researcher", "Dig") }], latency: "1 second" },
      { toolCalls: [{ name: "delegateTask", params: to("Writer", "Draft [fail]") }], latency: "1 second" },
      { text: "Summary.", latency: "1 second" }
    ])
    const workers = ChatModel.scripted([
      { text: "Dug.", latency: "2 seconds" },
      { fail: "Writer is overloaded", latency: "3 seconds" }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager, constraints: { allowedWorkers: ["Researcher", "Writer"] } })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble, { topic: "Effect" }))
      yield* TestClock.adjust("10999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      const errors = [
        "Error: agentRole must not be blank.",
        "No agent found with role 'Editor'. Available roles: [Researcher, Writer, Reviewer]",
        "Delegation rejected: Worker 'Reviewer' is not in the allowed workers list. Allowed: [Researcher, Writer]",
        undefined,
        "The model call failed: Writer is overloaded"
      ]
      expect(output.delegations.map((record) => ({
        kind: record.kind,
        delegatingRole: record.delegatingRole,
        depth: record.depth,
        request: { ...record.request, taskId: "-" },
        response: { ...record.response, taskId: "-", duration: Duration.toMillis(record.response.duration) }
      }))).toEqual([
        [" ", "x", "FAILURE", " ", null, 0],
        ["Editor", "Edit", "FAILURE", "Editor", null, 0],
        ["Reviewer", "Review early", "FAILURE", "Reviewer", null, 0],
        ["Researcher", "Dig", "SUCCESS", "Researcher", "Dug.", 2000],
        ["Writer", "Draft [fail]", "FAILURE", "Writer", null, 3000]
      ].map(([agentRole, taskDescription, status, workerRole, rawOutput, duration], i) => ({
        kind: "manager",
        delegatingRole: "Manager",
        depth: 0,
        request: {
          taskId: "-",
          agentRole,
          taskDescription,
          scope: {},
          priority: "NORMAL",
          maxOutputRetries: 0,
          metadata: {}
        },
        response: {
          taskId: "-",
          status,
          workerRole,
          rawOutput,
          artifacts: {},
          errors: errors[i] === undefined ? [] : [errors[i]],
          metadata: {},
          duration
        }
      })))
      // ids: request and response share one, all distinct (their format: see "delegation ids" below)
      const ids = output.delegations.map((record: Delegation.DelegationRecord) => record.request.taskId)
      for (const record of output.delegations) expect(record.response.taskId).toBe(record.request.taskId)
      expect(new Set(ids).size).toBe(5)
      // the run goes on after every blocked or failed attempt
      expect(managerSaw(manager)).toEqual([
        "ok Error: agentRole must not be blank.",
        "ok No agent found with role 'Editor'. Available roles: [Researcher, Writer, Reviewer]",
        "ok Delegation rejected: Worker 'Reviewer' is not in the allowed workers list. Allowed: [Researcher, Writer]",
        "ok Dug.",
        "failed Worker 'Writer' failed: The model call failed: Writer is overloaded"
      ])
      expect(output.taskOutputs.map((o) => [o.agentRole, o.raw, Duration.toMillis(o.duration)])).toEqual([
        ["Researcher", "Dug.", 2000],
        ["Manager", "Summary.", 11000]
      ])
      expect(DateTime.toEpochMillis(output.taskOutputs[0].completedAt)).toBe(6000)
      expect(Duration.toMillis(output.totalDuration)).toBe(11000)
      expect(output.raw).toBe("Summary.")
    }).pipe(Effect.provide(workers.layer))
  })
})

interface IdRow {
  readonly name: string
  /** What the Random service's nextDoubleUnsafe returns, call after call. */
  readonly doubles: (call: number) => number
  readonly ids: ReadonlyArray<string>
}

const idRows: ReadonlyArray<IdRow> = [
  {
    name: "lowest draws: all-zero bytes with the version and variant bits set",
    doubles: () => 0,
    ids: ["00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000"]
  },
  {
    name: "highest draws: every byte is at most ff",
    doubles: () => 0.999999,
    ids: ["ffffffff-ffff-4fff-bfff-ffffffffffff", "ffffffff-ffff-4fff-bfff-ffffffffffff"]
  },
  {
    name: "draws landing in the middle of each byte value: byte n is n",
    doubles: (call) => ((call % 256) + 0.5) / 256,
    ids: ["00010203-0405-4607-8809-0a0b0c0d0e0f", "10111213-1415-4617-9819-1a1b1c1d1e1f"]
  },
  {
    name: "draws landing in the middle of each byte value, upper half: byte n is n",
    doubles: (call) => ((call % 128) + 128.5) / 256,
    ids: ["80818283-8485-4687-8889-8a8b8c8d8e8f", "90919293-9495-4697-9899-9a9b9c9d9e9f"]
  }
]

describe("delegation ids are UUID v4 drawn from Effect's Random: 16 bytes in [0, 255]", () => {
  for (const row of idRows) {
    it.effect(row.name, () => {
      const manager = managerModel([to("Editor", "A"), to("Writer", "B")])
      const workers = workerModel()
      let call = 0
      return Effect.gen(function*() {
        const ensemble = yield* makeTeam({ managerLlm: manager })
        const output = yield* Ensemble.run(ensemble, { topic: "Effect" })
        expect(output.delegations.map((record) => record.request.taskId)).toEqual(row.ids)
        expect(output.delegations.map((record) => record.response.taskId)).toEqual(row.ids)
        for (const id of row.ids) expect(id).toMatch(uuidV4)
      }).pipe(
        Effect.provideService(Random.Random, { nextDoubleUnsafe: () => row.doubles(call++), nextIntUnsafe: () => 0 }),
        Effect.provide(workers.layer)
      )
    })
  }
})

import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, Fiber, Random } from "effect"
import type { Prompt } from "effect/ai"
import { TestClock } from "effect/testing"
import { ChatModel, MaxRunsPolicy } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import type { Delegation, HierarchicalConstraints, TaskOutput } from "../../src/ensemble/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { toolkit } from "../support/ensemble.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The fixed closing paragraph of every system prompt (see AgentPrompt.system). */
const closing = "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."

const managerGoal =
  "Coordinate the worker agents to complete every task, then combine their results into one final answer"

/** The manager's system prompt for a team listing. */
const managerSystem = (team: ReadonlyArray<string>): string =>
  [
    "You are Manager.",
    `Your team:\n${team.join("\n")}\n\n` +
    "Use the delegateTask tool to give work to your team, review what they return, and write the final answer.",
    `Your goal: ${managerGoal}`,
    closing
  ].join("\n\n")

/** The manager's user prompt for a list of (filled) tasks. */
const managerUser = (tasks: ReadonlyArray<readonly [string, string, string]>): string =>
  "## Task\nCoordinate your team to complete these tasks:\n\n" +
  tasks.map(([description, expected, role], i) =>
    `Task ${i + 1} (suggested: ${role}): ${description}\nExpected output: ${expected}`
  ).join("\n\n") +
  "\n\nDelegate each task to the most suitable team member with delegateTask, passing its number as taskNumber. " +
  "When all are done, combine the results into a final answer.\n\n" +
  "## Expected output\nA final answer combining the outputs of all delegated tasks"

const managerTaskDescription = (tasks: ReadonlyArray<readonly [string, string, string]>): string =>
  managerUser(tasks).slice("## Task\n".length, managerUser(tasks).indexOf("\n\n## Expected output"))

/** The user prompt of a delegated piece of work. */
const workerUser = (description: string): string =>
  `## Task\n${description}\n\n## Expected output\nComplete the assigned task thoroughly`

const lookupHandlers = toolkit.toLayer({ lookup: ({ query }) => Effect.succeed(`found ${query}`) })

const makeResearcher = () =>
  Agent.make({ role: "Researcher", goal: "Find reliable facts", background: "You have read every paper." })
const makeWriter = () => Agent.make({ role: "Writer", goal: "Write clear prose" })
const makeReviewer = () => Agent.make({ role: "Reviewer", goal: "Catch mistakes", background: "  " })

const researcherSystem = ["You are Researcher.", "You have read every paper.", "Your goal: Find reliable facts", closing]
  .join("\n\n")
const writerSystem = ["You are Writer.", "Your goal: Write clear prose", closing].join("\n\n")

/** The team listing of Researcher, Writer, Reviewer (a blank background is omitted). */
const team3 = [
  "1. Researcher\n   Goal: Find reliable facts\n   Background: You have read every paper.",
  "2. Writer\n   Goal: Write clear prose",
  "3. Reviewer\n   Goal: Catch mistakes"
]

/** The text of a message: a system string, or the text parts of any other message. */
const messageText = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")

/** One line per message: role and content, tool calls and results included. */
/** What the model was offered in each request. */
const offered = (model: ChatModel.ScriptedModel) =>
  model.requests.map((request) => ({ tools: request.tools.map((tool) => tool.name), toolChoice: request.toolChoice }))

/**
 * The tool results the manager saw, in order: each `delegateTask` result is
 * the last message of the manager's next request ("ok …" or "failed …").
 */
const managerSaw = (manager: ChatModel.ScriptedModel): ReadonlyArray<string> =>
  manager.requests.flatMap((request) => {
    const last = request.prompt.content[request.prompt.content.length - 1]
    if (last.role !== "tool") return []
    return last.content.flatMap((part) =>
      part.type === "tool-result" ? [`${part.isFailure ? "failed" : "ok"} ${String(part.result)}`] : []
    )
  })

/** A task's output without its time fields. */
const summary = (output: TaskOutput.TaskOutput) => {
  const { completedAt: _completedAt, duration: _duration, ...rest } = output
  return rest
}

/**
 * A worker model: answers "<Role> did: <task>" from the prompt it gets, or
 * fails ("<Role> is overloaded") when the task holds "[fail]". Order-proof, so
 * it can serve any number of delegations.
 */
const workerTurn = (latency?: Duration.Input): ChatModel.ScriptedTurn => (request) => {
  const [system, user] = request.prompt.content.map(messageText)
  const role = /^You are (.*?)\./.exec(system)?.[1] ?? "?"
  const task = /^## Task\n([\s\S]*?)\n\n## Expected output/.exec(user)?.[1] ?? "?"
  const reply: ChatModel.ScriptedReply = task.includes("[fail]")
    ? { fail: `${role} is overloaded` }
    : { text: `${role} did: ${task}` }
  return latency === undefined ? reply : { ...reply, latency }
}
const workerModel = (n = 20, latency?: Duration.Input) =>
  ChatModel.scripted(Array.from({ length: n }, () => workerTurn(latency)))

interface Call {
  readonly agentRole: string
  readonly taskDescription: string
}

/** A delegation to `role` of the task "<role> work #i" (or the given description). */
const to = (agentRole: string, taskDescription = `${agentRole.trim()} work`): Call => ({ agentRole, taskDescription })

/** A manager model: one delegateTask call per turn, then `final`. */
const managerModel = (calls: ReadonlyArray<Call>, final = "Final synthesis.") =>
  ChatModel.scripted([
    ...calls.map((params) => ({ toolCalls: [{ name: "delegateTask", params }] })),
    { text: final }
  ])

const ok = (role: string, task: string) => `ok ${role} did: ${task}`
const rejected = (reason: string) => `ok Delegation rejected: ${reason}`

const asTaskExecutionError = (error: EnsembleError.EnsembleError): EnsembleError.TaskExecutionError => {
  if (error._tag !== "TaskExecutionError") throw new globalThis.Error(`expected TaskExecutionError, got ${error._tag}`)
  return error
}
const asConstraintViolation = (error: EnsembleError.EnsembleError): EnsembleError.ConstraintViolationError => {
  if (error._tag !== "ConstraintViolationError") {
    throw new globalThis.Error(`expected ConstraintViolationError, got ${error._tag}: ${error.message}`)
  }
  return error
}
const asValidation = (error: EnsembleError.ValidationError | EnsembleError.EnsembleError) => {
  if (error._tag !== "ValidationError") throw new globalThis.Error(`expected ValidationError, got ${error._tag}`)
  return error
}

/** The three-worker hierarchical ensemble used by most tests. */
const makeTeam = (
  options: {
    readonly constraints?: HierarchicalConstraints.HierarchicalConstraints
    readonly managerLlm?: ChatModel.ScriptedModel
    readonly managerMaxIterations?: number
  } = {}
) =>
  Effect.gen(function*() {
    const researcher = yield* makeResearcher()
    const writer = yield* makeWriter()
    const reviewer = yield* makeReviewer()
    const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Facts about {topic}", agent: researcher })
    const write = yield* Task.make({ description: "Write about {topic}", expectedOutput: "Two paragraphs", agent: writer })
    const review = yield* Task.make({ description: "Review the article", expectedOutput: "A verdict", agent: reviewer })
    return yield* Ensemble.make({
      agents: [researcher, writer, reviewer],
      tasks: [research, write, review],
      workflow: "HIERARCHICAL",
      ...(options.constraints === undefined ? {} : { constraints: options.constraints }),
      ...(options.managerLlm === undefined ? {} : { managerLlm: options.managerLlm.layer }),
      ...(options.managerMaxIterations === undefined ? {} : { managerMaxIterations: options.managerMaxIterations })
    })
  })

const teamTasks: ReadonlyArray<readonly [string, string, string]> = [
  ["Research Effect", "Facts about Effect", "Researcher"],
  ["Write about Effect", "Two paragraphs", "Writer"],
  ["Review the article", "A verdict", "Reviewer"]
]

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

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

// -----------------------------------------------------------------------------
// Guards: a table. Every blocked attempt is a tool result; the run continues.
// -----------------------------------------------------------------------------

interface GuardRow {
  readonly name: string
  readonly constraints?: HierarchicalConstraints.HierarchicalConstraints
  readonly calls: ReadonlyArray<Call>
  /** What the manager saw for each call, in order. */
  readonly saw: ReadonlyArray<string>
  /** The raw outputs of the run (workers in delegation order, then the manager's). */
  readonly outputs: ReadonlyArray<string>
}

const stageWait = (worker: string, stage: number, waiting: string) =>
  `Worker '${worker}' cannot be delegated to yet: stage ${stage} worker '${waiting}' has not yet completed. ` +
  "All workers in earlier stages must complete before this stage can begin."

const guardRows: ReadonlyArray<GuardRow> = [
  {
    name: "blank agentRole",
    calls: [to("   ", "Do it"), to("Writer", "W")],
    saw: ["ok Error: agentRole must not be blank.", ok("Writer", "W")],
    outputs: ["Writer did: W", "Final synthesis."]
  },
  {
    name: "blank taskDescription",
    calls: [to("Writer", " \n "), to("Writer", "W")],
    saw: ["ok Error: taskDescription must not be blank.", ok("Writer", "W")],
    outputs: ["Writer did: W", "Final synthesis."]
  },
  {
    name: "both blank: agentRole is reported",
    calls: [to("", "")],
    saw: ["ok Error: agentRole must not be blank."],
    outputs: ["Final synthesis."]
  },
  {
    name: "unknown role, listing the available roles",
    calls: [to("Editor", "Edit it"), to("Writer", "W")],
    saw: ["ok No agent found with role 'Editor'. Available roles: [Researcher, Writer, Reviewer]", ok("Writer", "W")],
    outputs: ["Writer did: W", "Final synthesis."]
  },
  {
    name: "the manager cannot delegate to itself: Manager is not a worker",
    calls: [to("Manager", "Self")],
    saw: ["ok No agent found with role 'Manager'. Available roles: [Researcher, Writer, Reviewer]"],
    outputs: ["Final synthesis."]
  },
  {
    name: "an unknown role is reported before any constraint",
    constraints: { allowedWorkers: ["Writer"], globalMaxDelegations: 1 },
    calls: [to("Writer", "W"), to("Editor", "E")],
    saw: [ok("Writer", "W"), "ok No agent found with role 'Editor'. Available roles: [Researcher, Writer, Reviewer]"],
    outputs: ["Writer did: W", "Final synthesis."]
  },
  {
    name: "allowedWorkers: a disallowed worker is rejected, the manager still finishes",
    constraints: { allowedWorkers: ["Researcher", "Writer"] },
    calls: [to("Reviewer", "R"), to("Researcher", "S")],
    saw: [
      rejected("Worker 'Reviewer' is not in the allowed workers list. Allowed: [Researcher, Writer]"),
      ok("Researcher", "S")
    ],
    outputs: ["Researcher did: S", "Final synthesis."]
  },
  {
    name: "globalMaxDelegations: once reached, every worker is blocked",
    constraints: { globalMaxDelegations: 2 },
    calls: [to("Researcher", "A"), to("Writer", "B"), to("Reviewer", "C"), to("Researcher", "D")],
    saw: [
      ok("Researcher", "A"),
      ok("Writer", "B"),
      rejected("Global delegation cap of 2 reached. No further delegations are permitted in this run."),
      rejected("Global delegation cap of 2 reached. No further delegations are permitted in this run.")
    ],
    outputs: ["Researcher did: A", "Writer did: B", "Final synthesis."]
  },
  {
    name: "globalMaxDelegations 0 is unlimited",
    constraints: { globalMaxDelegations: 0 },
    calls: [to("Writer", "A"), to("Writer", "B"), to("Writer", "C")],
    saw: [ok("Writer", "A"), ok("Writer", "B"), ok("Writer", "C")],
    outputs: ["Writer did: A", "Writer did: B", "Writer did: C", "Final synthesis."]
  },
  {
    name: "maxCallsPerWorker: a capped worker is blocked, others are not",
    constraints: { maxCallsPerWorker: { Writer: 2 } },
    calls: [to("Writer", "A"), to("Writer", "B"), to("Writer", "C"), to("Researcher", "D")],
    saw: [
      ok("Writer", "A"),
      ok("Writer", "B"),
      rejected("Worker 'Writer' has reached its per-worker delegation cap of 2."),
      ok("Researcher", "D")
    ],
    outputs: ["Writer did: A", "Writer did: B", "Researcher did: D", "Final synthesis."]
  },
  {
    name: "requiredStages: a later stage waits for every worker of the earlier stages",
    constraints: { requiredStages: [["Researcher", "Reviewer"], ["Writer"]] },
    calls: [to("Writer", "A"), to("Researcher", "B"), to("Writer", "C"), to("Reviewer", "D"), to("Writer", "E")],
    saw: [
      rejected(stageWait("Writer", 1, "Researcher")),
      ok("Researcher", "B"),
      rejected(stageWait("Writer", 1, "Reviewer")),
      ok("Reviewer", "D"),
      ok("Writer", "E")
    ],
    outputs: ["Researcher did: B", "Reviewer did: D", "Writer did: E", "Final synthesis."]
  },
  {
    name: "requiredStages: names the first unfinished stage; workers outside the stages are free",
    constraints: { requiredStages: [["Researcher"], ["Reviewer"], ["Writer"]] },
    calls: [to("Writer", "A"), to("Researcher", "B"), to("Writer", "C"), to("Reviewer", "D"), to("Writer", "E")],
    saw: [
      rejected(stageWait("Writer", 1, "Researcher")),
      ok("Researcher", "B"),
      rejected(stageWait("Writer", 2, "Reviewer")),
      ok("Reviewer", "D"),
      ok("Writer", "E")
    ],
    outputs: ["Researcher did: B", "Reviewer did: D", "Writer did: E", "Final synthesis."]
  },
  {
    name: "requiredStages: a worker in no stage is never held back",
    constraints: { requiredStages: [["Researcher"], ["Writer"]] },
    calls: [to("Reviewer", "A")],
    saw: [ok("Reviewer", "A")],
    outputs: ["Reviewer did: A", "Final synthesis."]
  },
  // order of the guards: allowed, global, per-worker, stage
  {
    name: "order: allowedWorkers before globalMaxDelegations",
    constraints: { allowedWorkers: ["Researcher"], globalMaxDelegations: 1 },
    calls: [to("Researcher", "A"), to("Writer", "B")],
    saw: [
      ok("Researcher", "A"),
      rejected("Worker 'Writer' is not in the allowed workers list. Allowed: [Researcher]")
    ],
    outputs: ["Researcher did: A", "Final synthesis."]
  },
  {
    name: "order: globalMaxDelegations before maxCallsPerWorker",
    constraints: { globalMaxDelegations: 1, maxCallsPerWorker: { Researcher: 1 } },
    calls: [to("Researcher", "A"), to("Researcher", "B")],
    saw: [
      ok("Researcher", "A"),
      rejected("Global delegation cap of 1 reached. No further delegations are permitted in this run.")
    ],
    outputs: ["Researcher did: A", "Final synthesis."]
  },
  {
    name: "order: globalMaxDelegations before requiredStages",
    constraints: { globalMaxDelegations: 1, requiredStages: [["Researcher"], ["Writer"]] },
    calls: [to("Reviewer", "A"), to("Writer", "B")],
    saw: [
      ok("Reviewer", "A"),
      rejected("Global delegation cap of 1 reached. No further delegations are permitted in this run.")
    ],
    outputs: ["Reviewer did: A", "Final synthesis."]
  },
  {
    name: "order: allowedWorkers before requiredStages",
    constraints: { allowedWorkers: ["Researcher", "Reviewer"], requiredStages: [["Researcher"], ["Writer"]] },
    calls: [to("Writer", "A")],
    saw: [rejected("Worker 'Writer' is not in the allowed workers list. Allowed: [Researcher, Reviewer]")],
    outputs: ["Final synthesis."]
  },
  {
    name: "order: maxCallsPerWorker before requiredStages",
    // Writer is capped at 1 and stage 2 is open after Researcher completes; Writer's second call hits the cap,
    // though its stage would let it through
    constraints: { maxCallsPerWorker: { Writer: 1 }, requiredStages: [["Researcher"], ["Writer"]] },
    calls: [to("Researcher", "A"), to("Writer", "B"), to("Writer", "C")],
    saw: [ok("Researcher", "A"), ok("Writer", "B"), rejected("Worker 'Writer' has reached its per-worker delegation cap of 1.")],
    outputs: ["Researcher did: A", "Writer did: B", "Final synthesis."]
  },
  // what counts
  {
    name: "blocked attempts use no slot of the caps",
    constraints: { globalMaxDelegations: 1, allowedWorkers: ["Researcher", "Writer"], maxCallsPerWorker: { Writer: 1 } },
    calls: [to("Editor", "E"), to("Reviewer", "R"), to("", "Q"), to("Writer", "A"), to("Writer", "B")],
    saw: [
      "ok No agent found with role 'Editor'. Available roles: [Researcher, Writer, Reviewer]",
      rejected("Worker 'Reviewer' is not in the allowed workers list. Allowed: [Researcher, Writer]"),
      "ok Error: agentRole must not be blank.",
      ok("Writer", "A"),
      rejected("Global delegation cap of 1 reached. No further delegations are permitted in this run.")
    ],
    outputs: ["Writer did: A", "Final synthesis."]
  },
  {
    name: "a failing worker still uses a per-worker slot",
    constraints: { maxCallsPerWorker: { Writer: 1 } },
    calls: [to("Writer", "A [fail]"), to("Writer", "B")],
    saw: [
      "failed Worker 'Writer' failed: The model call failed: Writer is overloaded",
      rejected("Worker 'Writer' has reached its per-worker delegation cap of 1.")
    ],
    outputs: ["Final synthesis."]
  },
  {
    name: "a failing worker still uses a global slot",
    constraints: { globalMaxDelegations: 2 },
    calls: [to("Writer", "A [fail]"), to("Researcher", "B"), to("Reviewer", "C")],
    saw: [
      "failed Worker 'Writer' failed: The model call failed: Writer is overloaded",
      ok("Researcher", "B"),
      rejected("Global delegation cap of 2 reached. No further delegations are permitted in this run.")
    ],
    outputs: ["Researcher did: B", "Final synthesis."]
  },
  {
    name: "stages count completed delegations: a failed one does not open the next stage",
    constraints: { requiredStages: [["Researcher"], ["Writer"]] },
    calls: [to("Researcher", "A [fail]"), to("Writer", "B"), to("Researcher", "C"), to("Writer", "D")],
    saw: [
      "failed Worker 'Researcher' failed: The model call failed: Researcher is overloaded",
      rejected(stageWait("Writer", 1, "Researcher")),
      ok("Researcher", "C"),
      ok("Writer", "D")
    ],
    outputs: ["Researcher did: C", "Writer did: D", "Final synthesis."]
  },
  {
    name: "a failing worker: its real message reaches the manager, the run goes on",
    calls: [to("Reviewer", "Check [fail]"), to("Reviewer", "Check again")],
    saw: [
      "failed Worker 'Reviewer' failed: The model call failed: Reviewer is overloaded",
      ok("Reviewer", "Check again")
    ],
    outputs: ["Reviewer did: Check again", "Final synthesis."]
  }
]

describe("guards: returned to the manager as tool results, never thrown", () => {
  for (const row of guardRows) {
    it.effect(row.name, () => {
      const manager = managerModel(row.calls)
      const workers = workerModel()
      return Effect.gen(function*() {
        const ensemble = yield* makeTeam({
          managerLlm: manager,
          ...(row.constraints === undefined ? {} : { constraints: row.constraints })
        })
        const output = yield* Ensemble.run(ensemble, { topic: "Effect" })

        expect(managerSaw(manager)).toEqual(row.saw)
        expect(manager.calls).toBe(row.calls.length + 1)
        expect(output.taskOutputs.map((o) => o.raw)).toEqual(row.outputs)
        expect(output.raw).toBe("Final synthesis.")
        // one record per attempt, FAILURE exactly where the manager saw something other than a worker's answer
        expect(output.delegations.map((r) => r.response.status)).toEqual(
          row.saw.map((seen) => (/^ok \w+ did: /.test(seen) ? "SUCCESS" : "FAILURE"))
        )
        expect(output.delegations.map((r) => r.request.agentRole)).toEqual(row.calls.map((c) => c.agentRole))
        // only approved attempts reach the worker model
        expect(workers.calls).toBe(row.saw.filter((seen) => /^ok \w+ did: |^failed Worker/.test(seen)).length)
      }).pipe(Effect.provide(workers.layer))
    })
  }
})

describe("several delegateTask calls in one manager turn (run concurrently)", () => {
  const oneTurn = (calls: ReadonlyArray<Call>) =>
    ChatModel.scripted([
      { toolCalls: calls.map((params) => ({ name: "delegateTask", params })) },
      { text: "Final synthesis." }
    ])
  const stageMessage = stageWait("Writer", 1, "Researcher")

  interface RoundRow {
    readonly name: string
    readonly constraints: HierarchicalConstraints.HierarchicalConstraints
    readonly calls: ReadonlyArray<Call>
    /** What the manager saw, sorted (the order the calls settle in is not the point). */
    readonly saw: ReadonlyArray<string>
  }
  const roundRows: ReadonlyArray<RoundRow> = [
    {
      name: "globalMaxDelegations 2 over three calls: exactly two run",
      constraints: { globalMaxDelegations: 2 },
      calls: [to("Researcher", "A"), to("Writer", "B"), to("Reviewer", "C")],
      saw: [
        "ok Delegation rejected: Global delegation cap of 2 reached. No further delegations are permitted in this run.",
        "ok Researcher did: A",
        "ok Writer did: B"
      ]
    },
    {
      name: "maxCallsPerWorker 1 over two calls to the same worker: exactly one runs",
      constraints: { maxCallsPerWorker: { Writer: 1 } },
      calls: [to("Writer", "A"), to("writer", "A")],
      saw: ["ok Delegation rejected: Worker 'Writer' has reached its per-worker delegation cap of 1.", "ok Writer did: A"]
    },
    {
      name: "a stage-2 worker in the same turn as stage 1: stage 1 has not completed yet",
      constraints: { requiredStages: [["Researcher"], ["Writer"]] },
      calls: [to("Researcher", "A"), to("Writer", "B")],
      saw: [`ok Delegation rejected: ${stageMessage}`, "ok Researcher did: A"]
    }
  ]
  for (const row of roundRows) {
    it.effect(row.name, () => {
      const manager = oneTurn(row.calls)
      // workers take a second, so no delegation of the turn completes before the others start
      const workers = workerModel(10, "1 second")
      return Effect.gen(function*() {
        const ensemble = yield* makeTeam({ managerLlm: manager, constraints: row.constraints })
        const fiber = yield* Effect.forkChild(Ensemble.run(ensemble, { topic: "Effect" }))
        yield* TestClock.adjust("1 minute")
        const output = yield* Fiber.join(fiber)
        expect([...managerSaw(manager)].sort()).toEqual(row.saw)
        expect(workers.calls).toBe(row.saw.filter((seen) => seen.includes(" did: ")).length)
        expect(output.delegations.length).toBe(row.calls.length)
        expect(output.raw).toBe("Final synthesis.")
      }).pipe(Effect.provide(workers.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// Required workers and failures
// -----------------------------------------------------------------------------

describe("requiredWorkers are checked after the manager finishes", () => {
  it.effect("one required worker never called: ConstraintViolationError with the worker outputs and the manager's", () => {
    const manager = managerModel([to("Researcher", "Dig")], "Partial synthesis.")
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager, constraints: { requiredWorkers: ["Researcher", "Writer"] } })
      const error = asConstraintViolation(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))

      expect(error).toBeInstanceOf(EnsembleError.ConstraintViolationError)
      expect(error.violations).toEqual(["Required worker 'Writer' was not delegated to during this run."])
      expect(error.message).toBe(
        "Hierarchical constraint violated: Required worker 'Writer' was not delegated to during this run."
      )
      expect(error.completedOutputs.map(summary)).toEqual([
        { raw: "Researcher did: Dig", taskDescription: "Dig", agentRole: "Researcher", toolCallCount: 0 },
        { raw: "Partial synthesis.", taskDescription: managerTaskDescription(teamTasks), agentRole: "Manager", toolCallCount: 1 }
      ])
      // the manager ran to its end
      expect(manager.calls).toBe(2)
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("several required workers missing: every violation, in the configured order", () => {
    const manager = managerModel([], "Did it myself.")
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({
        managerLlm: manager,
        constraints: { requiredWorkers: ["Writer", "Reviewer", "Researcher"] }
      })
      const error = asConstraintViolation(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))
      const violations = [
        "Required worker 'Writer' was not delegated to during this run.",
        "Required worker 'Reviewer' was not delegated to during this run.",
        "Required worker 'Researcher' was not delegated to during this run."
      ]
      expect(error.violations).toEqual(violations)
      expect(error.message).toBe(`Hierarchical constraints violated (3): ${violations.join("; ")}`)
      expect(error.completedOutputs.map((o) => [o.agentRole, o.raw])).toEqual([["Manager", "Did it myself."]])
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("a required worker whose only delegation failed or was blocked is still a violation", () => {
    const manager = managerModel([to("Writer", "Draft [fail]"), to("Writer", "Again")])
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({
        managerLlm: manager,
        constraints: { requiredWorkers: ["Writer"], maxCallsPerWorker: { Writer: 1 } }
      })
      const error = asConstraintViolation(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))
      expect(managerSaw(manager)).toEqual([
        "failed Worker 'Writer' failed: The model call failed: Writer is overloaded",
        rejected("Worker 'Writer' has reached its per-worker delegation cap of 1.")
      ])
      expect(error.violations).toEqual(["Required worker 'Writer' was not delegated to during this run."])
      expect(error.completedOutputs.map((o) => o.agentRole)).toEqual(["Manager"])
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("every required worker delegated to: the run succeeds", () => {
    const manager = managerModel([to("Writer", "Draft"), to("Researcher", "Dig")])
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager, constraints: { requiredWorkers: ["Researcher", "Writer"] } })
      const output = yield* Ensemble.run(ensemble, { topic: "Effect" })
      expect(output.taskOutputs.map((o) => o.raw)).toEqual(["Writer did: Draft", "Researcher did: Dig", "Final synthesis."])
    }).pipe(Effect.provide(workers.layer))
  })
})

describe("the manager fails", () => {
  it.effect("TaskExecutionError 'Hierarchical workflow manager failed: …' with the worker outputs so far", () => {
    const manager = ChatModel.scripted([
      { toolCalls: [{ name: "delegateTask", params: to("Researcher", "Dig") }] },
      { toolCalls: [{ name: "delegateTask", params: to("Writer", "Draft") }] },
      { fail: "manager overloaded" },
      { text: "never" }
    ])
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager, constraints: { requiredWorkers: ["Reviewer"] } })
      const error = asTaskExecutionError(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))

      expect(error).toBeInstanceOf(EnsembleError.TaskExecutionError)
      expect(error.taskDescription).toBe("Hierarchical workflow manager")
      expect(error.agentRole).toBe("Manager")
      expect(error.reason).toBe("Hierarchical workflow manager failed: The model call failed: manager overloaded")
      expect(error.message).toBe(
        "Task 'Hierarchical workflow manager' (agent 'Manager') failed: " +
          "Hierarchical workflow manager failed: The model call failed: manager overloaded"
      )
      expect(error.completedOutputs.map(summary)).toEqual([
        { raw: "Researcher did: Dig", taskDescription: "Dig", agentRole: "Researcher", toolCallCount: 0 },
        { raw: "Writer did: Draft", taskDescription: "Draft", agentRole: "Writer", toolCallCount: 0 }
      ])
      expect(manager.calls).toBe(3)
      expect(workers.calls).toBe(2)
    }).pipe(Effect.provide(workers.layer))
  })

  it.effect("a manager failing on its first call carries no outputs", () => {
    const manager = ChatModel.scripted([{ fail: "no capacity" }])
    const workers = workerModel()
    return Effect.gen(function*() {
      const ensemble = yield* makeTeam({ managerLlm: manager })
      const error = asTaskExecutionError(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))
      expect(error.reason).toBe("Hierarchical workflow manager failed: The model call failed: no capacity")
      expect(error.completedOutputs).toEqual([])
      expect(workers.calls).toBe(0)
    }).pipe(Effect.provide(workers.layer))
  })
})

// -----------------------------------------------------------------------------
// Validation at make
// -----------------------------------------------------------------------------

interface ValidationRow {
  readonly name: string
  readonly constraints: HierarchicalConstraints.HierarchicalConstraints
  readonly message: string
}

const validationRows: ReadonlyArray<ValidationRow> = [
  {
    name: "allowedWorkers references an unknown agent",
    constraints: { allowedWorkers: ["Researcher", "Editor"] },
    message: "HierarchicalConstraints.allowedWorkers references unknown agent: 'Editor'"
  },
  {
    name: "requiredWorkers not in allowedWorkers",
    constraints: { allowedWorkers: ["Researcher"], requiredWorkers: ["Researcher", "Writer"] },
    message: "HierarchicalConstraints.requiredWorkers contains 'Writer' which is not in allowedWorkers"
  },
  {
    name: "requiredWorkers references an unknown agent",
    constraints: { requiredWorkers: ["Editor"] },
    message: "HierarchicalConstraints.requiredWorkers references unknown agent: 'Editor'"
  },
  {
    name: "maxCallsPerWorker has an unknown key",
    constraints: { maxCallsPerWorker: { Writer: 2, Editor: 1 } },
    message: "HierarchicalConstraints.maxCallsPerWorker references unknown agent: 'Editor'"
  },
  {
    name: "maxCallsPerWorker value 0",
    constraints: { maxCallsPerWorker: { Writer: 0 } },
    message: "HierarchicalConstraints.maxCallsPerWorker value for 'Writer' must be > 0, got: 0"
  },
  {
    name: "maxCallsPerWorker value negative",
    constraints: { maxCallsPerWorker: { Researcher: 1, Writer: -2 } },
    message: "HierarchicalConstraints.maxCallsPerWorker value for 'Writer' must be > 0, got: -2"
  },
  {
    name: "globalMaxDelegations negative",
    constraints: { globalMaxDelegations: -1 },
    message: "HierarchicalConstraints.globalMaxDelegations must be >= 0, got: -1"
  },
  {
    name: "requiredStages references an unknown agent",
    constraints: { requiredStages: [["Researcher"], ["Writer", "Editor"]] },
    message: "HierarchicalConstraints.requiredStages references unknown agent: 'Editor'"
  },
  {
    name: "requiredStages has a role in two stages",
    constraints: { requiredStages: [["Researcher", "Writer"], ["Reviewer"], ["Writer"]] },
    message: "HierarchicalConstraints.requiredStages contains duplicate agent role 'Writer' in multiple stages"
  },
  {
    name: "requiredStages: the duplicate may differ in case and spaces (the second spelling is named)",
    constraints: { requiredStages: [["Researcher"], [" researcher "]] },
    message: "HierarchicalConstraints.requiredStages contains duplicate agent role ' researcher ' in multiple stages"
  }
]

describe("constraints are cross-validated at make, before any model call", () => {
  for (const row of validationRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([])
      return Effect.gen(function*() {
        const error = asValidation(yield* Effect.flip(makeTeam({ constraints: row.constraints })))
        expect(error).toBeInstanceOf(EnsembleError.ValidationError)
        expect(error.message).toBe(row.message)
        expect(model.calls).toBe(0)
      }).pipe(Effect.provide(model.layer))
    })
  }

  it.effect("constraints and the Manager role are ignored by other workflows", () => {
    const model = ChatModel.scripted([{ text: "Managed." }])
    return Effect.gen(function*() {
      const boss = yield* Agent.make({ role: "Manager", goal: "Manage" })
      const task = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: boss })
      const ensemble = yield* Ensemble.make({
        agents: [boss],
        tasks: [task],
        workflow: "SEQUENTIAL",
        constraints: { allowedWorkers: ["Editor"], globalMaxDelegations: -1 }
      })
      const output = yield* Ensemble.run(ensemble)
      expect(output.raw).toBe("Managed.")
    }).pipe(Effect.provide(model.layer))
  })
})

interface AgentRuleRow {
  readonly name: string
  readonly roles: ReadonlyArray<string>
  readonly managerMaxIterations?: number
  readonly message: string
}

const agentRuleRows: ReadonlyArray<AgentRuleRow> = [
  {
    name: "an agent named Manager is reserved",
    roles: ["Researcher", "Manager"],
    message: "Agent role 'Manager' is reserved for the manager of a HIERARCHICAL ensemble"
  },
  {
    name: "the reserved role in any case and with spaces",
    roles: [" mANAGER "],
    message: "Agent role ' mANAGER ' is reserved for the manager of a HIERARCHICAL ensemble"
  },
  {
    name: "duplicate roles",
    roles: ["Writer", "Researcher", "Writer"],
    message:
      "Ensemble agents must have distinct roles when agents are found by role (HIERARCHICAL, or delegation allowed): 'Writer' and 'Writer'"
  },
  {
    name: "duplicate roles differing in case and spaces",
    roles: ["Writer", " WRITER "],
    message:
      "Ensemble agents must have distinct roles when agents are found by role (HIERARCHICAL, or delegation allowed): 'Writer' and ' WRITER '"
  },
  {
    name: "managerMaxIterations 0",
    roles: ["Writer"],
    managerMaxIterations: 0,
    message: "Ensemble managerMaxIterations must be > 0, got: 0"
  },
  {
    name: "managerMaxIterations negative",
    roles: ["Writer"],
    managerMaxIterations: -5,
    message: "Ensemble managerMaxIterations must be > 0, got: -5"
  }
]

describe("agents of a HIERARCHICAL ensemble", () => {
  for (const row of agentRuleRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const agents = yield* Effect.forEach(row.roles, (role) => Agent.make({ role, goal: "Work" }))
        const task = yield* Task.make({ description: "Do", expectedOutput: "Done", agent: agents[0] })
        const error = yield* Effect.flip(Ensemble.make({
          agents,
          tasks: [task],
          workflow: "HIERARCHICAL",
          ...(row.managerMaxIterations === undefined ? {} : { managerMaxIterations: row.managerMaxIterations })
        }))
        expect(error).toBeInstanceOf(EnsembleError.ValidationError)
        expect(error.message).toBe(row.message)
      }))
  }
})

// -----------------------------------------------------------------------------
// Role matching: a case-variant role is the same agent for every guard
// -----------------------------------------------------------------------------

interface RoleRow {
  readonly name: string
  readonly constraints: HierarchicalConstraints.HierarchicalConstraints
  readonly calls: ReadonlyArray<Call>
  readonly saw: ReadonlyArray<string>
  /** The roles of the outputs (the agents' own spelling). */
  readonly roles: ReadonlyArray<string>
  /** Violations, when the run must fail with ConstraintViolationError. */
  readonly violations?: ReadonlyArray<string>
}

const roleRows: ReadonlyArray<RoleRow> = [
  {
    name: "lookup: 'researcher' and ' WRITER ' find Researcher and Writer",
    constraints: {},
    calls: [to("researcher", "A"), to(" WRITER ", "B")],
    saw: [ok("Researcher", "A"), ok("Writer", "B")],
    roles: ["Researcher", "Writer", "Manager"]
  },
  {
    name: "allowedWorkers: 'researcher' allows Researcher under any spelling, and only it",
    constraints: { allowedWorkers: ["researcher"] },
    calls: [to("RESEARCHER", "A"), to(" Researcher ", "B"), to("writer", "C")],
    saw: [
      ok("Researcher", "A"),
      ok("Researcher", "B"),
      rejected("Worker 'Writer' is not in the allowed workers list. Allowed: [researcher]")
    ],
    roles: ["Researcher", "Researcher", "Manager"]
  },
  {
    name: "maxCallsPerWorker: the cap keyed ' ReSearcher ' counts every spelling",
    constraints: { maxCallsPerWorker: { " ReSearcher ": 2 } },
    calls: [to("Researcher", "A"), to("researcher", "B"), to(" RESEARCHER ", "C")],
    saw: [
      ok("Researcher", "A"),
      ok("Researcher", "B"),
      rejected("Worker 'Researcher' has reached its per-worker delegation cap of 2.")
    ],
    roles: ["Researcher", "Researcher", "Manager"]
  },
  {
    name: "requiredStages: stages spelt ' researcher ' and 'WRITER' hold Writer back until Researcher completes",
    constraints: { requiredStages: [[" researcher "], ["WRITER"]] },
    calls: [to("writer", "A"), to("Researcher", "B"), to("Writer", "C")],
    saw: [rejected(stageWait("Writer", 1, " researcher ")), ok("Researcher", "B"), ok("Writer", "C")],
    roles: ["Researcher", "Writer", "Manager"]
  },
  {
    name: "requiredWorkers: 'RESEARCHER' is satisfied by a delegation to 'researcher'",
    constraints: { requiredWorkers: ["RESEARCHER"], allowedWorkers: ["Researcher"] },
    calls: [to("researcher", "A")],
    saw: [ok("Researcher", "A")],
    roles: ["Researcher", "Manager"]
  },
  {
    name: "requiredWorkers: ' writer ' is still missing when only Researcher was called",
    constraints: { requiredWorkers: [" writer "] },
    calls: [to("researcher", "A")],
    saw: [ok("Researcher", "A")],
    roles: ["Researcher", "Manager"],
    violations: ["Required worker ' writer ' was not delegated to during this run."]
  },
  {
    name: "cross-validation: every constraint accepts any spelling of a known role",
    constraints: {
      allowedWorkers: ["researcher", " WRITER "],
      requiredWorkers: ["Researcher", "writer"],
      maxCallsPerWorker: { RESEARCHER: 1, " writer": 1 },
      requiredStages: [["researcher"], ["Writer"]]
    },
    calls: [to("Writer", "A"), to("RESEARCHER", "B"), to("writer ", "C")],
    saw: [rejected(stageWait("Writer", 1, "researcher")), ok("Researcher", "B"), ok("Writer", "C")],
    roles: ["Researcher", "Writer", "Manager"]
  }
]

describe("role matching is trimmed and case-insensitive for every guard", () => {
  for (const row of roleRows) {
    it.effect(row.name, () => {
      const manager = managerModel(row.calls)
      const workers = workerModel()
      return Effect.gen(function*() {
        const ensemble = yield* makeTeam({ managerLlm: manager, constraints: row.constraints })
        const result = yield* Effect.result(Ensemble.run(ensemble, { topic: "Effect" }))

        expect(managerSaw(manager)).toEqual(row.saw)
        let outputs: ReadonlyArray<TaskOutput.TaskOutput>
        if (row.violations === undefined) {
          if (result._tag !== "Success") throw new globalThis.Error(`run failed: ${result.failure.message}`)
          outputs = result.success.taskOutputs
        } else {
          if (result._tag !== "Failure") throw new globalThis.Error("run succeeded; expected a violation")
          const error = asConstraintViolation(result.failure)
          expect(error.violations).toEqual(row.violations)
          outputs = error.completedOutputs
        }
        expect(outputs.map((o) => o.agentRole)).toEqual(row.roles)
      }).pipe(Effect.provide(workers.layer))
    })
  }
})

import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Random, Schema } from "effect"
import { Tool } from "effect/ai"
import { TestClock } from "effect/testing"
import { ChatModel } from "../../src/index.ts"
import { Agent, Delegation, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import type { HierarchicalConstraints, TaskOutput } from "../../src/ensemble/index.ts"
import { requestTranscripts, transcript } from "../support/transcript.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const goals: Readonly<Record<string, string>> = {
  Researcher: "Find reliable facts",
  Writer: "Write clear prose",
  Reviewer: "Catch mistakes"
}

/** The fixed closing paragraph of every system prompt. */
const closing = "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."
const systemOf = (role: string) => `system: ${[`You are ${role}.`, `Your goal: ${goals[role]}`, closing].join("\n\n")}`
const userOf = (description: string, expectedOutput: string) =>
  `user: ## Task\n${description}\n\n## Expected output\n${expectedOutput}`

/** The expected output every peer-delegated subtask gets. */
const subtaskExpected = "Complete the assigned subtask thoroughly"

const makeAgent = (role: "Researcher" | "Writer" | "Reviewer", allowDelegation: boolean) =>
  Agent.make({ role, goal: goals[role], allowDelegation })

const delegateCall = (agentRole: string, taskDescription: string): ChatModel.ScriptedReply => ({
  toolCalls: [{ name: "delegate", params: { agentRole, taskDescription } }]
})

/** One line per message: role and content, tool calls and results included. */
/** The names of the tools offered in each request. */
const offered = (model: ChatModel.ScriptedModel): ReadonlyArray<ReadonlyArray<string>> =>
  model.requests.map((request) => request.tools.map((tool) => tool.name))

const lastLine = (request: ChatModel.GenerateRequest): string => {
  const lines = transcript(request.prompt.content)
  return lines[lines.length - 1] ?? ""
}

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Checks that every record's request and response share an id, and that ids are distinct. */
const expectPairedIds = (records: ReadonlyArray<Delegation.DelegationRecord>) => {
  for (const record of records) {
    expect(record.request.taskId).toBeTypeOf("string")
    expect(record.response.taskId).toBe(record.request.taskId)
  }
  expect(new Set(records.map((record) => record.request.taskId)).size).toBe(records.length)
}

/** A record with its ids blanked and its duration in millis, for exact comparisons. */
const plain = (record: Delegation.DelegationRecord) => ({
  ...record,
  request: { ...record.request, taskId: "<id>" },
  response: { ...record.response, taskId: "<id>", duration: Duration.toMillis(record.response.duration) }
})

const expectedRequest = (agentRole: string, taskDescription: string) => ({
  taskId: "<id>",
  agentRole,
  taskDescription,
  scope: {},
  priority: "NORMAL",
  maxOutputRetries: 0,
  metadata: {}
})

/** A FAILURE record: `workerRole` is the agent that failed, or the role as asked when a guard blocked it. */
const failedRecord = (
  delegatingRole: string,
  depth: number,
  agentRole: string,
  taskDescription: string,
  workerRole: string,
  error: string,
  duration = 0
) => ({
  kind: "peer",
  delegatingRole,
  depth,
  request: expectedRequest(agentRole, taskDescription),
  response: {
    taskId: "<id>",
    status: "FAILURE",
    workerRole,
    rawOutput: null,
    artifacts: {},
    errors: [error],
    metadata: {},
    duration
  }
})

const blockedRecord = (delegatingRole: string, depth: number, agentRole: string, taskDescription: string, error: string) =>
  failedRecord(delegatingRole, depth, agentRole, taskDescription, agentRole, error)

const successRecord = (
  kind: "peer" | "manager",
  delegatingRole: string,
  depth: number,
  agentRole: string,
  taskDescription: string,
  workerRole: string,
  rawOutput: string,
  duration = 0
) => ({
  kind,
  delegatingRole,
  depth,
  request: expectedRequest(agentRole, taskDescription),
  response: {
    taskId: "<id>",
    status: "SUCCESS",
    workerRole,
    rawOutput,
    artifacts: {},
    errors: [],
    metadata: {},
    duration
  }
})

const brief = (output: TaskOutput.TaskOutput) => ({ agentRole: output.agentRole, raw: output.raw })

const asConstraintViolation = (error: EnsembleError.EnsembleError): EnsembleError.ConstraintViolationError => {
  if (error._tag !== "ConstraintViolationError") {
    throw new globalThis.Error(`expected ConstraintViolationError, got ${error._tag}: ${error.message}`)
  }
  return error
}

// -----------------------------------------------------------------------------
// The delegate tool
// -----------------------------------------------------------------------------

describe("the delegate tool is offered only to agents with allowDelegation", () => {
  it.effect("offered after the agent's own tools to an agent with allowDelegation, never to one without", () => {
    const model = ChatModel.scripted([{ text: "Facts." }, { text: "Prose." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* Agent.make({
        role: "Researcher",
        goal: goals.Researcher,
        toolkit,
        allowDelegation: true
      })
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, toolkit })
      const reviewer = yield* makeAgent("Reviewer", false)
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [research, write] })
      const output = yield* Ensemble.run(ensemble)

      expect(offered(model)).toEqual([["lookup", "delegate"], ["lookup"]])
      expect(output.delegations).toEqual([])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("the tool takes agentRole and taskDescription and describes itself to the model", () => {
    const model = ChatModel.scripted([{ text: "Facts." }])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [research] })
      yield* Ensemble.run(ensemble)

      const tool = model.requests[0].tools[0]
      expect(tool.name).toBe("delegate")
      expect(Tool.getDescription(tool)).toBe(
        "Hand a subtask to another agent of the team and get its answer. Give the agent's role and a clear, " +
          "self-contained description of the subtask."
      )
      const schema = Tool.getJsonSchema(tool) as { readonly properties: Record<string, unknown>; readonly required: ReadonlyArray<string> }
      expect(Object.keys(schema.properties).sort()).toEqual(["agentRole", "taskDescription"])
      expect([...schema.required].sort()).toEqual(["agentRole", "taskDescription"])
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Running the target agent
// -----------------------------------------------------------------------------

describe("delegating runs the target agent on the subtask and returns its raw text", () => {
  it.effect("SEQUENTIAL: exact prompts of caller and worker, the worker's text as the tool result, one SUCCESS record", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Draft the introduction"),
      { text: "An introduction." },
      { text: "Plan with introduction." },
      { text: "Looks right." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan the report", expectedOutput: "A plan", agent: researcher })
      const review = yield* Task.make({
        description: "Review the plan",
        expectedOutput: "A verdict",
        agent: reviewer,
        context: [plan]
      })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan, review] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(4)
      expect(requestTranscripts(model)).toEqual([
        [systemOf("Researcher"), userOf("Plan the report", "A plan")],
        [systemOf("Writer"), userOf("Draft the introduction", subtaskExpected)],
        [
          systemOf("Researcher"),
          userOf("Plan the report", "A plan"),
          "assistant: call delegate#call_1_1 {\"agentRole\":\"Writer\",\"taskDescription\":\"Draft the introduction\"}",
          "tool: ok delegate#call_1_1 \"An introduction.\""
        ],
        [
          systemOf("Reviewer"),
          "user: ## Context from earlier tasks\n### Researcher: Plan the report\nPlan with introduction.\n\n" +
          "## Task\nReview the plan\n\n## Expected output\nA verdict"
        ]
      ])
      expect(offered(model)).toEqual([["delegate"], [], ["delegate"], []])
      // the subtask is not a task of the run: only the two tasks are listed
      expect(output.taskOutputs.map(brief)).toEqual([
        { agentRole: "Researcher", raw: "Plan with introduction." },
        { agentRole: "Reviewer", raw: "Looks right." }
      ])
      expect(output.taskOutputs.map((o) => o.toolCallCount)).toEqual([1, 0])
      expect(output.raw).toBe("Looks right.")
      expect(output.delegations.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Draft the introduction", "Writer", "An introduction.")
      ])
      expectPairedIds(output.delegations)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a worker with its own tools uses them (handlers from the run); their calls stay inside the subtask", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Look up Effect and summarise"),
      { toolCalls: [{ name: "lookup", params: { query: "effect" } }] },
      { text: "Effect is a library." },
      { text: "Done." }
    ])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, toolkit })
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(handlers.queries).toEqual(["effect"])
      expect(offered(model)).toEqual([["delegate"], ["lookup"], ["lookup"], ["delegate"]])
      expect(lastLine(model.requests[2])).toBe("tool: ok lookup#call_2_1 \"found effect\"")
      expect(lastLine(model.requests[3])).toBe("tool: ok delegate#call_1_1 \"Effect is a library.\"")
      expect(output.raw).toBe("Done.")
      expect(output.taskOutputs.map((o) => o.toolCallCount)).toEqual([1])
      expect(output.delegations.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Look up Effect and summarise", "Writer", "Effect is a library.")
      ])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a worker without its own model uses the ensemble's, not the caller's", () => {
    const callerModel = ChatModel.scripted([delegateCall("Writer", "Draft it"), { text: "Final." }])
    const model = ChatModel.scripted([{ text: "Draft." }])
    return Effect.gen(function*() {
      const researcher = yield* Agent.make({
        role: "Researcher",
        goal: goals.Researcher,
        allowDelegation: true,
        llm: callerModel.layer
      })
      const writer = yield* makeAgent("Writer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(callerModel.calls).toBe(2)
      expect(model.calls).toBe(1)
      expect(requestTranscripts(model)).toEqual([[systemOf("Writer"), userOf("Draft it", subtaskExpected)]])
      expect(lastLine(callerModel.requests[1])).toBe("tool: ok delegate#call_1_1 \"Draft.\"")
      expect(output.raw).toBe("Final.")
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a worker with its own model uses it", () => {
    const writerModel = ChatModel.scripted([{ text: "Draft." }])
    const model = ChatModel.scripted([delegateCall("Writer", "Draft it"), { text: "Final." }])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, llm: writerModel.layer })
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(2)
      expect(requestTranscripts(writerModel)).toEqual([[systemOf("Writer"), userOf("Draft it", subtaskExpected)]])
      expect(output.raw).toBe("Final.")
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("PARALLEL: two tasks delegate at the same time; each gets its own worker's answer", () => {
    /** Routes each request by the agent it is for, so the interleaving does not matter. */
    const routed: ChatModel.ScriptedTurn = (request) => {
      const lines = transcript(request.prompt.content)
      const role = /^system: You are (\w+)\./.exec(lines[0] ?? "")?.[1]
      const task = /## Task\n([^\n]*)/.exec(lines[1] ?? "")?.[1] ?? ""
      const last = lines[lines.length - 1] ?? ""
      const latency = "1 second"
      if (role === "Writer") return { text: `Draft: ${task}`, latency }
      if (last.startsWith("tool: ")) return { text: `${role} used ${last}`, latency }
      return role === "Researcher"
        ? { ...delegateCall("Writer", "Draft for A"), latency }
        : { ...delegateCall(" writer", "Draft for B"), latency }
    }
    const model = ChatModel.scripted(Array.from({ length: 7 }, () => routed))
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const reviewer = yield* makeAgent("Reviewer", true)
      const writer = yield* makeAgent("Writer", false)
      const a = yield* Task.make({ description: "Task A", expectedOutput: "A", agent: researcher })
      const b = yield* Task.make({ description: "Task B", expectedOutput: "B", agent: reviewer })
      const sum = yield* Task.make({ description: "Sum up", expectedOutput: "Sum", agent: writer, context: [a, b] })
      const ensemble = yield* Ensemble.make({
        agents: [researcher, reviewer, writer],
        tasks: [a, b, sum],
        workflow: "PARALLEL"
      })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))
      // A and B (call, worker, call) overlap: 3 seconds, then "Sum up" 1 second
      yield* TestClock.adjust("3999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      expect(model.calls).toBe(7)
      expect(Duration.toMillis(output.totalDuration)).toBe(4000)
      const byRole = [...output.taskOutputs].sort((x, y) => x.agentRole.localeCompare(y.agentRole)).map(brief)
      expect(byRole).toEqual([
        { agentRole: "Researcher", raw: "Researcher used tool: ok delegate#call_1_1 \"Draft: Draft for A\"" },
        { agentRole: "Reviewer", raw: "Reviewer used tool: ok delegate#call_2_1 \"Draft: Draft for B\"" },
        { agentRole: "Writer", raw: "Draft: Sum up" }
      ])
      const records = [...output.delegations].sort((x, y) => x.delegatingRole.localeCompare(y.delegatingRole))
      expect(records.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Draft for A", "Writer", "Draft: Draft for A", 1000),
        successRecord("peer", "Reviewer", 0, " writer", "Draft for B", "Writer", "Draft: Draft for B", 1000)
      ])
      expectPairedIds(records)
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Role matching
// -----------------------------------------------------------------------------

const roleVariants: ReadonlyArray<string> = ["writer", "WRITER", "  Writer  ", "\twRiTeR\n"]

describe("the target role is matched trimmed and case-insensitively", () => {
  for (const variant of roleVariants) {
    it.effect(`${JSON.stringify(variant)} reaches the Writer`, () => {
      const model = ChatModel.scripted([delegateCall(variant, "Draft it"), { text: "Draft." }, { text: "Final." }])
      return Effect.gen(function*() {
        const researcher = yield* makeAgent("Researcher", true)
        const writer = yield* makeAgent("Writer", false)
        const reviewer = yield* makeAgent("Reviewer", false)
        const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
        const ensemble = yield* Ensemble.make({ agents: [researcher, reviewer, writer], tasks: [plan] })
        const output = yield* Ensemble.run(ensemble)

        expect(requestTranscripts(model)[1]).toEqual([systemOf("Writer"), userOf("Draft it", subtaskExpected)])
        expect(lastLine(model.requests[2])).toBe("tool: ok delegate#call_1_1 \"Draft.\"")
        // the request keeps the role as asked; the response names the agent that did the work
        expect(output.delegations.map(plain)).toEqual([
          successRecord("peer", "Researcher", 0, variant, "Draft it", "Writer", "Draft.")
        ])
      }).pipe(Effect.provide(model.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// Guards
// -----------------------------------------------------------------------------

interface GuardRow {
  readonly name: string
  readonly maxDelegationDepth?: number
  /** Who delegates to whom before the attempt: the root task's agent first; the last one makes the attempt. */
  readonly path: ReadonlyArray<"Researcher" | "Writer" | "Reviewer">
  readonly attempt: { readonly agentRole: string; readonly taskDescription: string }
  readonly message: string
}

const blankRole = "Error: agentRole must not be blank. Give the role of the agent to delegate to."
const blankTask = "Error: taskDescription must not be blank. Describe the subtask to delegate."
const depthLimit = (max: number, current: number) =>
  `Delegation depth limit reached (max: ${max}, current: ${current}). Complete this task yourself without further delegation.`
const allRoles = "[Researcher, Writer, Reviewer]"

const guardRows: ReadonlyArray<GuardRow> = [
  {
    name: "empty agentRole",
    path: ["Researcher"],
    attempt: { agentRole: "", taskDescription: "Draft it" },
    message: blankRole
  },
  {
    name: "whitespace agentRole",
    path: ["Researcher"],
    attempt: { agentRole: " \t ", taskDescription: "Draft it" },
    message: blankRole
  },
  {
    name: "empty taskDescription",
    path: ["Researcher"],
    attempt: { agentRole: "Writer", taskDescription: "" },
    message: blankTask
  },
  {
    name: "whitespace taskDescription",
    path: ["Researcher"],
    attempt: { agentRole: "Writer", taskDescription: "  \n " },
    message: blankTask
  },
  {
    name: "both blank: agentRole is checked first",
    path: ["Researcher"],
    attempt: { agentRole: " ", taskDescription: " " },
    message: blankRole
  },
  {
    name: "default depth limit 3: Researcher → Writer → Researcher → Writer, which may not delegate",
    path: ["Researcher", "Writer", "Researcher", "Writer"],
    attempt: { agentRole: "Reviewer", taskDescription: "Check it" },
    message: depthLimit(3, 3)
  },
  {
    name: "maxDelegationDepth 1: Researcher → Writer is allowed, Writer may not delegate further",
    maxDelegationDepth: 1,
    path: ["Researcher", "Writer"],
    attempt: { agentRole: "Reviewer", taskDescription: "Check it" },
    message: depthLimit(1, 1)
  },
  {
    name: "maxDelegationDepth 2: the agent at depth 2 may not delegate",
    maxDelegationDepth: 2,
    path: ["Researcher", "Writer", "Researcher"],
    attempt: { agentRole: "Reviewer", taskDescription: "Check it" },
    message: depthLimit(2, 2)
  },
  {
    name: "blank taskDescription is checked before the depth limit",
    maxDelegationDepth: 1,
    path: ["Researcher", "Writer"],
    attempt: { agentRole: "Reviewer", taskDescription: "" },
    message: blankTask
  },
  {
    name: "the depth limit is checked before self-delegation",
    maxDelegationDepth: 1,
    path: ["Researcher", "Writer"],
    attempt: { agentRole: "Writer", taskDescription: "Check it" },
    message: depthLimit(1, 1)
  },
  {
    name: "the depth limit is checked before the agent lookup",
    maxDelegationDepth: 1,
    path: ["Researcher", "Writer"],
    attempt: { agentRole: "Editor", taskDescription: "Check it" },
    message: depthLimit(1, 1)
  },
  {
    name: "self-delegation",
    path: ["Researcher"],
    attempt: { agentRole: "Researcher", taskDescription: "Do it yourself" },
    message: "Cannot delegate to yourself (role: 'Researcher'). Choose a different agent."
  },
  {
    name: "self-delegation with a case-variant, padded role",
    path: ["Researcher"],
    attempt: { agentRole: "  RESEARCHER ", taskDescription: "Do it yourself" },
    message: "Cannot delegate to yourself (role: 'Researcher'). Choose a different agent."
  },
  {
    name: "self-delegation by a delegated worker",
    path: ["Researcher", "Writer"],
    attempt: { agentRole: "writer", taskDescription: "Do it yourself" },
    message: "Cannot delegate to yourself (role: 'Writer'). Choose a different agent."
  },
  {
    name: "unknown agent: the message lists every role of the ensemble",
    path: ["Researcher"],
    attempt: { agentRole: "Editor", taskDescription: "Edit it" },
    message: `Agent not found with role 'Editor'. Available roles: ${allRoles}`
  },
  {
    name: "unknown agent, as asked by a delegated worker",
    path: ["Researcher", "Reviewer"],
    attempt: { agentRole: "Researchers", taskDescription: "Edit it" },
    message: `Agent not found with role 'Researchers'. Available roles: ${allRoles}`
  }
]

describe("guards: a blocked attempt is a tool result for the caller, a FAILURE record, and the run goes on", () => {
  for (const row of guardRows) {
    it.effect(row.name, () => {
      const n = row.path.length
      const script: Array<ChatModel.ScriptedTurn> = []
      for (let k = 0; k < n - 1; k++) script.push(delegateCall(row.path[k + 1], `Subtask ${k + 1}`))
      script.push(delegateCall(row.attempt.agentRole, row.attempt.taskDescription))
      for (let k = n - 1; k >= 0; k--) script.push({ text: `Answer at depth ${k}` })
      const model = ChatModel.scripted(script)
      return Effect.gen(function*() {
        const researcher = yield* makeAgent("Researcher", true)
        const writer = yield* makeAgent("Writer", true)
        const reviewer = yield* makeAgent("Reviewer", true)
        const plan = yield* Task.make({ description: "Plan the report", expectedOutput: "A plan", agent: researcher })
        const ensemble = yield* Ensemble.make({
          agents: [researcher, writer, reviewer],
          tasks: [plan],
          ...(row.maxDelegationDepth === undefined ? {} : { maxDelegationDepth: row.maxDelegationDepth })
        })
        const output = yield* Ensemble.run(ensemble)

        // no worker ran for the blocked attempt: every turn is the chain's own
        expect(model.calls).toBe(2 * n)
        const requests = model.requests
        // going down: each agent of the path gets its subtask, with the delegate tool
        for (let k = 0; k < n; k++) {
          expect(transcript(requests[k].prompt.content)).toEqual(
            k === 0
              ? [systemOf("Researcher"), userOf("Plan the report", "A plan")]
              : [systemOf(row.path[k]), userOf(`Subtask ${k}`, subtaskExpected)]
          )
          expect(offered(model)[k]).toEqual(["delegate"])
        }
        // the attempt's result is the guard's message, an ordinary (not failed) tool result
        expect(lastLine(requests[n])).toBe(`tool: ok delegate#call_${n}_1 ${JSON.stringify(row.message)}`)
        expect(transcript(requests[n].prompt.content)[0]).toBe(systemOf(row.path[n - 1]))
        // going up: each caller gets its worker's answer
        for (let k = n - 2; k >= 0; k--) {
          const request = requests[2 * n - 1 - k]
          expect(transcript(request.prompt.content)[0]).toBe(systemOf(row.path[k]))
          expect(lastLine(request)).toBe(`tool: ok delegate#call_${k + 1}_1 "Answer at depth ${k + 1}"`)
        }
        expect(output.raw).toBe("Answer at depth 0")
        expect(output.taskOutputs.map(brief)).toEqual([{ agentRole: "Researcher", raw: "Answer at depth 0" }])

        // records in completion order: the blocked attempt first, then the delegations around it
        const expected: Array<unknown> = [
          blockedRecord(row.path[n - 1], n - 1, row.attempt.agentRole, row.attempt.taskDescription, row.message)
        ]
        for (let k = n - 2; k >= 0; k--) {
          expected.push(
            successRecord("peer", row.path[k], k, row.path[k + 1], `Subtask ${k + 1}`, row.path[k + 1], `Answer at depth ${k + 1}`)
          )
        }
        expect(output.delegations.map(plain)).toEqual(expected)
        expectPairedIds(output.delegations)
      }).pipe(Effect.provide(model.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// A failing worker
// -----------------------------------------------------------------------------

describe("a failing worker", () => {
  it.effect("the caller gets a failed tool result with the real message, the record is FAILURE, the run goes on", () => {
    const model = ChatModel.scripted([
      delegateCall("writer", "Draft it"),
      { fail: "overloaded" },
      delegateCall("Reviewer", "Check the facts"),
      { text: "Facts check out." },
      { text: "Plan without a draft." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(5)
      expect(transcript(model.requests[2].prompt.content)).toEqual([
        systemOf("Researcher"),
        userOf("Plan", "A plan"),
        "assistant: call delegate#call_1_1 {\"agentRole\":\"writer\",\"taskDescription\":\"Draft it\"}",
        "tool: failed delegate#call_1_1 \"Agent 'Writer' failed: The model call failed: overloaded\""
      ])
      expect(lastLine(model.requests[4])).toBe("tool: ok delegate#call_3_1 \"Facts check out.\"")
      expect(output.raw).toBe("Plan without a draft.")
      expect(output.delegations.map(plain)).toEqual([
        failedRecord("Researcher", 0, "writer", "Draft it", "Writer", "The model call failed: overloaded"),
        successRecord("peer", "Researcher", 0, "Reviewer", "Check the facts", "Reviewer", "Facts check out.")
      ])
      expectPairedIds(output.delegations)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a failure two levels down reaches the middle agent, which still answers its caller", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Draft it"),
      delegateCall("Reviewer", "Check it"),
      { fail: "rate limited" },
      { text: "Unchecked draft." },
      { text: "Plan." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", true)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(transcript(model.requests[3].prompt.content)[0]).toBe(systemOf("Writer"))
      expect(lastLine(model.requests[3])).toBe(
        "tool: failed delegate#call_2_1 \"Agent 'Reviewer' failed: The model call failed: rate limited\""
      )
      expect(lastLine(model.requests[4])).toBe("tool: ok delegate#call_1_1 \"Unchecked draft.\"")
      expect(output.raw).toBe("Plan.")
      expect(output.delegations.map((r) => [r.delegatingRole, r.depth, r.response.status, r.response.workerRole, r.response.errors]))
        .toEqual([
          ["Writer", 1, "FAILURE", "Reviewer", ["The model call failed: rate limited"]],
          ["Researcher", 0, "SUCCESS", "Writer", []]
        ])
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Request/response pairs
// -----------------------------------------------------------------------------

describe("every attempt yields a request/response pair", () => {
  const script: ReadonlyArray<ChatModel.ScriptedTurn> = [
    delegateCall("Writer", "Draft it"),
    { text: "Draft." },
    delegateCall("Nobody", "Draft it"),
    { text: "Final." }
  ]
  const program = Effect.gen(function*() {
    const researcher = yield* makeAgent("Researcher", true)
    const writer = yield* makeAgent("Writer", false)
    const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
    const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
    return yield* Ensemble.run(ensemble)
  })
  const ids = (output: TaskOutput.EnsembleOutput) => output.delegations.map((record) => record.request.taskId)

  /** One successful delegation, then 40 blocked ones in a single turn: 41 ids. */
  const manyScript: ReadonlyArray<ChatModel.ScriptedTurn> = [
    delegateCall("Writer", "Draft it"),
    { text: "Draft." },
    {
      toolCalls: Array.from({ length: 40 }, (_, i) => ({
        name: "delegate",
        params: { agentRole: "Nobody", taskDescription: `Attempt ${i + 1}` }
      }))
    },
    { text: "Final." }
  ]

  it.effect("ids are UUID v4 (8-4-4-4-12 lowercase hex, version 4, variant 10xx), shared by request and response", () => {
    const model = ChatModel.scripted(manyScript)
    return Effect.gen(function*() {
      const output = yield* program.pipe(Random.withSeed("uuid format"), Effect.provide(model.layer))
      expect(output.delegations).toHaveLength(41)
      expect(output.delegations.map((r) => r.response.status)).toEqual(["SUCCESS", ...Array(40).fill("FAILURE")])
      expectPairedIds(output.delegations)
      expect(ids(output).filter((id) => !uuidV4.test(id))).toEqual([])
    })
  })

  it.effect("the same seed gives the same ids; another seed other ids", () => {
    const model = ChatModel.scripted(script)
    return Effect.gen(function*() {
      const first = yield* program.pipe(Random.withSeed("delegation"), Effect.provide(model.layer))
      const second = yield* program.pipe(Random.withSeed("delegation"), Effect.provide(model.layer))
      const other = yield* program.pipe(Random.withSeed("another seed"), Effect.provide(model.layer))

      expect(first.delegations).toHaveLength(2)
      expectPairedIds(first.delegations)
      expectPairedIds(other.delegations)
      expect(ids(second)).toEqual(ids(first))
      expect(ids(other)).not.toEqual(ids(first))
      expect(ids(other).some((id) => ids(first).includes(id))).toBe(false)
    })
  })

  it.effect("requests carry the defaults; responses only the fields of their outcome; records are Schema data", () => {
    const model = ChatModel.scripted(script)
    return Effect.gen(function*() {
      const output = yield* program
      const [ok, blocked] = output.delegations
      for (const record of [ok, blocked]) {
        expect(record.request.scope).toEqual({})
        expect(record.request.priority).toBe("NORMAL")
        expect(record.request.maxOutputRetries).toBe(0)
        expect(record.request.metadata).toEqual({})
        expect("expectedOutputSchema" in record.request).toBe(false)
        expect("parsedOutput" in record.response).toBe(false)
        expect(record.response.artifacts).toEqual({})
        expect(record.response.metadata).toEqual({})
      }
      expect(ok.response).toMatchObject({ status: "SUCCESS", workerRole: "Writer", rawOutput: "Draft.", errors: [] })
      expect(blocked.response).toMatchObject({
        status: "FAILURE",
        workerRole: "Nobody",
        rawOutput: null,
        errors: ["Agent not found with role 'Nobody'. Available roles: [Researcher, Writer]"]
      })
      const encoded = Schema.encodeUnknownSync(Delegation.DelegationRecord)(blocked)
      expect(encoded).toEqual({
        kind: "peer",
        delegatingRole: "Researcher",
        depth: 0,
        request: { ...expectedRequest("Nobody", "Draft it"), taskId: blocked.request.taskId },
        response: {
          taskId: blocked.request.taskId,
          status: "FAILURE",
          workerRole: "Nobody",
          rawOutput: null,
          artifacts: {},
          errors: ["Agent not found with role 'Nobody'. Available roles: [Researcher, Writer]"],
          metadata: {},
          duration: 0
        }
      })
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("duration is the worker's simulated time (TestClock); a blocked attempt takes none", () => {
    const model = ChatModel.scripted([
      { ...delegateCall("Writer", "Draft it"), latency: "1 second" },
      { text: "Draft.", latency: "2 seconds" },
      { ...delegateCall("Reviewer", "Check it"), latency: "1 second" },
      { fail: "overloaded", latency: "1500 millis" },
      { ...delegateCall("Editor", "Edit it"), latency: "1 second" },
      { text: "Final.", latency: "1 second" }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))
      yield* TestClock.adjust("7499 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      expect(output.delegations.map((r) => [r.request.agentRole, r.response.status, Duration.toMillis(r.response.duration)]))
        .toEqual([
          ["Writer", "SUCCESS", 2000],
          ["Reviewer", "FAILURE", 1500],
          ["Editor", "FAILURE", 0]
        ])
      expect(Duration.toMillis(output.taskOutputs[0].duration)).toBe(7500)
      expect(Duration.toMillis(output.totalDuration)).toBe(7500)
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// HIERARCHICAL: the run's constraints bound every delegation inside it
// -----------------------------------------------------------------------------

describe("HIERARCHICAL: the constraints bound a worker's peer delegations too", () => {
  const managerCall = (agentRole: string, taskDescription: string): ChatModel.ScriptedReply => ({
    toolCalls: [{ name: "delegateTask", params: { agentRole, taskDescription } }]
  })

  /** Researcher (may delegate) and Writer, one task each, HIERARCHICAL under `constraints`. */
  const team = (constraints: HierarchicalConstraints.HierarchicalConstraints) =>
    Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const research = yield* Task.make({ description: "Research Effect", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write it up", expectedOutput: "Prose", agent: writer })
      return yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write], workflow: "HIERARCHICAL", constraints })
    })

  it.effect("a required worker reached only by peer delegation is a violation (required workers are the manager's)", () => {
    const model = ChatModel.scripted([
      managerCall("Researcher", "Research Effect"),
      delegateCall("Writer", "Draft the summary"),
      { text: "Summary draft." },
      { text: "Research with summary." },
      { text: "Final report." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* team({ requiredWorkers: ["Writer"] })
      const error = asConstraintViolation(yield* Effect.flip(Ensemble.run(ensemble)))

      expect(model.calls).toBe(5)
      expect(offered(model)).toEqual([["delegateTask"], ["delegate"], [], ["delegate"], ["delegateTask"]])
      expect(transcript(model.requests[2].prompt.content)).toEqual([
        systemOf("Writer"),
        userOf("Draft the summary", subtaskExpected)
      ])
      expect(error.violations).toEqual(["Required worker 'Writer' was not delegated to during this run."])
      expect(error.message).toBe(
        "Hierarchical constraint violated: Required worker 'Writer' was not delegated to during this run."
      )
      expect(error.completedOutputs.map(brief)).toEqual([
        { agentRole: "Researcher", raw: "Research with summary." },
        { agentRole: "Manager", raw: "Final report." }
      ])
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("allowedWorkers: the manager cannot reach a disallowed worker through an allowed one", () => {
    const model = ChatModel.scripted([
      managerCall("Researcher", "Research Effect"),
      delegateCall("Writer", "Draft the summary"),
      { text: "Research without summary." },
      { text: "Final report." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* team({ allowedWorkers: ["Researcher"] })
      const output = yield* Ensemble.run(ensemble)

      // the Writer never runs: the Researcher's attempt is refused as its tool result
      expect(model.requests.map((request) => transcript(request.prompt.content)[0])).toEqual([
        expect.stringMatching(/^system: You are Manager\./),
        systemOf("Researcher"),
        systemOf("Researcher"),
        expect.stringMatching(/^system: You are Manager\./)
      ])
      const refusal = "Delegation rejected: Worker 'Writer' is not in the allowed workers list. Allowed: [Researcher]"
      expect(lastLine(model.requests[2])).toBe(`tool: ok delegate#call_2_1 ${JSON.stringify(refusal)}`)
      expect(output.delegations.map(plain)).toEqual([
        blockedRecord("Researcher", 1, "Writer", "Draft the summary", refusal),
        successRecord("manager", "Manager", 0, "Researcher", "Research Effect", "Researcher", "Research without summary.")
      ])
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a peer delegation counts toward the global cap and the worker's cap; records tell peer from manager", () => {
    const model = ChatModel.scripted([
      managerCall("Researcher", "Research Effect"),
      delegateCall("Writer", "Draft the summary"),
      { text: "Summary draft." },
      { text: "Research with summary." },
      managerCall("Writer", "Write the report"),
      { text: "Final report." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* team({ maxCallsPerWorker: { Writer: 1 }, globalMaxDelegations: 2 })
      const output = yield* Ensemble.run(ensemble)

      const refusal = "Delegation rejected: Global delegation cap of 2 reached. No further delegations are permitted in this run."
      expect(model.calls).toBe(6)
      expect(lastLine(model.requests[5])).toBe(`tool: ok delegateTask#call_5_1 ${JSON.stringify(refusal)}`)
      expect(output.raw).toBe("Final report.")
      expect(output.delegations.map(plain)).toEqual([
        successRecord("peer", "Researcher", 1, "Writer", "Draft the summary", "Writer", "Summary draft."),
        successRecord("manager", "Manager", 0, "Researcher", "Research Effect", "Researcher", "Research with summary."),
        { ...blockedRecord("Manager", 0, "Writer", "Write the report", refusal), kind: "manager" }
      ])
      expectPairedIds(output.delegations)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("maxCallsPerWorker: a worker's cap used by a peer delegation blocks the manager", () => {
    const model = ChatModel.scripted([
      managerCall("Researcher", "Research Effect"),
      delegateCall("Writer", "Draft the summary"),
      { text: "Summary draft." },
      { text: "Research with summary." },
      managerCall("Writer", "Write the report"),
      { text: "Final report." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* team({ maxCallsPerWorker: { Writer: 1 } })
      const output = yield* Ensemble.run(ensemble)

      expect(output.delegations.map((record) => record.response.errors)).toEqual([
        [],
        [],
        ["Delegation rejected: Worker 'Writer' has reached its per-worker delegation cap of 1."]
      ])
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("requiredStages: a worker cannot start a later stage before the earlier stage completed", () => {
    const model = ChatModel.scripted([
      managerCall("Researcher", "Research Effect"),
      delegateCall("Writer", "Draft the summary"),
      { text: "Research without summary." },
      { text: "Final report." }
    ])
    return Effect.gen(function*() {
      const ensemble = yield* team({ requiredStages: [["Researcher"], ["Writer"]] })
      const output = yield* Ensemble.run(ensemble)

      expect(output.delegations.map((record) => record.response.errors)).toEqual([
        [
          "Delegation rejected: Worker 'Writer' cannot be delegated to yet: stage 1 worker 'Researcher' has not yet completed. All workers in earlier stages must complete before this stage can begin."
        ],
        []
      ])
      expect(model.calls).toBe(4)
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// maxDelegationDepth validation
// -----------------------------------------------------------------------------

const invalidDepths: ReadonlyArray<number> = [0, -1, 1.5]

describe("maxDelegationDepth must be a positive integer", () => {
  for (const depth of invalidDepths) {
    it.effect(`${depth} → ValidationError`, () =>
      Effect.gen(function*() {
        const researcher = yield* makeAgent("Researcher", true)
        const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
        const error = yield* Effect.flip(
          Ensemble.make({ agents: [researcher], tasks: [plan], maxDelegationDepth: depth })
        )
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toBe(`Ensemble maxDelegationDepth must be > 0, got: ${depth}`)
      }))
  }

  it.effect("absent → 3; 1 is accepted", () =>
    Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const byDefault = yield* Ensemble.make({ agents: [researcher], tasks: [plan] })
      const one = yield* Ensemble.make({ agents: [researcher], tasks: [plan], maxDelegationDepth: 1 })
      expect(Ensemble.defaults.maxDelegationDepth).toBe(3)
      expect(byDefault.maxDelegationDepth).toBe(3)
      expect(one.maxDelegationDepth).toBe(1)
    }))
})

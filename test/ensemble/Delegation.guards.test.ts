/**
 * Guards on peer delegation: a blocked attempt is a tool result for the caller and a FAILURE
 * record, and the run goes on; in a HIERARCHICAL run the run's constraints bound a worker's peer
 * delegations too; `maxDelegationDepth` must be a positive integer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Ensemble, Task } from "../../src/ensemble/index.ts"
import type { HierarchicalConstraints } from "../../src/ensemble/index.ts"
import { transcript } from "../support/transcript.ts"
import {
  systemOf, userOf, subtaskExpected, makeAgent, delegateCall, offered, lastLine, expectPairedIds, plain,
  blockedRecord, successRecord, brief, asConstraintViolation
} from "../support/delegation.ts"

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

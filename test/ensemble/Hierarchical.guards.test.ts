/**
 * HIERARCHICAL guards, as a table: every blocked delegation is a tool result for the manager,
 * never a thrown error, and the run continues; several delegateTask calls in one manager turn run
 * concurrently; required workers are checked after the manager finishes; the manager failing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ChatModel } from "../../src/index.ts"
import { Ensemble, EnsembleError } from "../../src/ensemble/index.ts"
import type { HierarchicalConstraints } from "../../src/ensemble/index.ts"
import {
  managerTaskDescription, managerSaw, summary, workerModel, to, managerModel, ok, rejected,
  asTaskExecutionError, asConstraintViolation, makeTeam, teamTasks, stageWait, type Call
} from "../support/hierarchical.ts"

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

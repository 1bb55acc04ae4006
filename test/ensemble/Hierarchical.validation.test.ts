/**
 * HIERARCHICAL configs checked at `Ensemble.make`, before any model call (constraints
 * cross-validated against the agents, the agents of such an ensemble), and role matching: trimmed,
 * case-insensitive, the same agent for every guard.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import type { HierarchicalConstraints, TaskOutput } from "../../src/ensemble/index.ts"
import {
  managerSaw, workerModel, to, managerModel, ok, rejected, asConstraintViolation, asValidation, makeTeam,
  stageWait, type Call
} from "../support/hierarchical.ts"

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

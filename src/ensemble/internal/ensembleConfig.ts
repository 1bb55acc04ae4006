/**
 * The Ensemble config as one Schema (each field's shape, in the order
 * problems are reported), then the rules that relate fields to each other:
 * the specification's (agent membership, self-reference, cycles, context
 * order), distinct roles where agents are found by role, the manager's
 * reserved role, the hierarchical constraints, and tool isolation.
 * `Ensemble.make` and `Ensemble.run` (for the ensemble it is given) both
 * check with it.
 *
 * @internal
 */
import { redactSecrets } from "../../internal/redact.ts"
import { Effect, Layer, Result, Schema } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import type * as Agent from "../Agent.ts"
import { ValidationError } from "../EnsembleError.ts"
import * as HierarchicalConstraints from "../HierarchicalConstraints.ts"
import * as Role from "../Role.ts"
import type { Task } from "../Task.ts"
import type { Workflow } from "../Workflow.ts"
import { agentProblem } from "./agentConfig.ts"
import { delegateToolName } from "./delegation.ts"
import { delegateTaskToolName, managerRole } from "./hierarchical.ts"
import type { ErrorStrategy } from "./parallel.ts"
import {
  type Check,
  decodeNow,
  flag,
  inputs,
  isCount,
  list,
  optional,
  optionalCount,
  required,
  show,
  unknownOption
} from "./rules.ts"
import { taskProblem } from "./taskConfig.ts"
import { type Reserved, toolClash } from "./toolIsolation.ts"

const workflow: Check = (u) =>
  u === undefined || u === "SEQUENTIAL" || u === "PARALLEL" || u === "HIERARCHICAL"
    ? undefined
    : `Ensemble workflow must be SEQUENTIAL, PARALLEL or HIERARCHICAL, got: ${typeof u === "string" ? u : show(u)}`

const concurrency: Check = (u) =>
  u === undefined || u === "unbounded" || isCount(u, 1)
    ? undefined
    : `Ensemble concurrency must be a positive integer or "unbounded", got: ${typeof u === "string" ? u : show(u)}`

const onError: Check = (u) =>
  u === undefined || u === "fail-fast" || u === "continue"
    ? undefined
    : `Ensemble onError must be "fail-fast" or "continue", got: ${typeof u === "string" ? u : show(u)}`

const managerLlm: Check = (u) =>
  u === undefined || Layer.isLayer(u)
    ? undefined
    : `Ensemble managerLlm must be a Layer providing ChatModel, got: ${show(u)}`

const nonEmpty = (field: "task" | "agent", entry: Check): Check => {
  const entries = list(`Ensemble ${field}s`, `${field}s made by ${field === "task" ? "Task" : "Agent"}.make`, entry)
  return (u) => entries(u) ?? ((u as ReadonlyArray<unknown>).length === 0 ? `Ensemble must have at least one ${field}` : undefined)
}

const maybe = (check: Check): Check => (u) => (u === undefined ? undefined : check(u))

/**
 * The shape of each field; the order of the fields is the order problems are
 * reported in.
 *
 * @internal
 */
export const EnsembleConfig = Schema.Struct({
  workflow: optional<Workflow>(workflow),
  maxDelegationDepth: optional<number>(optionalCount("Ensemble maxDelegationDepth", 1)),
  managerMaxIterations: optional<number>(optionalCount("Ensemble managerMaxIterations", 1)),
  concurrency: optional<number | "unbounded">(concurrency),
  onError: optional<ErrorStrategy>(onError),
  maxModelCalls: optional<number>(optionalCount("Ensemble maxModelCalls", 1)),
  maxDelegations: optional<number>(optionalCount("Ensemble maxDelegations", 1)),
  verbose: optional<boolean>(maybe(flag("Ensemble verbose"))),
  inputs: optional<Readonly<Record<string, string>>>(inputs("Ensemble inputs")),
  managerLlm: optional<Layer.Layer<ChatModel>>(managerLlm),
  tasks: required<ReadonlyArray<Task>>(nonEmpty("task", taskProblem)),
  agents: required<ReadonlyArray<Agent.Any>>(nonEmpty("agent", agentProblem)),
  constraints: optional<HierarchicalConstraints.HierarchicalConstraints>(HierarchicalConstraints.shapeProblem)
}).annotate({ message: "Ensemble.make expects a config object with agents and tasks" })

/** @internal a config whose every field has the right shape */
export type ValidConfig = typeof EnsembleConfig.Type

/**
 * The first task found on a cycle of context references, if any. Only the
 * listed tasks are followed (a context task that is not listed is reported
 * as such). Depth first with a stack of its own, not the JavaScript stack:
 * a chain of thousands of tasks is checked like a short one.
 */
const findCycle = (tasks: ReadonlyArray<Task>): Task | undefined => {
  const listed = new Set(tasks)
  const state = new Map<Task, "visiting" | "done">()
  for (const root of tasks) {
    if (state.has(root)) continue
    state.set(root, "visiting")
    // Each open task with the index of the next dependency of it to follow.
    const open: Array<[Task, number]> = [[root, 0]]
    while (open.length > 0) {
      const top = open[open.length - 1]
      const [task, next] = top
      if (next === task.context.length) {
        state.set(task, "done")
        open.pop()
        continue
      }
      top[1] = next + 1
      const dependency = task.context[next]
      if (!listed.has(dependency)) continue
      const seen = state.get(dependency)
      if (seen === "visiting") return dependency
      if (seen === undefined) {
        state.set(dependency, "visiting")
        open.push([dependency, 0])
      }
    }
  }
  return undefined
}

/** Delegation finds agents by role, so there roles must tell agents apart. */
const rolesProblem = (config: ValidConfig, workflow: Workflow): string | undefined => {
  const byRole = workflow === "HIERARCHICAL" || config.agents.some((agent) => agent.allowDelegation)
  const roles = new Map<string, string>()
  for (const agent of byRole ? new Set(config.agents) : []) {
    const seen = roles.get(Role.key(agent.role))
    if (seen !== undefined) {
      return `Ensemble agents must have distinct roles when agents are found by role (HIERARCHICAL, or delegation allowed): '${seen}' and '${agent.role}'`
    }
    roles.set(Role.key(agent.role), agent.role)
  }
  if (workflow !== "HIERARCHICAL") return undefined
  const reserved = config.agents.find((agent) => Role.same(agent.role, managerRole))
  if (reserved !== undefined) return `Agent role '${reserved.role}' is reserved for the manager of a HIERARCHICAL ensemble`
  return HierarchicalConstraints.check(config.constraints ?? {}, config.agents.map((agent) => agent.role))
}

/** The names of the ensemble's own tools, which agents' tools must not take. */
const reservedTools = (config: ValidConfig, workflow: Workflow): ReadonlyArray<Reserved> => [
  ...(config.agents.some((agent) => agent.allowDelegation)
    ? [{ name: delegateToolName, purpose: "peer delegation (an agent has allowDelegation)" }]
    : []),
  ...(workflow === "HIERARCHICAL" ? [{ name: delegateTaskToolName, purpose: "the manager's delegations" }] : [])
]

const tasksProblem = (config: ValidConfig, workflow: Workflow): string | undefined => {
  const agents = new Set<Agent.Any>(config.agents)
  for (const task of config.tasks) {
    if (!agents.has(task.agent)) {
      return `Task '${task.description}' references agent '${task.agent.role}' which is not in the ensemble's agent list`
    }
  }
  const listed = new Set<Task>()
  for (const task of config.tasks) {
    if (listed.has(task)) {
      return `Task '${task.description}' appears twice in the task list: each entry is one task with its own output, so make a second Task (Task.make) to do the same work again`
    }
    listed.add(task)
  }
  for (const task of config.tasks) {
    if (task.context.includes(task)) return "Task cannot reference itself in context"
  }
  const cycle = findCycle(config.tasks)
  if (cycle !== undefined) return `Circular context dependency detected involving task: '${cycle.description}'`
  const position = new Map(config.tasks.map((task, index) => [task, index]))
  for (const [index, task] of config.tasks.entries()) {
    for (const dependency of task.context) {
      const at = position.get(dependency)
      if (at === undefined) {
        return `Task '${task.description}' references context task '${dependency.description}' which is not in the ensemble's task list`
      }
      if (at > index && workflow === "SEQUENTIAL") {
        return `Task '${task.description}' references context task '${dependency.description}' which appears later in the task list`
      }
    }
  }
  return undefined
}

/**
 * Checks a config (or an ensemble: it has the same fields): the shape of
 * every field, then the rules between them. Never throws.
 *
 * @internal
 */
export const validate = (config: unknown): Effect.Effect<ValidConfig, ValidationError> =>
  Effect.suspend(() => Effect.fromResult(validateNow(config)))

/** @internal {@link validate} for `Ensemble.make`: a key the config has no field for is refused first */
export const validateConfig = (config: unknown): Effect.Effect<ValidConfig, ValidationError> =>
  Effect.suspend(() => {
    const unknown = unknownOption("Ensemble.make", EnsembleConfig.fields, config)
    return unknown === undefined ? Effect.fromResult(validateNow(config)) : Effect.fail(unknown)
  })

/** @internal {@link validate}, at once: for a caller that is already running (such as `Ensemble.run`) */
export const validateNow = (config: unknown): Result.Result<ValidConfig, ValidationError> => {
  const decoded = decodeNow(EnsembleConfig, config, "the ensemble's config")
  if (Result.isFailure(decoded)) return decoded
  const valid = decoded.success
  const workflow = valid.workflow ?? "SEQUENTIAL"
  const broken = rolesProblem(valid, workflow) ??
    toolClash(valid.agents, reservedTools(valid, workflow)) ??
    tasksProblem(valid, workflow)
  return broken === undefined ? decoded : Result.fail(new ValidationError({ message: redactSecrets(broken) }))
}

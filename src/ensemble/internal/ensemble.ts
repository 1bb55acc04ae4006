/**
 * The ensemble value: the fields of a checked ensemble, the defaults of the
 * ones a config may leave out, and `build`, which turns a checked config into
 * a frozen ensemble. The public `Ensemble` module declares its `Ensemble`
 * type over these fields (adding the phantom requirements) and re-exports
 * `defaults`; the run machinery (`run.ts`, `validate.ts`) reads these fields.
 *
 * @internal
 */
import type { Layer } from "effect"
import type { ChatModel } from "../../ChatModel.ts"
import type * as Agent from "../Agent.ts"
import type * as HierarchicalConstraints from "../HierarchicalConstraints.ts"
import type { Task } from "../Task.ts"
import type { Workflow } from "../Workflow.ts"
import { remember } from "./checkedOnce.ts"
import type { ValidConfig } from "./ensembleConfig.ts"
import type { ErrorStrategy } from "./parallel.ts"

/** @internal the fields of a checked ensemble, defaults filled in */
export interface Fields {
  readonly _tag: "Ensemble"
  readonly agents: ReadonlyArray<Agent.Any>
  readonly tasks: ReadonlyArray<Task>
  readonly workflow: Workflow
  /** Inputs set at build time; `run(inputs)` overrides them key by key. */
  readonly inputs: Readonly<Record<string, string>>
  /** Log each task's start and end at INFO level. */
  readonly verbose: boolean
  /** PARALLEL: tasks running at once. */
  readonly concurrency: number | "unbounded"
  /** PARALLEL: what a failure does to the rest of the run. */
  readonly onError: ErrorStrategy
  /** HIERARCHICAL: the constraints on the manager's delegations. */
  readonly constraints: HierarchicalConstraints.HierarchicalConstraints
  /** HIERARCHICAL: the manager's model (default: the ensemble's `ChatModel`). */
  readonly managerLlm: Layer.Layer<ChatModel> | undefined
  /** HIERARCHICAL: the manager's model calls before its final answer. */
  readonly managerMaxIterations: number
  /** How deep peer delegation may go (> 0). */
  readonly maxDelegationDepth: number
  /** Model calls one run may make, all agents together (> 0). */
  readonly maxModelCalls: number
  /** Delegations one run may make, manager and peer together (> 0). */
  readonly maxDelegations: number
}

/** @internal the defaults of the specification (and of the options this library adds); public as `Ensemble.defaults` */
export const defaults = {
  workflow: "SEQUENTIAL",
  concurrency: "unbounded",
  onError: "fail-fast",
  managerMaxIterations: 20,
  maxDelegationDepth: 3,
  maxModelCalls: 500,
  maxDelegations: 50
} as const

/** The ensembles `build` made: frozen, their defaults filled in. */
const built = new WeakSet<Fields>()

/** @internal a frozen ensemble of a checked config, defaults filled in (remembered as checked: `checkedOnce.ts`) */
export const build = (valid: ValidConfig): Fields => {
  const ensemble: Fields = Object.freeze({
    _tag: "Ensemble",
    agents: Object.freeze([...valid.agents]),
    tasks: Object.freeze([...valid.tasks]),
    workflow: valid.workflow ?? defaults.workflow,
    inputs: Object.freeze({ ...valid.inputs }),
    verbose: valid.verbose ?? false,
    concurrency: valid.concurrency ?? defaults.concurrency,
    onError: valid.onError ?? defaults.onError,
    constraints: valid.constraints ?? {},
    managerLlm: valid.managerLlm,
    managerMaxIterations: valid.managerMaxIterations ?? defaults.managerMaxIterations,
    maxDelegationDepth: valid.maxDelegationDepth ?? defaults.maxDelegationDepth,
    maxModelCalls: valid.maxModelCalls ?? defaults.maxModelCalls,
    maxDelegations: valid.maxDelegations ?? defaults.maxDelegations
  })
  built.add(ensemble)
  remember(ensemble)
  return ensemble
}

/**
 * @internal `valid` (the checked fields of `ensemble`) as an ensemble:
 * `ensemble` itself when `build` made it (it is frozen, so what was checked
 * is what it holds), else a new one
 */
export const rebuild = (ensemble: unknown, valid: ValidConfig): Fields =>
  built.has(ensemble as Fields) ? ensemble as Fields : build(valid)

/**
 * An ensemble: agents working through tasks.
 *
 * `make` checks the configuration (the specification's rules and exact
 * messages) and returns an ensemble; `run(ensemble, inputs)` fills the task
 * templates from `inputs` and executes the tasks. Each run is independent:
 * two runs share no state.
 *
 * Security model:
 * - An agent's tools are its own: tool handlers are found by tool name, so
 *   `make` refuses two agents with different tools of one name (and a tool
 *   that takes the name of the ensemble's `delegate` / `delegateTask`).
 * - A HIERARCHICAL run's constraints bound every delegation made inside it,
 *   the workers' peer delegations included (see `HierarchicalConstraints`).
 * - Every run has budgets: `maxModelCalls` (default 500) model calls and
 *   `maxDelegations` (default 50) approved delegations, counted across all
 *   agents, the manager and delegated workers. Used up, the run stops with
 *   `BudgetExceededError`, which carries the outputs completed so far.
 * - Configs and inputs are checked at run time as well as by types (they may
 *   come from JSON, YAML or JavaScript): a wrongly shaped value fails with a
 *   `ValidationError` naming the field. `make` and `run` never throw.
 * - Names from models, users and configs (roles, tool names, input names)
 *   are never used as keys of plain objects.
 *
 * ```ts
 * const program = Effect.gen(function*() {
 *   const researcher = yield* Agent.make({ role: "Researcher", goal: "Find reliable facts" })
 *   const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
 *   const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Five facts", agent: researcher })
 *   const write = yield* Task.make({
 *     description: "Write about {topic}",
 *     expectedOutput: "Two paragraphs",
 *     agent: writer,
 *     context: [research]
 *   })
 *   const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
 *   return yield* Ensemble.run(ensemble, { topic: "Effect" })
 * })
 * ```
 *
 * @since 0.1.0
 */
import { Clock, Context, Duration, Effect, Layer, Option, Predicate, type Scope, Stream } from "effect"
import type { Tool } from "effect/ai"
import type * as Chain from "../Chain.ts"
import { ChatModel } from "../ChatModel.ts"
import * as Budget from "../internal/ensemble/budget.ts"
import { type Delegations, runAgent } from "../internal/ensemble/delegation.ts"
import { validate, type ValidConfig } from "../internal/ensemble/ensembleConfig.ts"
import * as Guard from "../internal/ensemble/guard.ts"
import { eventStream } from "../internal/eventStream.ts"
import { hierarchical } from "../internal/ensemble/hierarchical.ts"
import { type ErrorStrategy, parallel } from "../internal/ensemble/parallel.ts"
import { inputs as inputsRule, isCount, show } from "../internal/ensemble/rules.ts"
import type { ResolvedTask, TaskFailure } from "../internal/ensemble/runTask.ts"
import { sequential } from "../internal/ensemble/sequential.ts"
import type * as Agent from "./Agent.ts"
import {
  type BudgetExceededError,
  ConstraintViolationError,
  type EnsembleError,
  ParallelExecutionError,
  PromptTemplateError,
  TaskExecutionError,
  ValidationError
} from "./EnsembleError.ts"
import type { DelegationRecord } from "./Delegation.ts"
import { type EnsembleEvent, publish, Sink } from "./EnsembleEvent.ts"
import * as ExternalTool from "../ExternalTool.ts"
import type * as HierarchicalConstraints from "./HierarchicalConstraints.ts"
import type { Task } from "./Task.ts"
import type { EnsembleOutput, TaskOutput } from "./TaskOutput.ts"
import * as Template from "./Template.ts"
import type { Workflow } from "./Workflow.ts"

/**
 * The handler services the tools of an agent need.
 *
 * @example
 * ```ts
 * import { Ensemble } from "loopwork/ensemble"
 *
 * type None = Ensemble.HandlersOfAgent<never> // never
 * ```
 *
 * @since 0.1.0
 */
export type HandlersOfAgent<A> = A extends { readonly "~tools"?: infer Tools }
  ? Tools extends Record<string, Tool.Any> ? Chain.HandlersOf<Tools> : never
  : never

/**
 * A validated ensemble. `R` is what a run needs besides a `ChatModel`: the
 * handlers of the agents' tools.
 *
 * @example
 * ```ts
 * import { Ensemble } from "loopwork/ensemble"
 *
 * const size = (ensemble: Ensemble.Ensemble) => ensemble.tasks.length
 * ```
 *
 * @since 0.1.0
 */
export interface Ensemble<R = never> {
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
  /** Phantom: the requirements of a run. */
  readonly "~requirements"?: R
}

/**
 * What {@link make} takes.
 *
 * @example
 * ```ts
 * import { Ensemble } from "loopwork/ensemble"
 * import type { Agent, Task } from "loopwork/ensemble"
 *
 * declare const writer: Agent.Any
 * declare const write: Task.Task
 * const config: Ensemble.Config<ReadonlyArray<Agent.Any>> = { agents: [writer], tasks: [write] }
 * ```
 *
 * @since 0.1.0
 */
export interface Config<Agents extends ReadonlyArray<Agent.Any>> {
  readonly agents: Agents
  readonly tasks: ReadonlyArray<Task>
  /** Default `"SEQUENTIAL"`. */
  readonly workflow?: Workflow | undefined
  readonly inputs?: Readonly<Record<string, string>> | undefined
  /** Log each task's start and end at INFO level (default false). Agents have their own `verbose` for prompts. */
  readonly verbose?: boolean | undefined
  /** PARALLEL: tasks running at once (default `"unbounded"`). */
  readonly concurrency?: number | "unbounded" | undefined
  /**
   * PARALLEL: `"fail-fast"` (default: after the first failure no new task
   * starts, running ones finish, the run fails with `TaskExecutionError`) or
   * `"continue"` (dependents of a failed task are skipped, the rest run, the
   * run fails with `ParallelExecutionError` listing failures and skipped tasks).
   */
  readonly onError?: ErrorStrategy | undefined
  /** HIERARCHICAL: constraints on the manager (see `HierarchicalConstraints`). */
  readonly constraints?: HierarchicalConstraints.HierarchicalConstraints | undefined
  /** HIERARCHICAL: the manager's model; default the ensemble's `ChatModel`. */
  readonly managerLlm?: Layer.Layer<ChatModel> | undefined
  /** HIERARCHICAL: the manager's model calls before its final answer (default 20). */
  readonly managerMaxIterations?: number | undefined
  /** Peer delegation depth limit (default 3, > 0). */
  readonly maxDelegationDepth?: number | undefined
  /**
   * Model calls one run may make, counting every agent, the manager,
   * structured-output retries and workers reached by delegation (default
   * 500). Used up: the run stops with `BudgetExceededError`.
   */
  readonly maxModelCalls?: number | undefined
  /**
   * Delegations one run may make, the manager's and peers' together, at any
   * depth (default 50). Used up: the run stops with `BudgetExceededError`.
   */
  readonly maxDelegations?: number | undefined
}

/**
 * The defaults of the specification (and of the options this library adds).
 *
 * @example
 * ```ts
 * import { Ensemble } from "loopwork/ensemble"
 *
 * Ensemble.defaults.maxDelegationDepth // 3
 * ```
 *
 * @since 0.1.0
 */
export const defaults = {
  workflow: "SEQUENTIAL",
  concurrency: "unbounded",
  onError: "fail-fast",
  managerMaxIterations: 20,
  maxDelegationDepth: 3,
  maxModelCalls: 500,
  maxDelegations: 50
} as const

const fail = (message: string) => Effect.fail(new ValidationError({ message }))

/**
 * Checks the configuration and returns an ensemble. Fails with
 * `ValidationError`: "Ensemble must have at least one task", "Ensemble must
 * have at least one agent", "Task '…' references agent '…' which is not in
 * the ensemble's agent list", "Circular context dependency detected involving
 * task: '…'", "Task '…' references context task '…' which appears later in
 * the task list" (SEQUENTIAL only), and for options this library adds (workflow,
 * `concurrency`, `onError`, the budgets) a message naming the option. It also
 * refuses two agents with different tools of one name ("Agents 'A' and 'B'
 * have different tools named 'lookup' …"): handlers are found by name, so
 * one agent's calls would run the other's. A config loaded from JSON, YAML or
 * JavaScript is checked the same way: a wrongly shaped value (`agents:
 * undefined`, `tasks: [t, null]`, a string for a flag) fails with a
 * `ValidationError` naming the field. `make` never throws. The ensemble it
 * returns is frozen.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Ensemble, Task } from "loopwork/ensemble"
 *
 * const program = Effect.gen(function*() {
 *   const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
 *   const write = yield* Task.make({ description: "Write a haiku", expectedOutput: "A haiku", agent: writer })
 *   return yield* Ensemble.make({ agents: [writer], tasks: [write] })
 * })
 * ```
 *
 * @since 0.1.0
 */
export const make = <const Agents extends ReadonlyArray<Agent.Any>>(
  config: Config<Agents>
): Effect.Effect<Ensemble<HandlersOfAgent<Agents[number]>>, ValidationError> =>
  Effect.map(validate(config), build<HandlersOfAgent<Agents[number]>>)

/** A frozen ensemble of a checked config, defaults filled in. */
const build = <R>(valid: ValidConfig): Ensemble<R> =>
  Object.freeze({
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

/** Fills every task's templates; all missing variables are reported together. */
const resolveAll = (
  tasks: ReadonlyArray<Task>,
  inputs: ReadonlyMap<string, string>
): Effect.Effect<ReadonlyMap<Task, ResolvedTask>, PromptTemplateError> => {
  const missing: Array<string> = []
  let firstTemplate: string | undefined
  for (const task of tasks) {
    for (const template of [task.description, task.expectedOutput]) {
      const absent = Template.variables(template).filter((name) => !inputs.has(name))
      if (absent.length > 0) firstTemplate ??= template
      for (const name of absent) if (!missing.includes(name)) missing.push(name)
    }
  }
  if (missing.length > 0) return Effect.fail(new PromptTemplateError({ missing, template: firstTemplate! }))
  return Effect.map(
    Effect.forEach(tasks, (task) =>
      Effect.all({
        description: Template.resolve(task.description, inputs),
        expectedOutput: Template.resolve(task.expectedOutput, inputs)
      }).pipe(Effect.map((resolved): readonly [Task, ResolvedTask] => [task, {
        ...resolved,
        agent: task.agent,
        outputType: task.outputType,
        maxOutputRetries: task.maxOutputRetries
      }]))),
    (entries) => new Map(entries)
  )
}

/** Runs the ensemble's workflow; pairs each output with its task (none for manager and delegated work). */
const workflowOf = (
  ensemble: Ensemble<unknown>,
  resolved: ReadonlyMap<Task, ResolvedTask>,
  d: Delegations,
  runRoot: (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<
  ReadonlyArray<readonly [Task | undefined, TaskOutput]>,
  TaskExecutionError | ParallelExecutionError | ConstraintViolationError,
  ChatModel
> => {
  if (ensemble.workflow === "PARALLEL") {
    return parallel(ensemble.tasks, resolved, { concurrency: ensemble.concurrency, onError: ensemble.onError }, runRoot)
  }
  if (ensemble.workflow === "SEQUENTIAL") return sequential(ensemble.tasks, resolved, runRoot)
  const position = new Map(ensemble.tasks.map((task, index) => [task, index]))
  const plan = ensemble.tasks.map((task) => ({
    resolved: resolved.get(task)!,
    context: task.context.flatMap((dependency) => {
      const at = position.get(dependency)
      return at === undefined ? [] : [at]
    })
  }))
  return Effect.map(
    hierarchical(d, plan, { llm: ensemble.managerLlm, maxIterations: ensemble.managerMaxIterations }),
    (outputs) => outputs.map((output) => [undefined, output] as const)
  )
}

type RunError = TaskExecutionError | ParallelExecutionError | ConstraintViolationError

/** The error of a failed run: `BudgetExceededError` once a budget ran out, else the workflow's with the delegation records. */
const runError = (error: RunError, d: Delegations): RunError | BudgetExceededError =>
  d.budget.exceeded === undefined
    ? withDelegations(error, d.records)
    : Budget.exceededError(d.budget, d.budget.exceeded, error.completedOutputs, d.records)

/** The error of a failed run, with the run's delegation records attached. */
const withDelegations = (error: RunError, delegations: ReadonlyArray<DelegationRecord>): RunError => {
  switch (error._tag) {
    case "TaskExecutionError":
      return new TaskExecutionError({
        taskDescription: error.taskDescription,
        agentRole: error.agentRole,
        reason: error.reason,
        completedOutputs: error.completedOutputs,
        delegations
      })
    case "ParallelExecutionError":
      return new ParallelExecutionError({
        failures: error.failures,
        skipped: error.skipped,
        completedOutputs: error.completedOutputs,
        delegations
      })
    case "ConstraintViolationError":
      return new ConstraintViolationError({
        violations: error.violations,
        completedOutputs: error.completedOutputs,
        delegations
      })
  }
}

/** Every tool of the agents needs a handler in the run's context (external tools excepted). */
const checkHandlers = (
  agents: ReadonlyArray<Agent.Any>,
  services: Context.Context<never>
): Effect.Effect<void, ValidationError> => {
  for (const agent of agents) {
    for (const tool of Object.values(agent.toolkit.tools)) {
      if (ExternalTool.isExternal(tool) || services.mapUnsafe.has(tool.id)) continue
      return fail(
        `Agent '${agent.role}' has tool '${tool.name}' but no handler for it: provide its handlers with toolkit.toLayer({ ${tool.name}: ... })`
      )
    }
  }
  return Effect.void
}

/**
 * Checks what `run` was given, which may come from JavaScript: an ensemble
 * made by `make` (checked again, so a hand-built or changed one gets the same
 * rules) and inputs that are strings by name. The inputs, on top of the
 * ensemble's own, become a `Map`: a name like `constructor` or `__proto__`
 * is an input like any other, never a property of an object.
 */
const checkRun = <R>(
  ensemble: Ensemble<R>,
  inputs: unknown
): Effect.Effect<{ readonly ensemble: Ensemble<R>; readonly inputs: ReadonlyMap<string, string> }, ValidationError> => {
  if (!Predicate.isTagged(ensemble, "Ensemble")) {
    return fail(`Ensemble.run expects an ensemble made by Ensemble.make, got: ${show(ensemble)}`)
  }
  const wrong = inputsRule("Ensemble.run inputs")(inputs)
  if (wrong !== undefined) return fail(wrong)
  return Effect.map(validate(ensemble), (valid) => ({
    ensemble: build<R>(valid),
    inputs: new Map([
      ...Object.entries(valid.inputs ?? {}),
      ...Object.entries((inputs ?? {}) as Readonly<Record<string, string>>)
    ])
  }))
}

/**
 * What one run shares (see `Delegations`): each distinct model layer (the
 * agents' and the manager's) built once, every model — these and the
 * ensemble's `ChatModel` — counted against the run's budget, the guard of
 * its constraints, and its delegation records.
 */
const prepare = (ensemble: Ensemble<unknown>): Effect.Effect<Delegations, never, ChatModel | Scope.Scope> =>
  Effect.gen(function*() {
    const budget = Budget.make(ensemble)
    const counted = (built: Context.Context<ChatModel>) =>
      Context.add(built, ChatModel, Budget.counted(budget, Context.get(built, ChatModel)))
    const models = new Map<Layer.Layer<ChatModel>, Context.Context<ChatModel>>()
    const manager = ensemble.workflow === "HIERARCHICAL" ? [ensemble.managerLlm] : []
    for (const llm of [...ensemble.agents.map((agent) => agent.llm), ...manager]) {
      if (llm !== undefined && !models.has(llm)) models.set(llm, counted(yield* Layer.build(llm)))
    }
    const context = yield* Effect.context<ChatModel>()
    // Without an ensemble ChatModel (every agent brings its own), there is nothing to count.
    const services = Option.isSome(Context.getOption(context, ChatModel)) ? counted(context) : context
    return {
      agents: ensemble.agents,
      maxDepth: ensemble.maxDelegationDepth,
      records: [],
      services,
      models,
      verbose: ensemble.verbose,
      counters: { peerToolCalls: 0 },
      guard: ensemble.workflow === "HIERARCHICAL" ? Guard.make(ensemble.constraints) : Guard.open,
      budget
    }
  })

/**
 * Runs an ensemble: checks the ensemble and `inputs`, fills the templates
 * from `inputs` (on top of the ensemble's own `inputs`), checks that every
 * agent's tools have handlers, then executes the tasks within the run's
 * budgets (`maxModelCalls`, `maxDelegations`). Fails with
 * `PromptTemplateError` or `ValidationError` (before any model call; a
 * wrongly shaped ensemble or input, such as an input value that is not a
 * string, names the field), `TaskExecutionError` (with the outputs completed
 * so far), `ParallelExecutionError` (PARALLEL with `onError: "continue"`),
 * `ConstraintViolationError` (HIERARCHICAL) or `BudgetExceededError` (a
 * budget ran out; the outputs so far); the run errors carry the delegation
 * records. It never throws.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatModel } from "loopwork"
 * import { Ensemble } from "loopwork/ensemble"
 *
 * declare const ensemble: Ensemble.Ensemble
 * const output = Ensemble.run(ensemble, { topic: "Effect" }).pipe(
 *   Effect.provide(ChatModel.scripted([{ text: "Done." }]).layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
export const run = <R>(
  given: Ensemble<R>,
  inputs: Readonly<Record<string, string>> = {}
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel | R> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const checked = yield* checkRun(given, inputs)
    const ensemble = checked.ensemble
    const used = new Set(ensemble.tasks.map((task) => task.agent))
    for (const agent of ensemble.agents) {
      if (!used.has(agent)) yield* Effect.logWarning(`Agent '${agent.role}' is not used by any task`)
    }
    const resolved = yield* resolveAll(ensemble.tasks, checked.inputs)
    yield* checkHandlers(ensemble.agents, yield* Effect.context<never>())
    const d = yield* prepare(ensemble)
    const runRoot = (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => runAgent(d, task, context, 0)
    const pairs = yield* workflowOf(ensemble, resolved, d, runRoot).pipe(
      Effect.provide(d.services),
      Effect.mapError((error) => runError(error, d))
    )
    const taskOutputs = pairs.map(([, output]) => output)
    if (d.budget.exceeded !== undefined) {
      return yield* Budget.exceededError(d.budget, d.budget.exceeded, taskOutputs, d.records)
    }
    const finished = yield* Clock.currentTimeMillis
    let totalToolCalls = d.counters.peerToolCalls
    for (const output of taskOutputs) totalToolCalls += output.toolCallCount
    // The final task's output: the last in the list (for PARALLEL, outputs are in completion order).
    const last = ensemble.tasks[ensemble.tasks.length - 1]
    // HIERARCHICAL: the manager's synthesis, which comes last.
    const final = pairs.find(([task]) => task !== undefined && task === last)?.[1] ?? taskOutputs[taskOutputs.length - 1]
    const output: EnsembleOutput = {
      raw: final.raw,
      taskOutputs,
      totalDuration: Duration.millis(finished - started),
      totalToolCalls,
      delegations: d.records
    }
    yield* publish({ _tag: "EnsembleCompleted", output })
    return output
  }).pipe(
    Effect.scoped,
    Effect.tapError((error) => publish({ _tag: "EnsembleFailed", error: error._tag, message: error.message }))
  )

/**
 * Runs an ensemble as {@link run} does, as a `Stream` of its events: tasks
 * and delegations, each agent's run as it happens (`AgentRun`: model calls
 * with their text deltas, tool calls), and the end — `EnsembleCompleted` with
 * the output, or `EnsembleFailed`, after which the stream fails with the same
 * error `run` fails with. Interrupting the stream interrupts the run.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Ensemble } from "loopwork/ensemble"
 *
 * declare const ensemble: Ensemble.Ensemble
 * const progress = Ensemble.stream(ensemble).pipe(
 *   Stream.runForEach((event) => Effect.log(event._tag))
 * )
 * ```
 *
 * @since 0.1.0
 */
export const stream = <R>(
  ensemble: Ensemble<R>,
  inputs: Readonly<Record<string, string>> = {},
  options?: { readonly bufferSize?: number | undefined }
): Stream.Stream<EnsembleEvent, EnsembleError, ChatModel | R> => {
  const bufferSize = options?.bufferSize ?? 256
  if (!isCount(bufferSize, 1)) {
    return Stream.fail(
      new ValidationError({ message: `Ensemble.stream: bufferSize must be a whole number of events, at least 1 (got ${bufferSize})` })
    )
  }
  return eventStream(bufferSize, (publish) => Effect.provideService(run(ensemble, inputs), Sink, { publish }))
}

/**
 * An ensemble as a service: `run(inputs)` with the model and tool handlers
 * captured when the layer was built. Get it with `yield* Ensemble.Service`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Ensemble } from "loopwork/ensemble"
 *
 * const report = Effect.gen(function*() {
 *   const team = yield* Ensemble.Service
 *   const output = yield* team.run({ topic: "Effect" })
 *   return output.raw
 * })
 * ```
 *
 * @since 0.1.0
 */
export class Service extends Context.Service<Service, {
  readonly ensemble: Ensemble<unknown>
  readonly run: (inputs?: Readonly<Record<string, string>>) => Effect.Effect<EnsembleOutput, EnsembleError>
}>()("loopwork/ensemble/Ensemble") {}

/**
 * A layer providing {@link Service}: it validates `config` when built (a
 * broken rule fails the layer with `ValidationError`) and captures the
 * `ChatModel` and the tool handlers the runs need.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ChatModel } from "loopwork"
 * import { Agent, Ensemble, Task } from "loopwork/ensemble"
 *
 * const TeamLayer = Layer.unwrap(Effect.gen(function*() {
 *   const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
 *   const haiku = yield* Task.make({ description: "A haiku about {topic}", expectedOutput: "A haiku", agent: writer })
 *   return Ensemble.layer({ agents: [writer], tasks: [haiku] })
 * }))
 * const live = TeamLayer.pipe(Layer.provide(ChatModel.scripted([{ text: "…" }]).layer))
 * ```
 *
 * @since 0.1.0
 */
export const layer = <const Agents extends ReadonlyArray<Agent.Any>>(
  config: Config<Agents>
): Layer.Layer<Service, ValidationError, ChatModel | HandlersOfAgent<Agents[number]>> =>
  Layer.effect(
    Service,
    Effect.gen(function*() {
      const ensemble = yield* make(config)
      const services = yield* Effect.context<ChatModel | HandlersOfAgent<Agents[number]>>()
      return {
        ensemble: ensemble as Ensemble<unknown>,
        run: (inputs?: Readonly<Record<string, string>>) => Effect.provide(run(ensemble, inputs), services)
      }
    })
  )

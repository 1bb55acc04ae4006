/**
 * An ensemble: agents working through tasks.
 *
 * `make` checks the configuration (the specification's rules and exact
 * messages) and returns an ensemble; `run(ensemble, inputs)` fills the task
 * templates from `inputs` and executes the tasks. Each run is independent:
 * two runs share no state.
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
import { type Cause, Clock, Context, Duration, Effect, Exit, Layer, Queue, Stream } from "effect"
import type { Tool } from "effect/ai"
import type * as Chain from "../Chain.ts"
import type { ChatModel } from "../ChatModel.ts"
import { type Delegations, runAgent } from "../internal/ensemble/delegation.ts"
import { eventStream } from "../internal/eventStream.ts"
import { isPositiveInt } from "../internal/options.ts"
import { hierarchical, managerRole } from "../internal/ensemble/hierarchical.ts"
import { type ErrorStrategy, parallel } from "../internal/ensemble/parallel.ts"
import type { ResolvedTask, TaskFailure } from "../internal/ensemble/runTask.ts"
import { sequential } from "../internal/ensemble/sequential.ts"
import type * as Agent from "./Agent.ts"
import {
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
import * as HierarchicalConstraints from "./HierarchicalConstraints.ts"
import * as Role from "./Role.ts"
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
  maxDelegationDepth: 3
} as const

const fail = (message: string) => Effect.fail(new ValidationError({ message }))

/** The first task found on a cycle of context references, if any. */
const findCycle = (tasks: ReadonlyArray<Task>): Task | undefined => {
  const state = new Map<Task, "visiting" | "done">()
  const visit = (task: Task): Task | undefined => {
    const seen = state.get(task)
    if (seen === "done") return undefined
    if (seen === "visiting") return task
    state.set(task, "visiting")
    for (const dependency of task.context) {
      const found = visit(dependency)
      if (found !== undefined) return found
    }
    state.set(task, "done")
    return undefined
  }
  for (const task of tasks) {
    const found = visit(task)
    if (found !== undefined) return found
  }
  return undefined
}

const validate = (config: Config<ReadonlyArray<Agent.Any>>): Effect.Effect<void, ValidationError> => {
  const workflow = config.workflow ?? "SEQUENTIAL"
  if (workflow !== "SEQUENTIAL" && workflow !== "PARALLEL" && workflow !== "HIERARCHICAL") {
    return fail(`Ensemble workflow must be SEQUENTIAL, PARALLEL or HIERARCHICAL, got: ${String(workflow)}`)
  }
  const depth = config.maxDelegationDepth
  if (depth !== undefined && !(Number.isInteger(depth) && depth > 0)) {
    return fail(`Ensemble maxDelegationDepth must be > 0, got: ${String(depth)}`)
  }
  const managerMax = config.managerMaxIterations
  if (managerMax !== undefined && !(Number.isInteger(managerMax) && managerMax > 0)) {
    return fail(`Ensemble managerMaxIterations must be > 0, got: ${String(managerMax)}`)
  }
  const concurrency = config.concurrency
  if (concurrency !== undefined && concurrency !== "unbounded" && !(Number.isInteger(concurrency) && concurrency > 0)) {
    return fail(`Ensemble concurrency must be a positive integer or "unbounded", got: ${String(concurrency)}`)
  }
  if (config.onError !== undefined && config.onError !== "fail-fast" && config.onError !== "continue") {
    return fail(`Ensemble onError must be "fail-fast" or "continue", got: ${String(config.onError)}`)
  }
  if (config.tasks.length === 0) return fail("Ensemble must have at least one task")
  if (config.agents.length === 0) return fail("Ensemble must have at least one agent")
  // Delegation finds agents by role, so there roles must tell agents apart.
  const byRole = workflow === "HIERARCHICAL" || config.agents.some((agent) => agent.allowDelegation)
  const roles = new Map<string, string>()
  for (const agent of byRole ? new Set(config.agents) : []) {
    const seen = roles.get(Role.key(agent.role))
    if (seen !== undefined) {
      return fail(
        `Ensemble agents must have distinct roles when agents are found by role (HIERARCHICAL, or delegation allowed): '${seen}' and '${agent.role}'`
      )
    }
    roles.set(Role.key(agent.role), agent.role)
  }
  if (workflow === "HIERARCHICAL") {
    const reserved = config.agents.find((agent) => Role.same(agent.role, managerRole))
    if (reserved !== undefined) {
      return fail(`Agent role '${reserved.role}' is reserved for the manager of a HIERARCHICAL ensemble`)
    }
    const broken = HierarchicalConstraints.check(config.constraints ?? {}, config.agents.map((agent) => agent.role))
    if (broken !== undefined) return fail(broken)
  }
  const agents = new Set<Agent.Any>(config.agents)
  for (const task of config.tasks) {
    if (!agents.has(task.agent)) {
      return fail(
        `Task '${task.description}' references agent '${task.agent.role}' which is not in the ensemble's agent list`
      )
    }
  }
  for (const task of config.tasks) {
    if (task.context.includes(task)) return fail("Task cannot reference itself in context")
  }
  const cycle = findCycle(config.tasks)
  if (cycle !== undefined) return fail(`Circular context dependency detected involving task: '${cycle.description}'`)
  const position = new Map(config.tasks.map((task, index) => [task, index]))
  for (const [index, task] of config.tasks.entries()) {
    for (const dependency of task.context) {
      const at = position.get(dependency)
      if (at === undefined) {
        return fail(
          `Task '${task.description}' references context task '${dependency.description}' which is not in the ensemble's task list`
        )
      }
      if (at > index && workflow === "SEQUENTIAL") {
        return fail(
          `Task '${task.description}' references context task '${dependency.description}' which appears later in the task list`
        )
      }
    }
  }
  return Effect.void
}

/**
 * Checks the configuration and returns an ensemble. Fails with
 * `ValidationError`: "Ensemble must have at least one task", "Ensemble must
 * have at least one agent", "Task '…' references agent '…' which is not in
 * the ensemble's agent list", "Circular context dependency detected involving
 * task: '…'", "Task '…' references context task '…' which appears later in
 * the task list" (SEQUENTIAL only), and for options this library adds (workflow,
 * `concurrency`, `onError`) a message naming the option.
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
  Effect.as(validate(config), {
    _tag: "Ensemble",
    agents: config.agents,
    tasks: config.tasks,
    workflow: config.workflow ?? "SEQUENTIAL",
    inputs: config.inputs ?? {},
    verbose: config.verbose ?? false,
    concurrency: config.concurrency ?? defaults.concurrency,
    onError: config.onError ?? defaults.onError,
    constraints: config.constraints ?? {},
    managerLlm: config.managerLlm,
    managerMaxIterations: config.managerMaxIterations ?? defaults.managerMaxIterations,
    maxDelegationDepth: config.maxDelegationDepth ?? defaults.maxDelegationDepth
  })

/** Fills every task's templates; all missing variables are reported together. */
const resolveAll = (
  tasks: ReadonlyArray<Task>,
  inputs: Readonly<Record<string, string>>
): Effect.Effect<ReadonlyMap<Task, ResolvedTask>, PromptTemplateError> => {
  const missing: Array<string> = []
  let firstTemplate: string | undefined
  for (const task of tasks) {
    for (const template of [task.description, task.expectedOutput]) {
      const absent = Template.variables(template).filter((name) => !Object.hasOwn(inputs, name))
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
    hierarchical(d, plan, ensemble.constraints, { llm: ensemble.managerLlm, maxIterations: ensemble.managerMaxIterations }),
    (outputs) => outputs.map((output) => [undefined, output] as const)
  )
}

/** The error of a failed run, with the run's delegation records attached. */
const withDelegations = (
  error: TaskExecutionError | ParallelExecutionError | ConstraintViolationError,
  delegations: ReadonlyArray<DelegationRecord>
): TaskExecutionError | ParallelExecutionError | ConstraintViolationError => {
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
 * Runs an ensemble: fills the templates from `inputs` (on top of the
 * ensemble's own `inputs`), checks that every agent's tools have handlers,
 * then executes the tasks. Fails with `PromptTemplateError` or
 * `ValidationError` (before any model call), `TaskExecutionError` (with the
 * outputs completed so far), `ParallelExecutionError` (PARALLEL with
 * `onError: "continue"`) or `ConstraintViolationError` (HIERARCHICAL); the
 * run errors carry the delegation records.
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
  ensemble: Ensemble<R>,
  inputs: Readonly<Record<string, string>> = {}
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel | R> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const used = new Set(ensemble.tasks.map((task) => task.agent))
    for (const agent of ensemble.agents) {
      if (!used.has(agent)) yield* Effect.logWarning(`Agent '${agent.role}' is not used by any task`)
    }
    const resolved = yield* resolveAll(ensemble.tasks, { ...ensemble.inputs, ...inputs })
    yield* checkHandlers(ensemble.agents, yield* Effect.context<never>())
    // Each distinct model layer (agents' and the manager's) is built once for the run.
    const models = new Map<Layer.Layer<ChatModel>, Context.Context<ChatModel>>()
    const manager = ensemble.workflow === "HIERARCHICAL" ? [ensemble.managerLlm] : []
    for (const llm of [...ensemble.agents.map((agent) => agent.llm), ...manager]) {
      if (llm !== undefined && !models.has(llm)) models.set(llm, yield* Layer.build(llm))
    }
    const d: Delegations = {
      agents: ensemble.agents,
      maxDepth: ensemble.maxDelegationDepth,
      records: [],
      services: yield* Effect.context<ChatModel>(),
      models,
      verbose: ensemble.verbose,
      counters: { peerToolCalls: 0 }
    }
    const runRoot = (task: ResolvedTask, context: ReadonlyArray<TaskOutput>) => runAgent(d, task, context, 0)
    const pairs = yield* workflowOf(ensemble, resolved, d, runRoot).pipe(
      Effect.mapError((error) => withDelegations(error, d.records))
    )
    const taskOutputs = pairs.map(([, output]) => output)
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
  if (!isPositiveInt(bufferSize)) {
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

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
import { Context, Effect, Layer, Stream } from "effect"
import type * as Tool from "effect/ai/Tool"
import type * as Chain from "../Chain.ts"
import type { ChatModel } from "../ChatModel.ts"
import { eventStream } from "../internal/eventStream.ts"
import * as Internal from "./internal/ensemble.ts"
import type { ErrorStrategy } from "./internal/parallel.ts"
import { isCount, show } from "./internal/rules.ts"
import * as Run from "./internal/run.ts"
import { validateConfig } from "./internal/ensembleConfig.ts"
import type * as Agent from "./Agent.ts"
import { type EnsembleError, ValidationError } from "./EnsembleError.ts"
import { type EnsembleEvent, Sink } from "./EnsembleEvent.ts"
import type * as HierarchicalConstraints from "./HierarchicalConstraints.ts"
import type { Task } from "./Task.ts"
import type { EnsembleOutput } from "./TaskOutput.ts"
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
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface Ensemble<R = never> extends Internal.Fields {
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
 * @category models
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
 * @category utils
 * @since 0.1.0
 */
export const defaults = Internal.defaults

/**
 * Checks the configuration and returns an ensemble. Fails with
 * `ValidationError`: "Ensemble must have at least one task", "Ensemble must
 * have at least one agent", "Task '…' references agent '…' which is not in
 * the ensemble's agent list", "Task '…' appears twice in the task list: …",
 * "Circular context dependency detected involving task: '…'", "Task '…'
 * references context task '…' which appears later in the task list"
 * (SEQUENTIAL only), and for options this library adds (workflow,
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
 * @category constructors
 * @since 0.1.0
 */
export const make = <const Agents extends ReadonlyArray<Agent.Any>>(
  config: Config<Agents>
): Effect.Effect<Ensemble<HandlersOfAgent<Agents[number]>>, ValidationError> =>
  Effect.map(validateConfig(config), Internal.build)

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
 * @category utils
 * @since 0.1.0
 */
export const run = <R>(
  given: Ensemble<R>,
  inputs: Readonly<Record<string, string>> = {}
): Effect.Effect<EnsembleOutput, EnsembleError, ChatModel | R> => Run.run(given, inputs)

/**
 * Runs an ensemble as {@link run} does, as a `Stream` of its events: tasks
 * and delegations, each agent's run as it happens (`AgentRun`: model calls
 * with their text deltas, tool calls), and the end — `EnsembleCompleted` with
 * the output, or `EnsembleFailed`, after which the stream fails with the same
 * error `run` fails with. Interrupting the stream interrupts the run. A slow
 * consumer (more than `bufferSize` events behind) holds up tasks starting
 * and ending; inside a task nothing waits for it, since the task queues its
 * events and hands them on in order.
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
 * @category utils
 * @since 0.1.0
 */
export const stream = <R>(
  ensemble: Ensemble<R>,
  inputs: Readonly<Record<string, string>> = {},
  options?: { readonly bufferSize?: number | undefined }
): Stream.Stream<EnsembleEvent, EnsembleError, ChatModel | R> => {
  let bufferSize: unknown
  try {
    bufferSize = options?.bufferSize ?? 256
  } catch {
    bufferSize = "an option that cannot be read"
  }
  if (!isCount(bufferSize, 1)) {
    return Stream.fail(
      new ValidationError({ message: `Ensemble.stream: bufferSize must be a whole number of events, at least 1 (got ${show(bufferSize)})` })
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
 * @category services
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
 * @category constructors
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

/**
 * An agent: a role with a goal, optional background, tools and model.
 *
 * An agent's work on a task is a `Chain.run` with its tools, its model (or the
 * ensemble's `ChatModel`) and `maxIterations` as the run's `maxRuns`; at the
 * limit it is asked for its best final answer instead of failing.
 *
 * Every rule of the ensemble specification is checked at run time too, for
 * options that come from JSON, YAML or JavaScript: the model, when given, is
 * a `Layer` providing `ChatModel` ("Agent LLM must not be null"), and tools
 * are an `effect/ai` `Toolkit` whose every entry is a Tool.
 *
 * @since 0.1.0
 */
import { Effect, type Layer } from "effect"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Tool from "effect/ai/Tool"
import type { ChatModel } from "../ChatModel.ts"
import { AgentOptions } from "./internal/agentConfig.ts"
import { decodeOptions } from "./internal/rules.ts"
import type { ValidationError } from "./EnsembleError.ts"

/**
 * Any agent, whatever its tools.
 *
 * @example
 * ```ts
 * import { Agent } from "loopwork/ensemble"
 *
 * const roles = (agents: ReadonlyArray<Agent.Any>) => agents.map((agent) => agent.role)
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Any {
  readonly _tag: "Agent"
  /** The agent's role or title, used in prompts and to address it. */
  readonly role: string
  /** Its primary objective, put in its system prompt. */
  readonly goal: string
  /** Background for the persona; omitted from the prompt when empty. */
  readonly background: string
  /** The tools it may call; their handlers come from the Effect context. */
  readonly toolkit: Toolkit.Any
  /** Its model; absent, the ensemble's `ChatModel` is used. */
  readonly llm: Layer.Layer<ChatModel> | undefined
  /** Whether it may delegate to other agents. */
  readonly allowDelegation: boolean
  /** Log its prompts and responses. */
  readonly verbose: boolean
  /** Model calls allowed per task before it must give its final answer (> 0). */
  readonly maxIterations: number
  /** Formatting instructions added to its system prompt; omitted when empty. */
  readonly responseFormat: string
}

/**
 * An agent whose tools are `Tools` (so a run asks for exactly their handlers).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "loopwork/ensemble"
 *
 * const writer = Agent.make({ role: "Writer", goal: "Write clear reports" }).pipe(Effect.runSync)
 * writer.maxIterations // 25
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Agent<Tools extends Record<string, Tool.Any> = {}> extends Any {
  /** Phantom: the toolkit's tools, for typing the handlers a run needs. */
  readonly "~tools"?: Tools
}

/**
 * What {@link make} takes; only `role` and `goal` are required.
 *
 * @example
 * ```ts
 * import { Agent } from "loopwork/ensemble"
 *
 * const options: Agent.Options<{}> = { role: "Researcher", goal: "Find sources", maxIterations: 10 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<Tools extends Record<string, Tool.Any>> {
  readonly role: string
  readonly goal: string
  readonly background?: string | undefined
  readonly toolkit?: Toolkit.Toolkit<Tools> | undefined
  readonly llm?: Layer.Layer<ChatModel> | undefined
  readonly allowDelegation?: boolean | undefined
  readonly verbose?: boolean | undefined
  readonly maxIterations?: number | undefined
  readonly responseFormat?: string | undefined
}

/**
 * The defaults of the specification.
 *
 * @example
 * ```ts
 * import { Agent } from "loopwork/ensemble"
 *
 * Agent.defaults.maxIterations // 25
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const defaults = {
  maxIterations: 25,
  allowDelegation: false,
  verbose: false,
  responseFormat: "",
  background: ""
} as const

/**
 * Builds an agent, checking the specification's rules: "Agent role must not
 * be blank", "Agent goal must not be blank", "Agent LLM must not be null",
 * "Agent maxIterations must be > 0, got: N", and that the toolkit is an
 * `effect/ai` Toolkit of Tools. Options loaded from JSON, YAML or JavaScript
 * are checked the same way: a wrongly shaped value (a string for a flag, a
 * non-number count, a model that is not a `Layer`) fails with a
 * `ValidationError` naming the field, never with a thrown error.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "loopwork/ensemble"
 *
 * const program = Effect.gen(function*() {
 *   const researcher = yield* Agent.make({ role: "Researcher", goal: "Find reliable sources", maxIterations: 8 })
 *   return researcher
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <Tools extends Record<string, Tool.Any> = {}>(
  options: Options<Tools>
): Effect.Effect<Agent<Tools>, ValidationError> =>
  Effect.map(decodeOptions("Agent.make", AgentOptions, options), (valid): Agent<Tools> => ({
    _tag: "Agent",
    role: valid.role,
    goal: valid.goal,
    background: valid.background ?? defaults.background,
    toolkit: valid.toolkit ?? Toolkit.empty,
    llm: valid.llm,
    allowDelegation: valid.allowDelegation ?? defaults.allowDelegation,
    verbose: valid.verbose ?? defaults.verbose,
    maxIterations: valid.maxIterations ?? defaults.maxIterations,
    responseFormat: valid.responseFormat ?? defaults.responseFormat
  }))

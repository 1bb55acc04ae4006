/**
 * What one `Ensemble.run` shares, prepared before its workflow: the models
 * of its agents and manager built once, every model counted against its
 * budgets, the guard of its constraints and its delegation records (see
 * `Delegations`). `loopwork/durable`'s bodies prepare their runs with it too.
 *
 * @internal
 */
import { Cause, Context, Effect, Layer, type Scope } from "effect"
import { ChatModel } from "../../ChatModel.ts"
import { CurrentDurability } from "../../internal/durability.ts"
import * as Budget from "./budget.ts"
import type { Delegations } from "./delegation.ts"
import type { Fields } from "./ensemble.ts"
import * as Guard from "./guard.ts"
import { TaskExecutionError } from "../EnsembleError.ts"
import { managerRole } from "./hierarchical.ts"
import { thrownMessage } from "../../internal/errorText.ts"

/** @internal the distinct model layers a run builds: the agents' own and, HIERARCHICAL, the manager's */
export const modelLayers = (ensemble: Fields): ReadonlyArray<Layer.Layer<ChatModel>> => {
  let layers: Array<Layer.Layer<ChatModel>> | undefined
  for (const agent of ensemble.agents) layers = added(layers, agent.llm)
  if (ensemble.workflow === "HIERARCHICAL") layers = added(layers, ensemble.managerLlm)
  return layers ?? noLayers
}

/** `layers` (made when first needed) with `layer` added, unless it is absent or in them already. */
const added = (
  layers: Array<Layer.Layer<ChatModel>> | undefined,
  layer: Layer.Layer<ChatModel> | undefined
): Array<Layer.Layer<ChatModel>> | undefined => {
  if (layer === undefined) return layers
  if (layers === undefined) return [layer]
  if (!layers.includes(layer)) layers.push(layer)
  return layers
}

const noLayers: ReadonlyArray<Layer.Layer<ChatModel>> = []
const noModels: ReadonlyMap<Layer.Layer<ChatModel>, Context.Context<ChatModel>> = new Map()

/**
 * What one run shares (see `Delegations`): each distinct model layer (the
 * agents' and the manager's) built once, in the run's scope, every model —
 * these and the ensemble's `ChatModel` — counted against the run's budget,
 * the guard of its constraints, and its delegation records.
 *
 * @internal
 */
export const prepare = (ensemble: Fields): Effect.Effect<Delegations, TaskExecutionError, ChatModel | Scope.Scope> => {
  const layers = modelLayers(ensemble)
  return Effect.flatMap(
    Effect.forEach(layers, (layer) => built(ensemble, layer)),
    (contexts) =>
      Effect.contextWith((context: Context.Context<ChatModel>) => Effect.succeed(prepared(ensemble, layers, contexts, context)))
  )
}

/**
 * `layer` built; a layer that fails or dies (a missing API key, say) fails
 * the run with `TaskExecutionError` naming the first agent that brings it,
 * before any task starts. An interruption goes on.
 */
const built = (ensemble: Fields, layer: Layer.Layer<ChatModel>): Effect.Effect<Context.Context<ChatModel>, TaskExecutionError, Scope.Scope> =>
  Effect.catchCause(Layer.build(layer), (cause: Cause.Cause<unknown>) =>
    Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.fail(
      new TaskExecutionError({
        taskDescription: "(before any task started)",
        agentRole: ensemble.agents.find((agent) => agent.llm === layer)?.role ?? managerRole,
        reason: `the agent's model layer (llm) failed to build: ${thrownMessage(Cause.squash(cause), 500)}`,
        completedOutputs: []
      })
    ))

/** A built model's context, its model counted against `budget`. */
const counted = (budget: Budget.Budget, built: Context.Context<ChatModel>): Context.Context<ChatModel> =>
  Context.add(built, ChatModel, Budget.counted(budget, Context.get(built, ChatModel)))

/** @internal the run's shared state, from its built models (`contexts`, one per layer of `layers`) and its fiber's `context` */
export const prepared = (
  ensemble: Fields,
  layers: ReadonlyArray<Layer.Layer<ChatModel>>,
  contexts: ReadonlyArray<Context.Context<ChatModel>>,
  context: Context.Context<ChatModel>
): Delegations => {
  const budget = Budget.make(ensemble)
  const models = layers.length === 0 ? noModels : new Map(layers.map((layer, index) => [layer, counted(budget, contexts[index])] as const))
  // Without an ensemble ChatModel (every agent brings its own), there is nothing to count.
  const model = Context.getOrUndefined(context, ChatModel)
  const services = model === undefined ? context : Context.add(context, ChatModel, Budget.counted(budget, model))
  // Inside a durable body, the model calls it replays are counted too.
  const durability = Context.get(context, CurrentDurability)
  return {
    agents: ensemble.agents,
    maxDepth: ensemble.maxDelegationDepth,
    records: [],
    places: [],
    services: durability === undefined ? services : Context.add(services, CurrentDurability, Budget.replayed(budget, durability)),
    models,
    verbose: ensemble.verbose,
    counters: { peerToolCalls: 0 },
    guard: ensemble.workflow === "HIERARCHICAL" ? Guard.make(ensemble.constraints) : Guard.open,
    budget
  }
}

/**
 * @internal `effect`, the run's workflow, with the run's services.
 * `d.services` is the context the run read just before (nothing changed it
 * since) with its counted model added: it replaces the context instead of
 * being merged into it, which would copy both.
 */
export const withServices = <A, E>(effect: Effect.Effect<A, E, ChatModel>, d: Delegations): Effect.Effect<A, E> =>
  Effect.updateContext(effect, () => d.services)

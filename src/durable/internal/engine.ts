/**
 * The workflow engine every durable store uses: effect's
 * `ClusterWorkflowEngine` over SQL message and runner storage, with no
 * runner-to-runner transport. Processes share only the database: a message
 * for a run owned by another runner is written there and its owner reads it
 * within the poll interval; a runner that stops heart-beating loses its
 * shards after `failoverAfter`. Every setting is explicit — nothing is read
 * from the environment (effect's `ShardingConfig.layerFromEnv` would take a
 * platform's `PORT` for the runner's). The message storage is effect's own,
 * its reads kept to one statement text per poll interval on PostgreSQL
 * (`./messageStorage.ts`).
 *
 * @internal
 */
import { Duration, Effect, Layer, Option } from "effect"
import {
  ClusterWorkflowEngine,
  RunnerAddress,
  RunnerHealth,
  Runners,
  Sharding,
  ShardingConfig,
  SqlRunnerStorage
} from "effect/cluster"
import { Digest } from "effect/crypto"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { WorkflowEngine } from "effect/workflow"
import { InvalidInput } from "../../LoopError.ts"
import * as MessageStorage from "./messageStorage.ts"
import { UnflushedClient } from "./unflushedClient.ts"
import { readOptions } from "./readOptions.ts"

/** @internal the timing options every store takes */
export interface Timing {
  readonly pollInterval?: Duration.Input | undefined
  readonly failoverAfter?: Duration.Input | undefined
}

/** @internal a runner's identity in the store; no port is opened */
export type Role = { readonly _tag: "Runner"; readonly name: string } | { readonly _tag: "Client" }

const durationOf = (field: string, input: unknown, fallback: Duration.Duration, min: Duration.Duration, max: Duration.Duration) => {
  if (input === undefined) return Effect.succeed(fallback)
  const duration = Duration.fromInput(input as Duration.Input)
  return Option.isSome(duration) && Duration.isGreaterThanOrEqualTo(duration.value, min) &&
      Duration.isLessThanOrEqualTo(duration.value, max)
    ? Effect.succeed(duration.value)
    : Effect.fail(new InvalidInput({ field, rule: `a duration from ${Duration.format(min)} to ${Duration.format(max)}`, value: input }))
}

/** @internal a role's runner address, its name checked */
export const addressOf = (role: Role) => {
  if (role._tag === "Client") return Effect.succeed(Option.none())
  const name: unknown = role.name
  return typeof name === "string" && name.length >= 1 && name.length <= 200
    ? Effect.succeed(Option.some(RunnerAddress.make(name, 1)))
    : Effect.fail(new InvalidInput({ field: "name", rule: "a runner's name is a string of 1 to 200 characters, unique among the store's runners", value: name }))
}

/** @internal the engine's configuration, checked */
export const configOf = (timing: Timing, role: Role): Layer.Layer<ShardingConfig.ShardingConfig, InvalidInput> =>
  Layer.effect(
    ShardingConfig.ShardingConfig,
    Effect.gen(function*() {
      const { failoverAfter, pollInterval } = yield* readOptions(timing, ["pollInterval", "failoverAfter"])
      const poll = yield* durationOf("pollInterval", pollInterval, Duration.millis(250), Duration.millis(10), Duration.seconds(1))
      // Below a second, the shard locks' own refreshes time out and no runner keeps its runs.
      const failover = yield* durationOf("failoverAfter", failoverAfter, Duration.seconds(10), Duration.seconds(1), Duration.hours(1))
      const quarter = Duration.max(Duration.millis(100), Duration.divideUnsafe(failover, 4))
      return ShardingConfig.ShardingConfig.of({
        ...ShardingConfig.defaults,
        runnerAddress: yield* addressOf(role),
        entityMessagePollInterval: poll,
        entityReplyPollInterval: poll,
        shardLockExpiration: failover,
        shardLockRefreshInterval: quarter,
        refreshAssignmentsInterval: Duration.min(Duration.seconds(3), quarter)
      })
    })
  )

/** @internal what every durable store's layer provides besides its own services */
export type Engine = WorkflowEngine.WorkflowEngine | SqlClient

/**
 * effect's SQL runner storage (registrations, heartbeats, shard locks)
 * through the `UnflushedClient` when there is one: none of it needs to
 * outlive a crash of the database server (`./unflushedClient.ts`), and the
 * heartbeat before every recorded step would otherwise wait for a flush
 */
const runnerStorage = Layer.unwrap(Effect.map(
  Effect.serviceOption(UnflushedClient),
  Option.match({
    onNone: () => SqlRunnerStorage.layer,
    onSome: (unflushed) => Layer.provide(SqlRunnerStorage.layer, Layer.succeed(SqlClient, unflushed))
  })
))

/** @internal the engine over the `SqlClient`'s database for one role */
export const engine = (
  timing: Timing,
  role: Role
): Layer.Layer<WorkflowEngine.WorkflowEngine, SqlError | InvalidInput, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provide(Sharding.layer.pipe(
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(MessageStorage.layer),
      Layer.provide([runnerStorage, RunnerHealth.layerNoop]),
      Layer.provideMerge(configOf(timing, role))
    )),
    Layer.provide(Digest.layerWebCrypto)
  )

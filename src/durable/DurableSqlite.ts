/**
 * Durable runs on one SQLite file: the embedded store, no server, no
 * set-up. `runner` is a process that executes runs (it owns every shard;
 * one runner per file at a time — a restarted runner takes over at once);
 * `client` is a process that only starts runs, answers waiting calls and
 * polls results: its messages are written to the file and the runner picks
 * them up within `pollInterval`.
 *
 * @stability unstable (effect/cluster is)
 * @since 0.1.0
 */
import { Duration, Layer, Option } from "effect"
import type { ConfigError } from "effect/Config"
import { ClusterWorkflowEngine, RunnerAddress, RunnerHealth, Runners, Sharding, ShardingConfig, SingleRunner, SqlMessageStorage, SqlRunnerStorage } from "effect/cluster"
import { Digest } from "effect/crypto"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { WorkflowEngine } from "effect/workflow"
import * as Sqlite from "./SqliteClient.ts"
import { WaitingCalls, layerSql } from "./WaitingCalls.ts"

/**
 * Options of {@link runner} and {@link client}.
 *
 * @example
 * ```ts
 * import type { DurableSqlite } from "loopwork/durable"
 *
 * const options: DurableSqlite.Options = { filename: "runs.db", pollInterval: "250 millis" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends Sqlite.Options {
  /** How often the runner looks for messages written by other processes (default 250 ms). */
  readonly pollInterval?: Duration.Input | undefined
}

/** @internal what every process on the file provides */
export type Services = WorkflowEngine.WorkflowEngine | WaitingCalls | SqlClient

const configOf = (options: Options, address: Option.Option<RunnerAddress.RunnerAddress>) =>
  ShardingConfig.layer({
    runnerAddress: address,
    entityMessagePollInterval: options.pollInterval ?? Duration.millis(250),
    entityReplyPollInterval: options.pollInterval ?? Duration.millis(250)
  })

const store = (options: Options) => Layer.provideMerge(layerSql, Sqlite.layer(options))

/**
 * A process that executes durable runs stored in a SQLite file. Provide it
 * to the layers of your workflows (`DurableChain.layer`).
 *
 * @example
 * ```ts
 * import { DurableSqlite } from "loopwork/durable"
 *
 * const Engine = DurableSqlite.runner({ filename: "runs.db" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const runner = (options: Options): Layer.Layer<Services, SqlError | ConfigError> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql" }).pipe(
      Layer.provide(configOf(options, Option.some(RunnerAddress.make("loopwork-sqlite-runner", 1))))
    )),
    Layer.provideMerge(store(options)),
    Layer.provide(Digest.layerWebCrypto)
  )

/**
 * A process that starts durable runs, answers their waiting calls and
 * reads their results, but executes none: the runner does.
 *
 * @example
 * ```ts
 * import { DurableSqlite } from "loopwork/durable"
 *
 * const Client = DurableSqlite.client({ filename: "runs.db" })
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const client = (options: Options): Layer.Layer<Services, SqlError | ConfigError> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(Sharding.layer.pipe(
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(SqlMessageStorage.layer),
      Layer.provide([Layer.orDie(SqlRunnerStorage.layer), RunnerHealth.layerNoop]),
      Layer.provide(configOf(options, Option.none()))
    )),
    Layer.provideMerge(store(options)),
    Layer.provide(Digest.layerWebCrypto)
  )

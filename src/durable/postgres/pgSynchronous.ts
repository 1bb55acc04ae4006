/**
 * How DurablePostgres's commits reach the disk. `synchronous: "full"` (the
 * default) leaves PostgreSQL's own setting — every commit flushed before it
 * returns — except for a runner's writes whose loss in a crash of the
 * server is harmless (the claim stamps of its reads, its heartbeats,
 * registration and shard locks), which go through a small pool of their
 * own with `synchronous_commit = off` (`UnflushedClient`,
 * ../internal/unflushedClient.ts). `synchronous: "normal"` sets
 * `synchronous_commit = off` on every connection.
 *
 * @internal
 */
import { Effect, Layer } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "effect/sql/SqlError"
import { InvalidInput } from "../../LoopError.ts"
import { UnflushedClient } from "../internal/unflushedClient.ts"

const unflushed = <O extends PgClient.PgPoolConfig>(options: O): O => ({
  ...options,
  startupParameters: { ...options.startupParameters, synchronous_commit: "off" }
})

/**
 * @internal a runner's `UnflushedClient` (which the engine reads as
 * optional): three connections, one of which effect's runner storage keeps
 * for its shard locks; none with `synchronous: "normal"`, where no commit
 * waits for the flush
 */
export const layerUnflushed = (
  options: PgClient.PgPoolConfig & { readonly synchronous?: "full" | "normal" | undefined }
): Layer.Layer<never, SqlError> =>
  options.synchronous === "normal"
    ? Layer.empty
    : Layer.effect(UnflushedClient, PgClient.make({ ...unflushed(options), minConnections: 2, maxConnections: 3 })).pipe(
      Layer.provide(Reactivity.layer)
    )

/** @internal the pool options with the `synchronous` option applied, or an InvalidInput */
export const withSynchronous = <O extends PgClient.PgPoolConfig & { readonly synchronous?: "full" | "normal" | undefined }>(
  options: O
): Effect.Effect<O, InvalidInput> => {
  const synchronous: unknown = options.synchronous
  if (synchronous === undefined || synchronous === "full") return Effect.succeed(options)
  if (synchronous !== "normal") {
    return Effect.fail(new InvalidInput({ field: "synchronous", rule: "\"full\" (the default) or \"normal\"", value: synchronous }))
  }
  return Effect.succeed(unflushed(options))
}

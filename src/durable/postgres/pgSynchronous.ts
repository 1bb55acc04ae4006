/**
 * How DurablePostgres's commits reach the disk. `synchronous: "full"` (the
 * default) leaves PostgreSQL's own setting — every commit flushed before it
 * returns — except for the runner's reads of unprocessed messages, which go
 * through one connection of their own with `synchronous_commit = off`: all
 * such a read writes is its claim stamp, whose loss is harmless
 * (`ClaimClient`, ../internal/messageStorage.ts). `synchronous: "normal"`
 * sets `synchronous_commit = off` on every connection.
 *
 * @internal
 */
import { Effect, Layer } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "effect/sql/SqlError"
import { InvalidInput } from "../../LoopError.ts"
import { ClaimClient } from "../internal/messageStorage.ts"

const unflushed = <O extends PgClient.PgPoolConfig>(options: O): O => ({
  ...options,
  startupParameters: { ...options.startupParameters, synchronous_commit: "off" }
})

/**
 * @internal the connection of a runner's reads of unprocessed messages,
 * whose commits are not waited for, as the `ClaimClient` (which the storage
 * reads as optional); none with `synchronous: "normal"`, where no commit is
 */
export const layerClaims = (
  options: PgClient.PgPoolConfig & { readonly synchronous?: "full" | "normal" | undefined }
): Layer.Layer<never, SqlError> =>
  options.synchronous === "normal"
    ? Layer.empty
    : Layer.effect(ClaimClient, PgClient.make({ ...unflushed(options), minConnections: 1, maxConnections: 1 })).pipe(
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

/**
 * loopwork/durable/postgres: durable runs on PostgreSQL through
 * `@effect/sql-pg` (an optional peer dependency). Use it with
 * `loopwork/durable`'s `DurableChain`.
 *
 * @stability unstable (effect/workflow and effect/cluster are)
 * @since 0.1.0
 */

/** Durable runs on PostgreSQL: single, runner and client layers. @since 0.1.0 */
export * as DurablePostgres from "./DurablePostgres.ts"

/**
 * loopwork/durable: runs that survive crashes and restarts, on the engine
 * inside effect (`effect/workflow`, `effect/cluster`). `import "loopwork"`
 * loads none of it.
 *
 * @stability unstable (effect/workflow and effect/cluster are)
 * @since 0.1.0
 */

/** A loopwork run as an effect Workflow; answering its waiting calls from any process. @since 0.1.0 */
export * as DurableChain from "./DurableChain.ts"
/** An ensemble as a durable workflow, each task a child workflow. @since 0.1.0 */
export * as DurableEnsemble from "./DurableEnsemble.ts"
/** The failures of answering a durable run. @since 0.1.0 */
export * as DurableError from "./DurableError.ts"
/** What a durable run's workflow ends with. @since 0.1.0 */
export * as DurableResult from "./DurableResult.ts"
/** The calls durable runs wait on, readable from any process. @since 0.1.0 */
export * as WaitingCalls from "./WaitingCalls.ts"
/** Durable runs on one SQLite file: runner and client layers. @since 0.1.0 */
export * as DurableSqlite from "./DurableSqlite.ts"
/** An effect/sql SqlClient over Node's built-in node:sqlite. @since 0.1.0 */
export * as SqliteClient from "./SqliteClient.ts"

/**
 * Errors of effect's workflow engine, its storage and the runners'
 * connections, told apart from a workflow's own defects. The engine dies
 * with them (its calls are `orDie`), so a body sees them as defects, like
 * a child workflow's defect read back as its result. What tells them apart
 * is where they are: an engine error is the instance the engine made in
 * this process, with its type id; a child's defect read back from storage is
 * decoded as a plain `Error`, which has none.
 *
 * @internal
 */

/** The type ids of effect's cluster, SQL and RPC errors. */
const engineErrorIds: ReadonlyArray<string> = ["~effect/cluster/ClusterError", "~effect/sql/SqlError", "~effect/rpc/RpcClientError"]

/** @internal whether `defect` is an error of the engine or its storage made in this process */
export const isEngineError = (defect: unknown): boolean =>
  typeof defect === "object" && defect !== null && engineErrorIds.some((id) => id in defect)

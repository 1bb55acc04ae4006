/**
 * effect's SQL message storage on PostgreSQL, its saving of a reply in one
 * statement instead of a transaction of four.
 *
 * effect saves a reply as `BEGIN`, an `UPDATE` of the request (processed,
 * last reply), an `INSERT` of the reply, `COMMIT`: four round trips to the
 * server, one after another, at every recorded step. Here the same `UPDATE`
 * and `INSERT` go as one statement (a data-modifying `WITH`), which
 * PostgreSQL runs in one transaction of its own: both rows are written or
 * neither is, as before — same rows, same values, same constraints (a second
 * reply to a request fails on `UNIQUE (request_id, kind)` and leaves the
 * request untouched, as effect's rolled-back transaction does). The two
 * parts touch different tables, so the order between them does not matter.
 *
 * Inside a transaction already open (an activity annotated
 * `ClusterSchema.WithTransaction`, whose reply commits with its body) effect's
 * own statements run instead: there effect nests them in a savepoint, and
 * that stays as it is. On any other dialect the driver is effect's.
 *
 * @internal
 */
import { Effect, Option } from "effect"
import { ClusterError } from "effect/cluster"
import type { MessageStorage, Reply } from "effect/cluster"
import type { SqlClient } from "effect/sql/SqlClient"

/** effect's numbers for a reply's kind: a final reply is 0, a chunk of a stream has none */
const finalReply = 0

/** @internal the reply's row, as effect writes it */
export const replyRow = (reply: Reply.Encoded) => ({
  id: reply.id,
  kind: reply._tag === "WithExit" ? finalReply : null,
  request_id: reply.requestId,
  payload: reply._tag === "WithExit" ? JSON.stringify(reply.exit) : JSON.stringify(reply.values),
  sequence: reply._tag === "Chunk" ? reply.sequence : null
})

/**
 * @internal `encoded` whose replies outside a transaction are saved in one
 * statement on PostgreSQL (`prefix` is effect's table prefix, `cluster` by
 * default)
 */
export const withOneStatementReplies = (
  encoded: MessageStorage.Encoded,
  client: SqlClient,
  prefix = "cluster"
): MessageStorage.Encoded => {
  if (client.onDialectOrElse({ pg: () => false, orElse: () => true })) return encoded
  const sql = client.withoutTransforms()
  const messages = sql(`${prefix}_messages`)
  const replies = sql(`${prefix}_replies`)
  const oneStatement = (reply: Reply.Encoded) => {
    const row = replyRow(reply)
    const update = reply._tag === "Chunk"
      ? sql`UPDATE ${messages} SET last_reply_id = ${reply.id} WHERE id = ${reply.requestId}`
      : sql`UPDATE ${messages} SET processed = TRUE, last_reply_id = ${reply.id} WHERE request_id = ${reply.requestId}`
    return sql`WITH request AS (${update}) INSERT INTO ${replies} ${sql.insert(row)}`.pipe(
      Effect.asVoid,
      ClusterError.PersistenceError.refail,
      Effect.withTracerEnabled(false)
    )
  }
  return {
    ...encoded,
    saveReply: (reply) =>
      Effect.flatMap(
        Effect.serviceOption(client.transactionService),
        Option.match({ onNone: () => oneStatement(reply), onSome: () => encoded.saveReply(reply) })
      )
  }
}

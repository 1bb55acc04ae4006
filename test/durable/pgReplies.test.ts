/**
 * On PostgreSQL the durable engine saves a reply in one statement instead
 * of effect's transaction of four (BEGIN, UPDATE, INSERT, COMMIT): the rows
 * are the ones effect writes, both or neither are written, and inside a
 * transaction already open effect's own statements run.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlMessageStorage } from "effect/cluster"
import type { MessageStorage } from "effect/cluster"
import { Digest } from "effect/crypto"
import { SqlClient } from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { withOneStatementReplies } from "../../src/durable/internal/messageStoragePg.ts"
import { SqliteClient } from "../../src/durable/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { requestEnvelope } from "./support/envelopes.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const request = (requestId: string) => requestEnvelope(requestId)

const final = (id: string, requestId: string, value: string) =>
  ({ _tag: "WithExit", id, requestId, exit: { _tag: "Success", value } }) as const

/** effect's driver and ours over one fresh PostgreSQL database, its tables migrated */
const withDrivers = <A, E>(use: (drivers: { effect: MessageStorage.Encoded; ours: MessageStorage.Encoded; sql: SqlClient }) => Effect.Effect<A, E, SqlClient>) =>
  Effect.gen(function*() {
    const url = Redacted.make(yield* Effect.promise(database))
    return yield* Effect.gen(function*() {
      yield* Layer.build(SqlMessageStorage.layerMigrations({}))
      const sql = yield* SqlClient
      const effect = yield* SqlMessageStorage.makeEncodedStorage({})
      return yield* use({ effect, ours: withOneStatementReplies(effect, sql), sql })
    }).pipe(Effect.provide(Layer.mergeAll(PgClient.layer({ url }), Digest.layerWebCrypto)), Effect.scoped)
  })

const rowsOf = (sql: SqlClient, requestId: string) =>
  Effect.all({
    message: sql<{ processed: boolean; last_reply_id: string | null }>`SELECT processed, last_reply_id::text FROM cluster_messages WHERE id = ${requestId}`,
    replies: sql<Record<string, unknown>>`SELECT id::text, kind, payload, sequence, acked FROM cluster_replies WHERE request_id = ${requestId} ORDER BY rowid`
  })

describe("a reply saved in one statement on PostgreSQL", () => {
  it.effect("writes the rows effect's transaction writes: the reply, and its request processed with it as last reply", () =>
    withDrivers(({ effect, ours, sql }) =>
      Effect.gen(function*() {
        yield* effect.saveEnvelope(request("1"))
        yield* ours.saveEnvelope(request("2"))
        yield* effect.saveReply(final("11", "1", "done"))
        yield* ours.saveReply(final("12", "2", "done"))
        const byEffect = yield* rowsOf(sql, "1")
        const byOurs = yield* rowsOf(sql, "2")
        expect(byOurs.message).toEqual([{ processed: true, last_reply_id: "12" }])
        expect(byEffect.message).toEqual([{ processed: true, last_reply_id: "11" }])
        expect(byOurs.replies).toEqual([{ ...byEffect.replies[0], id: "12" }])
        expect(yield* ours.repliesFor(["2"])).toEqual([final("12", "2", "done")])
      })))

  it.effect("a chunk of a stream: the request is not processed, its last reply is the chunk", () =>
    withDrivers(({ effect, ours, sql }) =>
      Effect.gen(function*() {
        const chunk = (id: string, requestId: string) => ({ _tag: "Chunk", id, requestId, sequence: 0, values: [1, 2] }) as const
        yield* effect.saveEnvelope(request("1"))
        yield* ours.saveEnvelope(request("2"))
        yield* effect.saveReply(chunk("11", "1"))
        yield* ours.saveReply(chunk("12", "2"))
        const byEffect = yield* rowsOf(sql, "1")
        const byOurs = yield* rowsOf(sql, "2")
        expect(byOurs.message).toEqual([{ processed: false, last_reply_id: "12" }])
        expect(byOurs.replies).toEqual([{ ...byEffect.replies[0], id: "12" }])
      })))

  it.effect("a second final reply to a request fails and changes nothing: both rows or neither", () =>
    withDrivers(({ ours, sql }) =>
      Effect.gen(function*() {
        yield* ours.saveEnvelope(request("1"))
        yield* ours.saveReply(final("11", "1", "first"))
        const error = yield* Effect.flip(ours.saveReply(final("12", "1", "second")))
        expect(error._tag).toBe("PersistenceError")
        const rows = yield* rowsOf(sql, "1")
        expect(rows.message).toEqual([{ processed: true, last_reply_id: "11" }])
        expect(rows.replies.map((r) => r.id)).toEqual(["11"])
      })))

  it.effect("inside a transaction already open, effect's own statements save the reply (and commit with it)", () =>
    withDrivers(({ effect, sql }) =>
      Effect.gen(function*() {
        const used: Array<string> = []
        const spied: MessageStorage.Encoded = {
          ...effect,
          saveReply: (reply) => Effect.andThen(Effect.sync(() => used.push(reply.id)), effect.saveReply(reply))
        }
        const ours = withOneStatementReplies(spied, sql)
        yield* ours.saveEnvelope(request("1"))
        yield* ours.saveEnvelope(request("2"))
        yield* ours.saveReply(final("11", "1", "outside"))
        yield* sql.withTransaction(ours.saveReply(final("12", "2", "inside")))
        expect(used).toEqual(["12"])
        expect((yield* rowsOf(sql, "2")).message).toEqual([{ processed: true, last_reply_id: "12" }])
        // rolled back with the transaction around it
        yield* ours.saveEnvelope(request("3"))
        yield* Effect.flip(sql.withTransaction(Effect.andThen(ours.saveReply(final("13", "3", "rolled back")), Effect.fail("abort"))))
        expect(yield* rowsOf(sql, "3")).toEqual({ message: [{ processed: false, last_reply_id: null }], replies: [] })
      })))

  it.effect("on SQLite the driver is effect's, unchanged", () =>
    Effect.gen(function*() {
      const effect = { saveReply: () => Effect.void } as unknown as MessageStorage.Encoded
      const sql = yield* SqlClient
      expect(withOneStatementReplies(effect, sql)).toBe(effect)
    }).pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:" }))))
})

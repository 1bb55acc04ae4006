/**
 * The calls durable runs are waiting on — for a human's approval or for an
 * external result — kept where any process that shares the store can read
 * them. A run posts each call once, before it waits; `DurableChain.decide`
 * and `DurableChain.supply` read them to refuse answers for calls that are
 * not waiting, and claim a call before answering it, so the first answer
 * wins and a different second one is refused.
 *
 * A call can wait more than once: a call retried with new arguments (a
 * repair function's `retryWith`) waits for an approval of those, and an
 * external tool that needs approval waits for its result once approved.
 * Posting a later wait replaces the call's row, unanswered. A wait is
 * numbered among the call's waits of its kind (`wait`, absent for the
 * first), and an answer claims only the wait of the kind and number it was
 * given for.
 *
 * A stop request (`DurableChain.stop`) is kept there too.
 *
 * Two stores: `layerMemory` (one process, for tests) and `layerSql`, a
 * table `loopwork_waiting_calls` in the database of any effect/sql
 * `SqlClient` (SQLite or PostgreSQL), created if missing. A store of your
 * own implements every method, `claimAll` (all or none, as one
 * transaction) included: `DurableChain.decide` and `supply` claim with it.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { inCallIdOrder, isList, requestOf } from "./internal/claimRequests.ts"
import { createTable } from "./internal/waitingTable.ts"
import { thrownMessage } from "../internal/errorText.ts"
import { waitOf } from "./internal/waitNumber.ts"

/**
 * A call a durable run waits on.
 *
 * @example
 * ```ts
 * import { WaitingCalls } from "loopwork/durable"
 *
 * const call: WaitingCalls.WaitingCall = {
 *   callId: "call_1", kind: "approval", tool: "refund", params: { amount: 120 }
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const WaitingCall = Schema.Struct({
  callId: Schema.String,
  kind: Schema.Literals(["approval", "result"]),
  tool: Schema.String,
  params: Schema.Unknown,
  /** Which wait of its kind this is for the call, from 2 on (absent for the first): a call retried with new arguments waits again. */
  wait: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(2)))
}).annotate({ identifier: "WaitingCall" })

/**
 * @category models
 * @since 0.1.0
 */
export interface WaitingCall extends Schema.Schema.Type<typeof WaitingCall> {}

/**
 * What claiming a call for an answer found: the answer is the call's
 * (`answered`: it was waiting, or already had this very answer, so
 * answering again is harmless); another answer came first (`taken`); no
 * such call waits in this execution (`unknown`).
 *
 * @example
 * ```ts
 * import type { WaitingCalls } from "loopwork/durable"
 *
 * const first: WaitingCalls.Claim = "answered"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Claim = "answered" | "taken" | "unknown"

/**
 * One answer to claim with {@link WaitingCalls}' `claimAll`: the call, its
 * answer (a JSON text) and the wait of the call it is for (1 for the first).
 *
 * @example
 * ```ts
 * import type { WaitingCalls } from "loopwork/durable"
 *
 * const approve: WaitingCalls.ClaimRequest = { callId: "call_1", answer: '{"_tag":"Approve"}', wait: 1 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ClaimRequest {
  readonly callId: string
  readonly answer: string
  readonly wait: number
}

/**
 * What claiming several answers at once found: `undefined` when every one
 * was claimed, or one that could not be, and why; then none of them was
 * written. That is the first request, in the order given, that is not a
 * call id, an answer text and a wait number (`unknown`, with its call id
 * when it has one, else `""`); otherwise the first, in call id order, that
 * was `taken` or `unknown`.
 *
 * @example
 * ```ts
 * import type { WaitingCalls } from "loopwork/durable"
 *
 * const refused: WaitingCalls.Refused = { callId: "call_1", claim: "taken" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Refused {
  readonly callId: string
  readonly claim: Exclude<Claim, "answered">
}

/**
 * The store of waiting calls.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WaitingCalls } from "loopwork/durable"
 *
 * const list = Effect.flatMap(Effect.service(WaitingCalls.WaitingCalls), (store) => store.list("execution-id"))
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class WaitingCalls extends Context.Service<WaitingCalls, {
  /**
   * Records that `executionId` waits on `call` (once: posting it again
   * changes nothing); a later wait of the call (a higher `wait`, or another
   * kind) replaces its row, unanswered.
   */
  readonly post: (executionId: string, call: WaitingCall) => Effect.Effect<void, SqlError>
  /** The calls `executionId` waits on that have no answer yet, in the order they were posted. */
  readonly list: (executionId: string) => Effect.Effect<ReadonlyArray<WaitingCall>, SqlError>
  /** Every call `executionId` posted, answered or not, in the order they were posted. */
  readonly posted: (executionId: string) => Effect.Effect<ReadonlyArray<WaitingCall>, SqlError>
  /** The answer (a JSON text) the latest wait of a call of `executionId` was given: `undefined` while it waits, `null` if no such call was posted. */
  readonly answerOf: (executionId: string, callId: string) => Effect.Effect<string | undefined | null, SqlError>
  /**
   * Claims the call's wait of `kind` numbered `wait` (1 for the first) for
   * `answer` (a JSON text): the first answer wins, and a wait the call has
   * moved past (another number, or another kind) is `taken`.
   */
  readonly claim: (
    executionId: string,
    callId: string,
    answer: string,
    wait: number,
    kind: WaitingCall["kind"]
  ) => Effect.Effect<Claim, SqlError>
  /**
   * Claims the waits of `kind` of several calls of `executionId`, all or
   * none: when one cannot be claimed (`taken` or `unknown`, as `claim`
   * says), none is written and the first such one (in call id order) is
   * returned. One human's decision on several calls is then never split
   * with another's made at the same moment. A request that is not a call
   * id, an answer text and a wait number is refused as `unknown`.
   */
  readonly claimAll: (
    executionId: string,
    kind: WaitingCall["kind"],
    claims: ReadonlyArray<ClaimRequest>
  ) => Effect.Effect<Refused | undefined, SqlError>
  /** Records that `executionId` is asked to stop (once: asking again changes nothing). */
  readonly requestStop: (executionId: string) => Effect.Effect<void, SqlError>
  /** Whether `executionId` was asked to stop. */
  readonly stopRequested: (executionId: string) => Effect.Effect<boolean, SqlError>
}>()("loopwork/durable/WaitingCalls") {}

interface Row {
  readonly call: WaitingCall
  answer: string | undefined
}

/**
 * Waiting calls in this process's memory: for tests and the memory engine.
 * Not durable.
 *
 * @example
 * ```ts
 * import { WaitingCalls } from "loopwork/durable"
 *
 * const store = WaitingCalls.layerMemory
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<WaitingCalls> = Layer.sync(WaitingCalls, () => {
  const executions = new Map<string, Map<string, Row>>()
  const stops = new Set<string>()
  const rowsOf = (executionId: string) => {
    let rows = executions.get(executionId)
    if (rows === undefined) executions.set(executionId, rows = new Map())
    return rows
  }
  return {
    post: (executionId, call) =>
      Effect.sync(() => {
        const rows = rowsOf(executionId)
        const row = rows.get(call.callId)
        if (row === undefined) rows.set(call.callId, { call, answer: undefined })
        else if (waitOf(row.call) < waitOf(call) || row.call.kind !== call.kind) {
          // Later in the posting order, as a new row would be.
          rows.delete(call.callId)
          rows.set(call.callId, { call, answer: undefined })
        }
      }),
    list: (executionId) =>
      Effect.sync(() => [...rowsOf(executionId).values()].filter((row) => row.answer === undefined).map((row) => row.call)),
    posted: (executionId) => Effect.sync(() => [...rowsOf(executionId).values()].map((row) => row.call)),
    answerOf: (executionId, callId) =>
      Effect.sync(() => {
        const row = rowsOf(executionId).get(callId)
        return row === undefined ? null : row.answer
      }),
    claim: (executionId, callId, answer, wait, kind) =>
      Effect.sync((): Claim => {
        const row = rowsOf(executionId).get(callId)
        if (row === undefined || typeof answer !== "string") return "unknown"
        if (waitOf(row.call) !== wait || row.call.kind !== kind) return "taken"
        if (row.answer === undefined) row.answer = answer
        return row.answer === answer ? "answered" : "taken"
      }),
    claimAll: (executionId, kind, claims) =>
      Effect.sync((): Refused | undefined => {
        const rows = rowsOf(executionId)
        const requests = inCallIdOrder(claims)
        if (!isList(requests)) return requests
        // Checked first, written only when every one can be.
        const planned = new Map<Row, string>()
        for (const { callId, answer, wait } of requests) {
          const row = rows.get(callId)
          if (row === undefined) return { callId, claim: "unknown" }
          const current = row.answer ?? planned.get(row)
          if (waitOf(row.call) !== wait || row.call.kind !== kind || (current !== undefined && current !== answer)) {
            return { callId, claim: "taken" }
          }
          planned.set(row, answer)
        }
        for (const [row, answer] of planned) row.answer = answer
        return undefined
      }),
    requestStop: (executionId) => Effect.sync(() => void stops.add(executionId)),
    stopRequested: (executionId) => Effect.sync(() => stops.has(executionId))
  }
})

const Stored = Schema.Struct({
  kind: Schema.Literals(["approval", "result"]),
  tool: Schema.String,
  params: Schema.String,
  wait: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
})
const decodeStored = Schema.decodeUnknownOption(Stored)

/** Stored arguments: JSON written by `post`; text that is not (a tampered row) is shown as it is. */
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

interface StoredRow {
  readonly call_id: string
  readonly kind: string
  readonly tool: string
  readonly params: string
  readonly wait: unknown
}

/** The calls of stored rows; a row that is not one `post` writes (a tampered table) is left out. */
const callsOf = (rows: ReadonlyArray<StoredRow>): ReadonlyArray<WaitingCall> =>
  rows.flatMap((row): Array<WaitingCall> => {
    const stored = decodeStored(row)
    if (stored._tag === "None" || typeof row.call_id !== "string") return []
    const call: WaitingCall = { callId: row.call_id, kind: stored.value.kind, tool: stored.value.tool, params: parsed(stored.value.params) }
    return [stored.value.wait >= 2 ? { ...call, wait: stored.value.wait } : call]
  })

/**
 * Claims one call's wait in a transaction the caller opens: the answer is
 * written only to the wait given, and only if it has none; then what the row
 * holds says whether this answer is the call's.
 */
const claimRow = (sql: SqlClient, executionId: string, kind: WaitingCall["kind"], { answer, callId, wait }: ClaimRequest) =>
  Effect.gen(function*() {
    yield* sql`UPDATE loopwork_waiting_calls SET answer = ${answer}
      WHERE execution_id = ${executionId} AND call_id = ${callId} AND wait = ${wait} AND kind = ${kind} AND answer IS NULL`
    const rows = yield* sql<{ answer: string | null; wait: unknown; kind: string }>`SELECT answer, wait, kind FROM loopwork_waiting_calls
      WHERE execution_id = ${executionId} AND call_id = ${callId}`
    if (rows.length === 0) return "unknown" as const
    const row = rows[0]
    return Number(row.wait) === wait && row.kind === kind && row.answer === answer ? "answered" as const : "taken" as const
  })

/** A refusal inside `claimAll`'s transaction: it fails the transaction, which undoes the claims before it. */
class Refusal {
  readonly refused: Refused
  constructor(refused: Refused) {
    this.refused = refused
  }
}

/** Stop requests, in the same table. */
const stopsIn = (sql: SqlClient): Pick<WaitingCalls["Service"], "requestStop" | "stopRequested"> => ({
  // A stop request is a row of its own kind, under the empty call id (no call has it).
  requestStop: (executionId) =>
    sql`INSERT INTO loopwork_waiting_calls (execution_id, call_id, position, kind, tool, params, answer)
      VALUES (${executionId}, '', -1, 'stop', '', 'null', 'stop')
      ON CONFLICT (execution_id, call_id) DO NOTHING`.pipe(Effect.asVoid),
  stopRequested: (executionId) =>
    Effect.map(
      sql<{ kind: string }>`SELECT kind FROM loopwork_waiting_calls WHERE execution_id = ${executionId} AND call_id = ''`,
      (rows) => rows.some((row) => row.kind === "stop")
    )
})

/** The arguments' JSON text, or why they have none (a cycle, a BigInt: what JSON cannot write). */
const paramsText = (params: unknown): string | SqlError => {
  try {
    return JSON.stringify(params) ?? "null"
  } catch (error) {
    return new SqlError({ reason: new UnknownError({ cause: error, message: `The call's arguments cannot be written as JSON (${thrownMessage(error)})` }) })
  }
}

/**
 * Waiting calls in a SQL table (`loopwork_waiting_calls`, created if missing)
 * of the `SqlClient`'s database: shared by every process that uses it.
 *
 * @example
 * ```ts
 * import { WaitingCalls } from "loopwork/durable"
 *
 * const store = WaitingCalls.layerSql // needs an effect/sql SqlClient
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<WaitingCalls, SqlError, SqlClient> = Layer.effect(
  WaitingCalls,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* createTable(sql)
    return {
      post: (executionId, call) => Effect.suspend(() => {
        const params = paramsText(call.params)
        if (typeof params !== "string") return Effect.fail(params)
        const wait = waitOf(call)
        const next = sql`(SELECT COALESCE(MAX(position), -1) + 1 FROM loopwork_waiting_calls WHERE execution_id = ${executionId})`
        const insert = sql`INSERT INTO loopwork_waiting_calls (execution_id, call_id, position, kind, tool, params, wait)
          SELECT ${executionId}, ${call.callId}, ${next}, ${call.kind}, ${call.tool}, ${params}, ${wait}
          WHERE NOT EXISTS (
            SELECT 1 FROM loopwork_waiting_calls WHERE execution_id = ${executionId} AND call_id = ${call.callId}
          )`
        // A later wait replaces an earlier one's row; posting the same wait again changes nothing.
        const replace = sql`UPDATE loopwork_waiting_calls
          SET position = ${next}, kind = ${call.kind}, tool = ${call.tool}, params = ${params}, answer = NULL, wait = ${wait}
          WHERE execution_id = ${executionId} AND call_id = ${call.callId} AND (wait < ${wait} OR kind <> ${call.kind})`
        return Effect.asVoid(Effect.andThen(insert, replace))
      }),
      list: (executionId) =>
        Effect.map(
          sql<StoredRow>`SELECT call_id, kind, tool, params, wait
            FROM loopwork_waiting_calls WHERE execution_id = ${executionId} AND answer IS NULL ORDER BY position`,
          callsOf
        ),
      posted: (executionId) =>
        Effect.map(
          sql<StoredRow>`SELECT call_id, kind, tool, params, wait
            FROM loopwork_waiting_calls WHERE execution_id = ${executionId} AND call_id <> '' ORDER BY position`,
          callsOf
        ),
      answerOf: (executionId, callId) =>
        Effect.map(
          sql<{ answer: string | null }>`SELECT answer FROM loopwork_waiting_calls
            WHERE execution_id = ${executionId} AND call_id = ${callId}`,
          (rows) => rows.length === 0 ? null : typeof rows[0].answer === "string" ? rows[0].answer : undefined
        ),
      claim: (executionId, callId, answer, wait, kind) => {
        // From JavaScript anything may come: what is not a request claims nothing (as claimAll's requests).
        const request = requestOf({ callId, answer, wait })
        return request === undefined ? Effect.succeed("unknown") : sql.withTransaction(claimRow(sql, executionId, kind, request))
      },
      claimAll: (executionId, kind, claims) =>
        Effect.suspend(() => {
          // In one order in every process, so two transactions claiming the same calls never wait on each other.
          const requests = inCallIdOrder(claims)
          if (!isList(requests)) return Effect.succeed(requests)
          const all = Effect.forEach(requests, (request) =>
            Effect.flatMap(claimRow(sql, executionId, kind, request), (claim) =>
              claim === "answered" ? Effect.void : Effect.fail(new Refusal({ callId: request.callId, claim }))), { discard: true })
          // A refusal fails the transaction, which undoes the claims made before it.
          return Effect.catch(
            Effect.as(sql.withTransaction(all), undefined),
            (error) => error instanceof Refusal ? Effect.succeed(error.refused) : Effect.fail(error)
          )
        }),
      ...stopsIn(sql)
    }
  })
)

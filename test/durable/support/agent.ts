/**
 * The durable agent the crash tests run in real processes (test/durable/*.test.ts):
 * a chain whose model (replay-safe: each reply is chosen from the request, not a
 * counter) asks for lookup c1 and charge c2, then notify c3 (which needs approval
 * when APPROVAL=1), then answers. Every handler appends `<ticket>/<callId> <pid>` to
 * EFFECTS, the side effect whose count the tests assert.
 *
 * STORE=sqlite (default; <db> is a file) or STORE=postgres (<db> is a URL).
 *
 *   agent.ts runner <db> <effects>    executes ticket T1, prints RESULT <json>
 *     RUN_UNTIL_WAITING=1: starts the run and dies by SIGKILL once it waits for an approval
 *     RUNNER=<name>: one of several runners (postgres); prints READY, then serves until killed
 *   agent.ts start <db> <n>           a client process: starts T1…Tn, prints RESULTS <json> when all end
 *   agent.ts decide <db> <callId> <approve|reject>
 *   agent.ts stop <db>                asks T1 to stop, prints DECIDED stopped
 *   agent.ts pending <db>             prints PENDING <call ids of T1 waiting for an answer>
 *
 * Fault hook, KILL_AT (a SIGKILL at that exact point, the first time it is reached):
 * model:<n> (inside the n-th model call), tool:<id>:before / tool:<id>:after (inside
 * the handler, around its side effect).
 * SQL_EFFECTS=1: charge's side effect is a row of table agent_effects in the store's database
 *   (`agent.ts sqlEffects <db>` prints COUNTS <json>); TRANSACTIONAL=1: charge is a transactional tool.
 * VERSION=<n>: the workflow's version (a deploy that raised it).
 * IDEMPOTENT=1: handlers skip a side effect their key already made (the call id as key).
 * OUTPUT=1: the workflow has an `output` Schema with one re-ask; the model answers wrongly before and
 *   after the first round's tools, so the run fails with OutputInvalid (a replay must count both).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, Mode, StructuredOutput } from "../../../src/index.ts"
import { ScriptedModel } from "../../../src/testing/index.ts"
import { DurableChain } from "../../../src/durable/index.ts"
import { engineFor, print, runnerName, settled } from "./stores.ts"
import { SqlClient } from "effect/sql/SqlClient"

const [role = "", db = "", third = "", fourth = ""] = process.argv.slice(2)
const killAt = process.env.KILL_AT ?? ""
const kill = (point: string) => {
  if (point === killAt) process.kill(process.pid, "SIGKILL")
}

const Params = Schema.Struct({ ticket: Schema.String })
const Lookup = Tool.make("lookup", { parameters: Params, success: Schema.String })
const Charge = Tool.make("charge", { parameters: Schema.Struct({ ticket: Schema.String, amount: Schema.Number }), success: Schema.String })
const Notify = Tool.make("notify", { parameters: Params, success: Schema.String, needsApproval: process.env.APPROVAL === "1" })
const toolkit = Toolkit.make(Lookup, Charge, Notify)

const effect = (ticket: string, id: string | undefined) =>
  Effect.sync(() => {
    const key = `${ticket}/${id ?? "?"}`
    kill(`tool:${id}:before`)
    const done = existsSync(third) ? readFileSync(third, "utf8").split("\n").map((line) => line.split(" ")[0]) : []
    if (!(process.env.IDEMPOTENT === "1" && done.includes(key))) appendFileSync(third, `${key} ${process.pid}\n`)
    kill(`tool:${id}:after`)
    return `${id} done`
  })

/** SQL_EFFECTS=1: charge's side effect is a row in the store's own database (table agent_effects), not a line. */
const sqlEffect = (sql: SqlClient, ticket: string, id: string | undefined) =>
  Effect.gen(function*() {
    kill(`tool:${id}:before`)
    yield* Effect.orDie(sql`INSERT INTO agent_effects (effect) VALUES (${`${ticket}/${id ?? "?"}`})`)
    kill(`tool:${id}:after`)
    return `${id} done`
  })

const handlers = toolkit.toLayer(Effect.gen(function*() {
  const sql = yield* SqlClient
  // Two runners starting together on a fresh PostgreSQL database race on CREATE TABLE IF NOT EXISTS (a
  // unique violation in pg_type: "agent_effects already exists"); the one that loses finds the table made
  // when it tries again. Left to fail, it ended that runner before READY, and the test waited forever.
  yield* Effect.orDie(Effect.retry(sql`CREATE TABLE IF NOT EXISTS agent_effects (effect VARCHAR(64) NOT NULL)`, { times: 3 }))
  return {
    lookup: ({ ticket }, { toolCallId }) => Effect.as(effect(ticket, toolCallId), `order of ${ticket} shipped`),
    charge: ({ ticket }, { toolCallId }) =>
      process.env.SQL_EFFECTS === "1" ? sqlEffect(sql, ticket, toolCallId) : effect(ticket, toolCallId),
    notify: ({ ticket }, { toolCallId }) => effect(ticket, toolCallId)
  }
}))

/** OUTPUT=1: a wrong final answer, the first round's tools, a wrong answer again, then (never reached) a right one. */
const withOutput = process.env.OUTPUT === "1"
const finalAnswer = (id: string, approved: unknown) => ({ toolCalls: [{ id, name: "final_answer", params: { approved } }] })
const outputTurns = [finalAnswer("f1", "yes"), undefined, finalAnswer("f2", "no"), finalAnswer("f3", true)]

const model = ScriptedModel.make([
  (request) => {
    const assistantTurns = request.prompt.content.filter((message) => message.role === "assistant").length
    const first = request.prompt.content.find((message) => message.role === "user")
    const ticket = /ticket ([A-Za-z0-9]+)/.exec(JSON.stringify(first?.content ?? ""))?.[1] ?? "?"
    kill(`model:${assistantTurns + 1}`)
    const scripted = withOutput ? outputTurns[assistantTurns] : undefined
    if (scripted !== undefined) return scripted
    const turns = withOutput && assistantTurns === 1 ? 0 : assistantTurns
    if (turns === 0) {
      return {
        toolCalls: [{ id: "c1", name: "lookup", params: { ticket } }, { id: "c2", name: "charge", params: { ticket, amount: 20 } }]
      }
    }
    if (turns === 1) return { toolCalls: [{ id: "c3", name: "notify", params: { ticket } }] }
    return { text: `Charged 20 for ${ticket} and told the customer.` }
  }
], { repeat: true })

const Ticket = DurableChain.workflow("Ticket", {
  input: Schema.Struct({ ticket: Schema.String }),
  idempotencyKey: ({ ticket }) => ticket,
  toolkit,
  chain: ({ ticket }) => Chain.make({ user: `Handle ticket ${ticket}`, toolkit }),
  mode: Mode.whileNeedsResponse,
  version: Number(process.env.VERSION ?? "1"),
  transactional: process.env.TRANSACTIONAL === "1" ? ["charge"] : [],
  // One call at a time, so "between two calls of a round" is an exact point.
  concurrency: 1,
  ...(withOutput ? { output: StructuredOutput.make(Schema.Struct({ approved: Schema.Boolean }), { retries: 1 }) } : {})
})

const engine = engineFor(role === "runner" ? "runner" : "client", db)

const live = DurableChain.layer(Ticket).pipe(Layer.provide([model.layer, handlers]), Layer.provideMerge(engine))


const resultOf = (ticket: string) =>
  Effect.map(Effect.result(Ticket.execute({ ticket })), (result) =>
    result._tag === "Success" ? result.success : { failure: String(result.failure) })


const programs: Record<string, Effect.Effect<void, unknown, Layer.Success<typeof live>>> = {
  runner: runnerName !== undefined
    ? Effect.andThen(Effect.andThen(settled, print("READY")), Effect.never)
    : process.env.RUN_UNTIL_WAITING === "1"
    ? Effect.gen(function*() {
      const id = yield* Ticket.execute({ ticket: "T1" }, { discard: true })
      while ((yield* DurableChain.pending(Ticket, id)).length === 0) yield* Effect.sleep("20 millis")
      yield* print("RESULT waiting")
      process.kill(process.pid, "SIGKILL")
    })
    : Effect.flatMap(resultOf("T1"), (result) => print(`RESULT ${JSON.stringify(result)}`)),
  start: Effect.gen(function*() {
    const tickets = Array.from({ length: Number(third) }, (_, i) => `T${i + 1}`)
    const results = yield* Effect.forEach(tickets, resultOf, { concurrency: "unbounded" })
    yield* print(`RESULTS ${JSON.stringify(results)}`)
  }),
  decide: Effect.gen(function*() {
    const id = yield* Ticket.executionId({ ticket: "T1" })
    const decision = fourth === "reject" ? Approval.reject("no") : Approval.approve
    const result = yield* Effect.result(DurableChain.decide(Ticket, id, { [third]: decision }))
    yield* print(`DECIDED ${result._tag === "Success" ? "ok" : result.failure._tag}`)
  }),
  stop: Effect.gen(function*() {
    yield* DurableChain.stop(Ticket, yield* Ticket.executionId({ ticket: "T1" }))
    yield* print("DECIDED stopped")
  }),
  sqlEffects: Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ effect: string }>`SELECT effect FROM agent_effects`
    yield* print(`COUNTS ${JSON.stringify(rows.map((row) => row.effect))}`)
  }),
  pending: Effect.gen(function*() {
    const waiting = yield* DurableChain.pending(Ticket, yield* Ticket.executionId({ ticket: "T1" }))
    yield* print(`PENDING ${JSON.stringify(waiting.map((call) => call.callId))}`)
  })
}

const program = programs[role]
if (program !== undefined && Object.hasOwn(programs, role)) {
  Effect.runPromise(Effect.provide(program, live)).then(() => process.exit(0), (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  })
}

/**
 * The durable agent the crash tests run in real processes (test/durable/*.test.ts):
 * a chain whose model (replay-safe: each reply is chosen from the request, not a
 * counter) asks for lookup c1 and charge c2, then notify c3 (which needs approval
 * when APPROVAL=1), then answers. Every handler appends its call id to EFFECTS, the
 * side effect whose count the tests assert.
 *
 *   node --conditions=loopwork-source agent.ts runner <db> <effects>   executes ticket T1, prints RESULT <json>
 *   RUN_UNTIL_WAITING=1 … runner: starts the run and dies by SIGKILL once it waits for an approval
 *   node --conditions=loopwork-source agent.ts decide <db> <callId> <approve|reject>
 *
 * Fault hook, KILL_AT (a SIGKILL at that exact point): model:<n> (inside the n-th model
 * call), tool:<id>:before / tool:<id>:after (inside the handler, around its side effect).
 * IDEMPOTENT=1: handlers skip a side effect their call id already made (the call id as key).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, Mode } from "../../../src/index.ts"
import { ScriptedModel } from "../../../src/testing/index.ts"
import { DurableChain, DurableSqlite } from "../../../src/durable/index.ts"

const [role = "", db = "", third = "", fourth = ""] = process.argv.slice(2)
const killAt = process.env.KILL_AT ?? ""
const kill = (point: string) => {
  if (point === killAt) process.kill(process.pid, "SIGKILL")
}

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const Charge = Tool.make("charge", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String })
const Notify = Tool.make("notify", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
  needsApproval: process.env.APPROVAL === "1"
})
export const toolkit = Toolkit.make(Lookup, Charge, Notify)

const effect = (id: string) =>
  Effect.sync(() => {
    kill(`tool:${id}:before`)
    const done = existsSync(third) ? readFileSync(third, "utf8").split("\n") : []
    if (!(process.env.IDEMPOTENT === "1" && done.includes(id))) appendFileSync(third, `${id}\n`)
    kill(`tool:${id}:after`)
    return `${id} done`
  })

const handlers = toolkit.toLayer({
  lookup: ({ order }, { toolCallId }) => Effect.as(effect(toolCallId ?? "?"), `order ${order} shipped`),
  charge: (_, { toolCallId }) => effect(toolCallId ?? "?"),
  notify: (_, { toolCallId }) => effect(toolCallId ?? "?")
})

const model = ScriptedModel.make([
  (request) => {
    const turns = request.prompt.content.filter((message) => message.role === "assistant").length
    kill(`model:${turns + 1}`)
    if (turns === 0) {
      return { toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }, { id: "c2", name: "charge", params: { amount: 20 } }] }
    }
    if (turns === 1) return { toolCalls: [{ id: "c3", name: "notify", params: { text: "charged" } }] }
    return { text: "Charged 20 and told the customer." }
  }
], { repeat: true })

export const Ticket = DurableChain.workflow("Ticket", {
  input: Schema.Struct({ ticket: Schema.String }),
  idempotencyKey: ({ ticket }) => ticket,
  toolkit,
  chain: ({ ticket }) => Chain.make({ user: `Handle ticket ${ticket}`, toolkit }),
  mode: Mode.whileNeedsResponse
})

const options: DurableSqlite.Options = { filename: db, pollInterval: "100 millis" }

if (role === "runner") {
  const live = DurableChain.layer(Ticket).pipe(
    Layer.provideMerge(DurableSqlite.runner(options)),
    Layer.provide([model.layer, handlers])
  )
  // RUN_UNTIL_WAITING=1: start the run, and once it waits for an approval, die by SIGKILL (a runner lost while a run waits).
  const untilWaiting = Effect.gen(function*() {
    const id = yield* Ticket.execute({ ticket: "T1" }, { discard: true })
    while ((yield* DurableChain.pending(Ticket, id)).length === 0) yield* Effect.sleep("20 millis")
    process.stdout.write("RESULT waiting\n", () => process.kill(process.pid, "SIGKILL"))
    yield* Effect.never
  })
  const program = process.env.RUN_UNTIL_WAITING === "1" ? untilWaiting : Effect.gen(function*() {
    const result = yield* Effect.result(Ticket.execute({ ticket: "T1" }))
    process.stdout.write(`RESULT ${JSON.stringify(result._tag === "Success" ? result.success : { failure: String(result.failure) })}\n`)
  })
  Effect.runPromise(Effect.provide(program, live)).then(() => process.exit(0), (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  })
} else if (role === "decide") {
  const program = Effect.gen(function*() {
    const id = Ticket.executionId({ ticket: "T1" })
    const result = yield* Effect.result(
      Effect.flatMap(id, (executionId) =>
        DurableChain.decide(Ticket, executionId, { [third]: fourth === "reject" ? Approval.reject("no") : Approval.approve }))
    )
    process.stdout.write(`DECIDED ${result._tag === "Success" ? "ok" : (result.failure as { _tag: string })._tag}\n`)
  })
  Effect.runPromise(Effect.provide(program, DurableSqlite.client(options))).then(() => process.exit(0), (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  })
}

/**
 * `npm run demo:durable`: a durable run killed in the middle of a tool round
 * and finished by a new process, with nothing lost and nothing done twice.
 * No API key, no server: the model is scripted and the store is one SQLite
 * file in a temporary directory.
 *
 * The demo starts itself as a runner process three times:
 *   1. the runner is killed (SIGKILL) inside the refund tool, before its side effect;
 *   2. a new runner replays the recorded steps, runs the refund once and pauses:
 *      the e-mail to the customer needs a human's approval; this runner is killed too;
 *   3. the approval comes from this process, while no runner is alive, and a third
 *      runner finishes the run.
 */
import { spawnSync } from "node:child_process"
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, Mode } from "loopwork"
import { DurableChain, DurableSqlite } from "loopwork/durable"
import { ScriptedModel } from "loopwork/testing"

const LookUpOrder = Tool.make("look_up_order", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const Refund = Tool.make("refund", { parameters: Schema.Struct({ order: Schema.String, amount: Schema.Number }), success: Schema.String })
const EmailCustomer = Tool.make("email_customer", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
  needsApproval: true
})
const toolkit = Toolkit.make(LookUpOrder, Refund, EmailCustomer)

/** The agent's side effects go to a ledger file, so the demo can count them. */
const ledger = (file: string, entry: string, killHere: boolean) =>
  Effect.sync(() => {
    if (killHere) process.kill(process.pid, "SIGKILL") // the fault: this process dies here
    appendFileSync(file, `${entry}\n`)
    return `${entry}: done`
  })

/** Replay-safe script: each reply is chosen from the conversation so far. */
const model = ScriptedModel.make([
  (request) => {
    const turns = request.prompt.content.filter((m) => m.role === "assistant").length
    if (turns === 0) {
      return {
        toolCalls: [
          { id: "call_lookup", name: "look_up_order", params: { order: "A-17" } },
          { id: "call_refund", name: "refund", params: { order: "A-17", amount: 40 } }
        ]
      }
    }
    if (turns === 1) return { toolCalls: [{ id: "call_email", name: "email_customer", params: { text: "Refunded 40 EUR." } }] }
    return { text: "Order A-17 was refunded (40 EUR) and the customer was told." }
  }
], { repeat: true })

export const Support = DurableChain.workflow("SupportTicket", {
  input: Schema.Struct({ ticket: Schema.String }),
  idempotencyKey: ({ ticket }) => ticket,
  toolkit,
  chain: ({ ticket }) => Chain.make({ system: "You resolve support tickets.", user: `Ticket ${ticket}: refund order A-17`, toolkit }),
  mode: Mode.whileNeedsResponse
})

const runner = (db: string, file: string, kill: string) => {
  const handlers = toolkit.toLayer({
    look_up_order: ({ order }) => ledger(file, `looked up ${order}`, false),
    refund: ({ amount, order }) => ledger(file, `refunded ${amount} on ${order}`, kill === "refund"),
    email_customer: ({ text }) => ledger(file, `emailed "${text}"`, false)
  })
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(DurableSqlite.runner({ filename: db, pollInterval: "100 millis" })),
    Layer.provide([model.layer, handlers])
  )
  return Effect.gen(function*() {
    const id = yield* Support.execute({ ticket: "T-1" }, { discard: true })
    // Wait until the run finishes or waits for a human; a run that waits costs its runner nothing.
    while (true) {
      const result = yield* Support.poll(id)
      if (result._tag === "Some" && result.value._tag === "Complete") {
        const exit = result.value.exit
        console.log(exit._tag === "Success" && exit.value._tag === "Finished"
          ? `   finished: ${Chain.text(yield* Chain.decode(JSON.parse(exit.value.document), { toolkit }))}`
          : `   ended: ${JSON.stringify(exit)}`)
        return
      }
      const waiting = yield* DurableChain.pending(Support, id)
      if (waiting.length > 0) {
        console.log(`   waiting for approval: ${waiting.map((c) => `${c.tool} ${JSON.stringify(c.params)}`).join(", ")}`)
        if (kill === "waiting") process.kill(process.pid, "SIGKILL")
        return
      }
      yield* Effect.sleep("50 millis")
    }
  }).pipe(Effect.provide(live))
}

const approve = (db: string) =>
  Effect.gen(function*() {
    const id = yield* Support.executionId({ ticket: "T-1" })
    yield* DurableChain.decide(Support, id, { call_email: Approval.approve })
  }).pipe(Effect.provide(DurableSqlite.client({ filename: db })))

const self = fileURLToPath(import.meta.url)
const [role, db = "", file = "", kill = ""] = process.argv.slice(2)

if (role === "runner") {
  await Effect.runPromise(runner(db, file, kill))
  process.exit(0)
} else {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-demo-"))
  const store = join(dir, "runs.db")
  const effects = join(dir, "ledger")
  const start = (label: string, killAt: string) => {
    console.log(label)
    const child = spawnSync(process.execPath, [...process.execArgv, "--no-warnings", self, "runner", store, effects, killAt], {
      stdio: ["ignore", "inherit", "inherit"]
    })
    if (child.signal === "SIGKILL") console.log("   the runner process was killed (SIGKILL)")
  }
  start("1. runner starts ticket T-1 and is killed inside the refund tool", "refund")
  start("2. a new runner resumes the run from the SQLite file", "waiting")
  console.log("3. no runner is alive; a support agent approves the e-mail from this process")
  await Effect.runPromise(approve(store))
  start("4. a third runner finishes the run", "")
  const lines = existsSync(effects) ? readFileSync(effects, "utf8").trim().split("\n") : []
  console.log(`\nside effects (each exactly once):\n${lines.map((l) => `   ${l}`).join("\n")}`)
  rmSync(dir, { recursive: true, force: true })
}

/**
 * A call that waits more than once, durably, as `Chain.run` with
 * `Approval.decide` / `ExternalTool.supply` does: an approval covers the
 * arguments a human saw, so a call a repair function retries with new
 * arguments waits for a decision on those (after an approval or after a
 * rejection), and an external tool that needs approval waits for its
 * result once approved. Each wait is posted as the call's next, answered
 * through its own deferred, and an answer given for one wait never answers
 * another: a second wait for approval (`wait: 2`) takes only an answer that
 * names it, so a client sending the first decision again changes nothing.
 * On the memory engine and on the SQLite store (whose table gains the
 * `wait` column when it was made without it).
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ExternalTool, Mode, ToolFailurePolicy } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"
import { keyOf } from "../../src/durable/internal/executionKey.ts"
import { names } from "../../src/durable/internal/recorder.ts"
import { approvalOf, resultOf } from "../../src/durable/internal/waiting.ts"
import { pendingWhen } from "../support/durable.ts"

const Refund = Tool.make("refund", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  failure: Schema.String,
  needsApproval: true
})
const refunds = Toolkit.make(Refund)

const shown = (calls: ReadonlyArray<WaitingCalls.WaitingCall>) => calls.map((call) => [call.callId, call.kind, call.wait ?? 1, call.params])

/** A refund that fails at 20 and a repair that retries it at 15: a human never saw 15. */
const repairing = (name: string, onFailure: "approved" | "rejected") => {
  const ran: Array<number> = []
  const handlers = refunds.toLayer({
    refund: ({ amount }) => Effect.suspend(() => (ran.push(amount), amount === 20 ? Effect.fail("over the card's limit") : Effect.succeed(`refunded ${amount}`)))
  })
  const retry = () => Effect.succeed(ToolFailurePolicy.retryWith({ amount: 15 }))
  const Support = DurableChain.workflow(name, {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit: refunds,
    chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit: refunds }),
    mode: Mode.whileNeedsResponse,
    onToolFailure: onFailure === "approved" ? { handler: retry } : { rejected: retry }
  })
  const model = ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "refund", params: { amount: 20 } }] }, { text: "Done." }])
  return { ran, Support, services: Layer.mergeAll(model.layer, handlers) }
}

/** The memory engine and store, with `services` (the model and the handlers). */
const onMemory = <R>(services: Layer.Layer<R>) => Layer.mergeAll(services, WaitingCalls.layerMemory, WorkflowEngine.layerMemory)

describe("a call that waits again", () => {
  it.effect("a retry of an approved call with new arguments waits for its own decision; the first approval does not cover it", () => {
    const { ran, services, Support } = repairing("RetryApproved", "approved")
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "R1" }, { discard: true })
      expect(shown(yield* pendingWhen(Support, id, (calls) => calls.length > 0))).toEqual([["c1", "approval", 1, { amount: 20 }]])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      expect(shown(yield* pendingWhen(Support, id, (calls) => calls.some((call) => call.wait === 2)))).toEqual([["c1", "approval", 2, { amount: 15 }]])
      expect(ran).toEqual([20])
      // The first decision sent again (a client retrying it) names no wait: it is not taken for the new arguments.
      const retried = yield* Effect.flip(DurableChain.decide(Support, id, { c1: Approval.approve }))
      expect(retried._tag).toBe("WaitChanged")
      expect(retried.message).toContain("{ waits: { \"c1\": 2 } }")
      expect(ran).toEqual([20])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 2 } })
      const result = yield* Support.execute({ ticket: "R1" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual([20, 15])
    }).pipe(Effect.provide(DurableChain.layer(Support).pipe(Layer.provideMerge(onMemory(services)))))
  })

  it.effect("a retry of a rejected call with new arguments waits for a decision on them, then runs on it", () => {
    const { ran, services, Support } = repairing("RetryRejected", "rejected")
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "R2" }, { discard: true })
      yield* pendingWhen(Support, id, (calls) => calls.length > 0)
      yield* DurableChain.decide(Support, id, { c1: Approval.reject("not this one") })
      expect(shown(yield* pendingWhen(Support, id, (calls) => calls.some((call) => call.wait === 2)))).toEqual([["c1", "approval", 2, { amount: 15 }]])
      expect(ran).toEqual([])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 2 } })
      expect((yield* Support.execute({ ticket: "R2" }))._tag).toBe("Finished")
      expect(ran).toEqual([15])
    }).pipe(Effect.provide(DurableChain.layer(Support).pipe(Layer.provideMerge(onMemory(services)))))
  })

  it.effect("an external tool that needs approval waits for its result once approved: pending shows it, supply answers it", () => {
    const Transfer = ExternalTool.mark(Tool.make("transfer", { parameters: Schema.Struct({ to: Schema.String }), success: Schema.String, needsApproval: true }))
    const toolkit = Toolkit.make(Transfer)
    const Payments = DurableChain.workflow("Payments", {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit,
      chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
      mode: Mode.whileNeedsResponse
    })
    const model = ScriptedModel.make([{ toolCalls: [{ id: "t1", name: "transfer", params: { to: "bob" } }] }, { text: "Sent." }])
    const services = Layer.merge(model.layer, toolkit.toLayer({ transfer: () => Effect.die("an external tool's handler never runs") }))
    return Effect.gen(function*() {
      const id = yield* Payments.execute({ ticket: "P1" }, { discard: true })
      expect(shown(yield* pendingWhen(Payments, id, (calls) => calls.length > 0))).toEqual([["t1", "approval", 1, { to: "bob" }]])
      // A result before the approval is refused: the call waits for a decision.
      expect((yield* Effect.flip(DurableChain.supply(Payments, id, { t1: { result: "early" } })))._tag).toBe("CallNotAwaiting")
      yield* DurableChain.decide(Payments, id, { t1: Approval.approve })
      expect(shown(yield* pendingWhen(Payments, id, (calls) => calls.some((call) => call.kind === "result")))).toEqual([["t1", "result", 1, { to: "bob" }]])
      // The approval sent again (a client retrying it) does not answer the wait for the result.
      expect((yield* Effect.flip(DurableChain.decide(Payments, id, { t1: Approval.approve })))._tag).toBe("CallNotAwaiting")
      expect((yield* DurableChain.pending(Payments, id)).map((call) => call.kind)).toEqual(["result"])
      yield* DurableChain.supply(Payments, id, { t1: { result: "receipt 42" } })
      const result = yield* Payments.execute({ ticket: "P1" })
      if (result._tag !== "Finished") return expect.unreachable("the run finishes")
      expect(result.document).toContain("receipt 42")
    }).pipe(Effect.provide(DurableChain.layer(Payments).pipe(Layer.provideMerge(onMemory(services)))))
  })

  it.live("on SQLite, with a table made before waits were numbered: the retry waits for its own decision, then the run finishes", () => {
    const dir = mkdtempSync(join(tmpdir(), "loopwork-wait-"))
    const filename = join(dir, "runs.db")
    // The table as an earlier version made it, with a stop request in it.
    const old = new DatabaseSync(filename)
    old.exec(`CREATE TABLE loopwork_waiting_calls (execution_id VARCHAR(255) NOT NULL, call_id VARCHAR(256) NOT NULL,
      position BIGINT NOT NULL, kind VARCHAR(16) NOT NULL, tool VARCHAR(256) NOT NULL, params TEXT NOT NULL, answer TEXT,
      PRIMARY KEY (execution_id, call_id))`)
    old.exec(`INSERT INTO loopwork_waiting_calls VALUES ('Other/x', '', -1, 'stop', '', 'null', 'stop')`)
    old.close()
    const { ran, services, Support } = repairing("RetrySqlite", "approved")
    const live = DurableChain.layer(Support).pipe(
      Layer.provide(services),
      Layer.provideMerge(DurableSqlite.runner({ filename, pollInterval: "20 millis" }))
    )
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "S1" }, { discard: true })
      yield* pendingWhen(Support, id, (calls) => calls.length > 0)
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      expect(shown(yield* pendingWhen(Support, id, (calls) => calls.some((call) => call.wait === 2)))).toEqual([["c1", "approval", 2, { amount: 15 }]])
      expect(ran).toEqual([20])
      // The first wait's answer again is the same answer, not a decision on the new arguments: still waiting.
      const store = yield* WaitingCalls.WaitingCalls
      expect(yield* store.claim(keyOf(Support._tag, id), "c1", JSON.stringify(Approval.approve), 1, "approval")).toBe("taken")
      expect(yield* DurableChain.pending(Support, id)).toHaveLength(1)
      yield* DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 2 } })
      expect((yield* Support.execute({ ticket: "S1" }))._tag).toBe("Finished")
      expect(ran).toEqual([20, 15])
      expect(yield* DurableChain.pending(Support, id)).toEqual([])
    }).pipe(Effect.provide(live), Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  }, 30_000)
})

describe("options.waits is checked before anything is written", () => {
  it.effect("a wait number that is not one, a call the answers leave out, options that are not an object: InvalidInput", () => {
    const { ran, services, Support } = repairing("WaitsChecked", "approved")
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "W1" }, { discard: true })
      yield* pendingWhen(Support, id, (calls) => calls.length > 0)
      const bad: ReadonlyArray<unknown> = [
        "every wait",
        { waits: [2] },
        { waits: { c1: 0 } },
        { waits: { c1: 1.5 } },
        { waits: { c1: "2" } },
        { waits: { other: 2 } },
        JSON.parse(`{"waits":{"__proto__":2}}`)
      ]
      for (const options of bad) {
        const refused = yield* Effect.flip(DurableChain.decide(Support, id, { c1: Approval.approve }, options as DurableChain.AnswerOptions))
        expect(refused._tag).toBe("InvalidInput")
      }
      // Nothing was written: the call still waits, and an answer for its wait 1 is taken.
      expect(shown(yield* DurableChain.pending(Support, id))).toEqual([["c1", "approval", 1, { amount: 20 }]])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 1 } })
      yield* pendingWhen(Support, id, (calls) => calls.some((call) => call.wait === 2))
      expect(ran).toEqual([20])
    }).pipe(Effect.provide(DurableChain.layer(Support).pipe(Layer.provideMerge(onMemory(services)))))
  })
})

describe("the names of a call's waits", () => {
  it("the first wait keeps the names runs in flight already use; later ones take a prefix no first wait has", () => {
    const next = names(1)
    expect([next.wait("c1", "approval"), next.wait("c1", "approval"), next.wait("c2", "approval"), next.wait("c1", "result")]).toEqual([
      { n: 1, name: "v1/wait/c1", checked: "v1/answered/c1" },
      { n: 2, name: "v1/wait-2/c1", checked: "v1/answered-2/c1" },
      { n: 1, name: "v1/wait/c2", checked: "v1/answered/c2" },
      // Numbered among the call's waits of its kind; its steps, among all of the call's waits.
      { n: 1, name: "v1/wait-3/c1", checked: "v1/answered-3/c1" }
    ])
    // A call id shaped like a later wait's suffix cannot meet it: "c1/2" waits under "approval/c1/2".
    expect([approvalOf("c1", 1).name, approvalOf("c1", 2).name, approvalOf("c1/2", 1).name, resultOf("c1", 2).name]).toEqual([
      "approval/c1",
      "approval-2/c1",
      "approval/c1/2",
      "result-2/c1"
    ])
  })
})

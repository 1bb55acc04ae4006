/**
 * DurableChain.decide and supply read each answer once into a plain copy,
 * and check, store and hand the run that copy: a getter that answers
 * differently on a later read, or an object the caller changes after
 * `decide` returns, cannot change what the run executes away from what was
 * checked and stored. (Found by an attack: the caller's own object used to
 * reach the run.)
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ExternalTool, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Measure = Tool.make("measure", { parameters: Schema.Struct({ what: Schema.String }), success: Schema.Struct({ size: Schema.Number }) })
const toolkit = Toolkit.make(Refund, Measure)

/** The memory store, whose claimAll runs `after` once the claim is written (the point where the answer was checked and stored). */
const storeCalling = (after: () => void) =>
  Layer.effect(
    WaitingCalls.WaitingCalls,
    Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) =>
      WaitingCalls.WaitingCalls.of({
        ...store,
        claimAll: (key, kind, claims) => Effect.tap(store.claimAll(key, kind, claims), () => Effect.sync(after))
      }))
  ).pipe(Layer.provide(WaitingCalls.layerMemory))

const setup = (replies: ReadonlyArray<ScriptedModel.Reply>, after: () => void = () => {}) => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    measure: ({ what }) => Effect.sync(() => (ran.push(`measure ${what}`), { size: 1 }))
  })
  const model = ScriptedModel.make([...replies])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, storeCalling(after), WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

const refundRound: ScriptedModel.Reply = { toolCalls: [{ id: "r1", name: "refund", params: { amount: 500 } }] }

describe("durable answers are copied once read", () => {
  it.effect("decide: edited arguments whose getter changes after the check run as checked", () => {
    let checked = false
    const { live, ran, Support } = setup([refundRound, { text: "Done." }], () => (checked = true))
    // 5 while decide checks and stores it; 5000 once the claim is written.
    const params = Object.defineProperty({}, "amount", { enumerable: true, get: () => checked ? 5000 : 5 })
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* DurableChain.decide(Support, id, { r1: Approval.edit(params) })
      const store = yield* WaitingCalls.WaitingCalls
      const stored = yield* store.answerOf(`Support/${id}`, "r1")
      expect(stored).toBe(JSON.stringify({ _tag: "Edit", params: { amount: 5 } }))
      expect((yield* Support.execute({ ticket: "T1" }))._tag).toBe("Finished")
      // What was approved and recorded is a refund of 5.
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  })

  it.effect("decide: edited arguments the caller changes after decide returned run as decided (memory engine)", () => {
    const { live, ran, Support } = setup([refundRound, { text: "Done." }])
    const params = { amount: 5 }
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T2" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* DurableChain.decide(Support, id, { r1: Approval.edit(params) })
      // The reviewer's form object is reused for the next ticket.
      params.amount = 7777
      expect((yield* Support.execute({ ticket: "T2" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live))
  })

  it.effect("supply: a supplied result whose getter changes after the check reaches the run as checked", () => {
    let checked = false
    const Measured = ExternalTool.mark(Tool.make("measure", { parameters: Schema.Struct({ what: Schema.String }), success: Schema.Struct({ size: Schema.Number }) }))
    const external = Toolkit.make(Measured)
    const seen: Array<string> = []
    const model = ScriptedModel.make([
      { toolCalls: [{ id: "m1", name: "measure", params: { what: "box" } }] },
      (request) => {
        seen.push(JSON.stringify(request.prompt.content.at(-1)?.content ?? null))
        return { text: "ok" }
      }
    ])
    const External = DurableChain.workflow("External", {
      input: Schema.Struct({ ticket: Schema.String }),
      idempotencyKey: ({ ticket }) => ticket,
      toolkit: external,
      chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit: external }),
      mode: Mode.whileNeedsResponse
    })
    const services = Layer.merge(model.layer, external.toLayer({ measure: () => Effect.die("an external tool's handler never runs") }))
    const live = DurableChain.layer(External).pipe(
      Layer.provideMerge(Layer.mergeAll(services, storeCalling(() => (checked = true)), WorkflowEngine.layerMemory))
    )
    const result = Object.defineProperty({}, "size", { enumerable: true, get: () => checked ? 999_999 : 3 })
    return Effect.gen(function*() {
      const id = yield* External.execute({ ticket: "E1" }, { discard: true })
      yield* waitingOn(External, id)
      yield* DurableChain.supply(External, id, { m1: { result } })
      const store = yield* WaitingCalls.WaitingCalls
      expect(yield* store.answerOf(`External/${id}`, "m1")).toBe(JSON.stringify({ result: { size: 3 } }))
      expect((yield* External.execute({ ticket: "E1" }))._tag).toBe("Finished")
      expect(seen.join("")).toContain("3")
      expect(seen.join("")).not.toContain("999999")
    }).pipe(Effect.provide(live))
  })

  it.live("decide on the SQLite engine: edited arguments whose getter changes after the check run as checked", () => {
    let checked = false
    const dir = mkdtempSync(join(tmpdir(), "loopwork-answers-"))
    const ran: Array<string> = []
    const handlers = toolkit.toLayer({
      refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
      measure: () => Effect.succeed({ size: 1 })
    })
    const model = ScriptedModel.make([
      (request) => request.prompt.content.some((message) => message.role === "assistant") ? { text: "Done." } : refundRound
    ], { repeat: true })
    const Support = supportWorkflow("SqliteSupport", toolkit)
    const engine = DurableSqlite.runner({ filename: join(dir, "runs.db"), pollInterval: "50 millis" })
    const store = Layer.effect(
      WaitingCalls.WaitingCalls,
      Effect.map(Effect.service(WaitingCalls.WaitingCalls), (inner) =>
        WaitingCalls.WaitingCalls.of({
          ...inner,
          claimAll: (key, kind, claims) => Effect.tap(inner.claimAll(key, kind, claims), () => Effect.sync(() => (checked = true)))
        }))
    ).pipe(Layer.provide(engine))
    const live = Layer.merge(
      DurableChain.layer(Support).pipe(Layer.provide(store), Layer.provideMerge(Layer.mergeAll(model.layer, handlers, engine))),
      store
    )
    const params = Object.defineProperty({}, "amount", { enumerable: true, get: () => checked ? 5000 : 5 })
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "S1" }, { discard: true })
      for (let turn = 0; turn < 400 && (yield* DurableChain.pending(Support, id)).length === 0; turn++) yield* Effect.sleep("10 millis")
      yield* DurableChain.decide(Support, id, { r1: Approval.edit(params) })
      const inner = yield* WaitingCalls.WaitingCalls
      expect(yield* inner.answerOf(`SqliteSupport/${id}`, "r1")).toBe(JSON.stringify({ _tag: "Edit", params: { amount: 5 } }))
      expect((yield* Support.execute({ ticket: "S1" }))._tag).toBe("Finished")
      expect(ran).toEqual(["refund 5"])
    }).pipe(Effect.provide(live), Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  }, 30_000)
})

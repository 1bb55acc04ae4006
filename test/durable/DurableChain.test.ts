import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import type { NotDurableChain } from "../../src/durable/DurableError.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ order: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Refund, Lookup)

const setup = (refundId = "c2") => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    lookup: ({ order }) => Effect.sync(() => (ran.push(`lookup ${order}`), `order ${order}: shipped`))
  })
  const model = ScriptedModel.make([
    { toolCalls: [{ id: "c1", name: "lookup", params: { order: "A1" } }, { id: refundId, name: "refund", params: { amount: 20 } }] },
    { text: "Refunded." }
  ])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

describe("DurableChain on the memory engine", () => {
  it.effect("waits for an approval, then finishes; tools ran once", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      const waiting = yield* waitingOn(Support, id)
      expect(waiting.map((c) => c.callId)).toEqual(["c2"])
      yield* DurableChain.decide(Support, id, { c2: Approval.approve })
      const result = yield* Support.execute({ ticket: "T1" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["lookup A1", "refund 20"])
    }).pipe(Effect.provide(live))
  })

  it.effect("answers are checked before anything is written: unknown ids, bad edits, a second different answer", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T2" }, { discard: true })
      yield* waitingOn(Support, id)
      const unknown = yield* Effect.flip(DurableChain.decide(Support, id, { c9: Approval.approve }))
      expect(unknown._tag).toBe("CallNotAwaiting")
      const forged = yield* Effect.flip(DurableChain.decide(Support, "another-execution", { c2: Approval.approve }))
      expect(forged._tag).toBe("CallNotAwaiting")
      const badEdit = yield* Effect.flip(DurableChain.decide(Support, id, { c2: Approval.edit({ amount: "lots" }) }))
      expect(badEdit._tag).toBe("InvalidResumeValue")
      const notARecord = yield* Effect.flip(DurableChain.decide(Support, id, "approve" as never))
      expect(notARecord._tag).toBe("InvalidInput")
      const hugeId = yield* Effect.flip(DurableChain.decide(Support, id, { ["x".repeat(100_000)]: Approval.approve }))
      expect(hugeId._tag).toBe("InvalidInput")
      // No call has such an id (Arrival renames them), and a store could make it another one: SQLite cuts at NUL.
      for (const storeUnsafe of ["c2\u0000junk", "c\uD800", "c2\n"]) {
        const refused = yield* Effect.flip(DurableChain.decide(Support, id, { [storeUnsafe]: Approval.approve }))
        expect(refused._tag).toBe("InvalidInput")
        expect(refused.message).toContain("printable ASCII")
      }
      let deep: unknown = 1
      for (let level = 0; level < 100_000; level++) deep = [deep]
      const deepEdit = yield* Effect.flip(DurableChain.decide(Support, id, { c2: Approval.edit(deep) }))
      expect(deepEdit._tag).toBe("InvalidInput")
      // A key no decision has is refused, not dropped: the human meant the model to read "mesage".
      const typo = yield* Effect.flip(DurableChain.decide(Support, id, { c2: { _tag: "Reject", mesage: "too much" } as never }))
      expect(typo._tag).toBe("InvalidInput")
      expect(typo.message).toContain("mesage")
      expect(yield* DurableChain.pending(Support, id)).toHaveLength(1)
      yield* DurableChain.decide(Support, id, { c2: Approval.edit({ amount: 5 }) })
      yield* DurableChain.decide(Support, id, { c2: Approval.edit({ amount: 5 }) })
      const second = yield* Effect.flip(DurableChain.decide(Support, id, { c2: Approval.reject("no") }))
      expect(second._tag).toBe("AlreadyAnswered")
      const result = yield* Support.execute({ ticket: "T2" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["lookup A1", "refund 5"])
    }).pipe(Effect.provide(live))
  })

  it.effect.each(["__proto__", "constructor", "toString", "hasOwnProperty"])("a call id named %s is answered like any other", (refundId) => {
    const { live, ran, Support } = setup(refundId)
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T3" }, { discard: true })
      expect((yield* waitingOn(Support, id)).map((c) => c.callId)).toEqual([refundId])
      const decisions: Record<string, Approval.Decision> = Object.create(null)
      decisions[refundId] = Approval.approve
      yield* DurableChain.decide(Support, id, decisions)
      const result = yield* Support.execute({ ticket: "T3" })
      expect(result._tag).toBe("Finished")
      expect(ran).toEqual(["lookup A1", "refund 20"])
    }).pipe(Effect.provide(live))
  })

  it("refuses a stop signal: durable runs are interrupted instead", () => {
    expect(() =>
      DurableChain.workflow("Stopped", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: ({ ticket }) => Chain.make({ user: ticket, toolkit }),
        mode: Mode.whileNeedsResponse,
        ...({ stop: {} } as object)
      })
    ).toThrow(/durable runs take no stop signal/)
  })

  it.each([0, -1, 1.5, Number.NaN, "2"])("refuses version %j: a whole number from 1", (version) => {
    expect(() =>
      DurableChain.workflow("Versioned", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: ({ ticket }) => Chain.make({ user: ticket, toolkit }),
        mode: Mode.whileNeedsResponse,
        version: version as number
      })
    ).toThrow(/Invalid version: a whole number from 1/)
  })

  it.each([["nope"], ["__proto__"], ["constructor"], "refund", [42], {}])("refuses transactional %j: a list of the toolkit's tool names", (transactional) => {
    expect(() =>
      DurableChain.workflow("Transactional", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: ({ ticket }) => Chain.make({ user: ticket, toolkit }),
        mode: Mode.whileNeedsResponse,
        transactional: transactional as never
      })
    ).toThrow(/Invalid transactional: a list of the toolkit's tool names/)
  })

  it.effect("a workflow not made by DurableChain.workflow fails the layer with NotDurableChain (a typed error, not a defect)", () =>
    Effect.gen(function*() {
      const foreign = DurableChain.layer({ _tag: "Foreign" } as never) as Layer.Layer<never, NotDurableChain>
      const error = yield* Effect.flip(Layer.build(foreign).pipe(Effect.scoped))
      expect(error._tag).toBe("NotDurableChain")
      expect(error.message).toContain("DurableChain.workflow")
    }))

  it.effect("interrupt cancels a waiting execution: it completes interrupted and its call never runs", () => {
    const { live, ran, Support } = setup()
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T9" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* Support.interrupt(id)
      let polled = yield* Support.poll(id)
      for (let turn = 0; turn < 100 && !(Option.isSome(polled) && polled.value._tag === "Complete"); turn++) {
        polled = yield* Effect.andThen(Effect.yieldNow, Support.poll(id))
      }
      expect(Option.isSome(polled) && polled.value._tag === "Complete" && Exit.hasInterrupts(polled.value.exit)).toBe(true)
      expect(ran).toEqual(["lookup A1"])
    }).pipe(Effect.provide(live))
  })
})

/**
 * Hostile JavaScript callers of `DurableChain.pending`, `decide`, `supply`
 * and `stop` on the memory store (helper-65's probes): a workflow that is not
 * one (a Proxy, a throwing getter: `NotDurableChain`, was a TypeError or a
 * defect), hostile execution ids and call ids, decisions that are not
 * decisions (a Map, a revoked Proxy: `InvalidInput`, was a defect), answers
 * raced, edits with `__proto__`, Redacted values. Nothing is written and no
 * tool runs on a refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Workflow, WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ExternalTool, Mode } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Fetch = ExternalTool.mark(Tool.make("fetch", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.Unknown }))
const toolkit = Toolkit.make(Refund, Fetch)

const setup = (calls: ReadonlyArray<{ id: string; name: string; params: unknown }>) => {
  const ran: Array<unknown> = []
  const handlers = toolkit.toLayer({
    refund: (params) => Effect.sync(() => (ran.push(params), `refunded ${params.amount}`)),
    fetch: () => Effect.die("external")
  })
  const model = ScriptedModel.make([{ toolCalls: calls as never }, { text: "Done." }, { text: "Done." }])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, Support, live }
}

/** "Success", the typed failure's tag, or "DEFECT: ..." / "THROWN: ..." */
const outcome = <A, E>(make: () => Effect.Effect<A, E, any>) =>
  Effect.suspend(() => {
    let effect: Effect.Effect<A, E, any>
    try {
      effect = make()
    } catch (thrown) {
      return Effect.succeed(`THROWN: ${String(thrown)}`)
    }
    return Effect.map(Effect.exit(effect), (exit) => {
      if (Exit.isSuccess(exit)) return "Success"
      const error = Cause.findErrorOption(exit.cause)
      if (error._tag === "Some") return String((error.value as { _tag?: string })._tag)
      return `DEFECT: ${String(Cause.squash(exit.cause))}`
    })
  })

const refund1 = [{ id: "c1", name: "refund", params: { amount: 1 } }]

describe("the workflow argument", () => {
  const notDurable = Workflow.make("Plain", { payload: { x: Schema.String }, idempotencyKey: ({ x }) => x })
  const nullProtoTag = { _tag: Object.create(null) }
  const throwingTag = { get _tag(): string { throw new Error("boom") } }
  const proxy = new Proxy({}, { get: () => { throw new Error("proxy boom") } })
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ["null", null],
    ["undefined", undefined],
    ["a number", 42],
    ["a non-durable Workflow", notDurable],
    ["an object whose _tag has no prototype", nullProtoTag],
    ["an object whose _tag getter throws", throwingTag],
    ["a Proxy that throws on every read", proxy]
  ]
  for (const [what, workflow] of cases) {
    it.effect(`pending/decide/supply/stop with ${what} fail with NotDurableChain`, () =>
      Effect.gen(function*() {
        const { live } = setup(refund1)
        const results = yield* Effect.all([
          outcome(() => DurableChain.pending(workflow as never, "e1")),
          outcome(() => DurableChain.decide(workflow as never, "e1", { c1: Approval.approve })),
          outcome(() => DurableChain.supply(workflow as never, "e1", { c1: { result: 1 } })),
          outcome(() => DurableChain.stop(workflow as never, "e1"))
        ]).pipe(Effect.provide(live))
        expect(results).toEqual(["NotDurableChain", "NotDurableChain", "NotDurableChain", "NotDurableChain"])
      }))
  }
})

describe("execution ids", () => {
  const throwingString = { toString: () => { throw new Error("boom") } }
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ["42", 42],
    ["null", null],
    ["undefined", undefined],
    ["an object with a throwing toString", throwingString],
    ["an empty string", ""],
    ["a 1 MB string", "e".repeat(1_000_000)],
    ["a string with '/'", "a/b"],
    ["a symbol", Symbol("x")],
    ["a String object", new String("e1")]
  ]
  for (const [what, executionId] of cases) {
    it.effect(`pending/decide/supply/stop with executionId ${what} fail with InvalidInput`, () =>
      Effect.gen(function*() {
        const { live, Support } = setup(refund1)
        const results = yield* Effect.all([
          outcome(() => DurableChain.pending(Support, executionId as never)),
          outcome(() => DurableChain.decide(Support, executionId as never, { c1: Approval.approve })),
          outcome(() => DurableChain.supply(Support, executionId as never, { c1: { result: 1 } })),
          outcome(() => DurableChain.stop(Support, executionId as never))
        ]).pipe(Effect.provide(live))
        expect(results).toEqual(["InvalidInput", "InvalidInput", "InvalidInput", "InvalidInput"])
      }))
  }

  it.effect("unknown executions: pending is empty, decide/supply fail CallNotAwaiting, stop succeeds", () =>
    Effect.gen(function*() {
      const { live, Support } = setup(refund1)
      const results = yield* Effect.all([
        Effect.map(DurableChain.pending(Support, "nope"), (calls) => calls.length),
        outcome(() => DurableChain.decide(Support, "nope", { c1: Approval.approve })),
        outcome(() => DurableChain.supply(Support, "nope", { c1: { result: 1 } })),
        outcome(() => DurableChain.stop(Support, "nope"))
      ]).pipe(Effect.provide(live))
      expect(results).toEqual([0, "CallNotAwaiting", "CallNotAwaiting", "Success"])
    }))
})

describe("hostile decisions on a waiting refund", () => {
  const hostileDecisions: ReadonlyArray<readonly [string, () => unknown, ReadonlyArray<string>]> = [
    ["null decisions", () => null, ["InvalidInput"]],
    ["undefined decisions", () => undefined, ["InvalidInput"]],
    ["a string", () => "c1", ["InvalidInput"]],
    ["an array", () => [Approval.approve], ["InvalidInput"]],
    ["a Map", () => new Map([["c1", Approval.approve]]), ["InvalidInput", "CallNotAwaiting"]],
    ["a null decision", () => ({ c1: null }), ["InvalidInput"]],
    ["an empty decision", () => ({ c1: {} }), ["InvalidInput"]],
    ["Approve with an extra key", () => ({ c1: { _tag: "Approve", params: { amount: 999 } } }), ["InvalidInput"]],
    ["Edit without params", () => ({ c1: { _tag: "Edit" } }), ["InvalidInput"]],
    ["Reject with a number message", () => ({ c1: { _tag: "Reject", message: 42 } }), ["InvalidInput"]],
    ["Edit with a 1 MB string amount", () => ({ c1: Approval.edit({ amount: "9".repeat(1_000_000) }) }), ["InvalidInput", "InvalidResumeValue"]],
    ["Edit 10,000 objects deep", () => {
      let deep: Record<string, unknown> = { amount: 1 }
      for (let n = 0; n < 10_000; n++) deep = { amount: deep }
      return { c1: Approval.edit(deep) }
    }, ["InvalidInput", "InvalidResumeValue"]],
    ["Edit with a Proxy whose traps throw", () => ({
      c1: Approval.edit(new Proxy({ amount: 1 }, { ownKeys: () => { throw new Error("boom") }, get: () => { throw new Error("boom") } }))
    }), ["InvalidInput"]],
    ["Edit with a function", () => ({ c1: Approval.edit({ amount: () => 5 }) }), ["InvalidInput", "InvalidResumeValue"]],
    ["Edit with a symbol", () => ({ c1: Approval.edit({ amount: Symbol("5") }) }), ["InvalidInput", "InvalidResumeValue"]],
    ["Edit with a cyclic object", () => {
      const cyclic: Record<string, unknown> = { amount: 1 }
      cyclic.self = cyclic
      return { c1: Approval.edit(cyclic) }
    }, ["InvalidInput", "InvalidResumeValue"]],
    ["Edit with a Date", () => ({ c1: Approval.edit({ amount: new Date(0) }) }), ["InvalidInput", "InvalidResumeValue"]],
    ["Edit with toJSON that turns into a number", () => ({ c1: Approval.edit({ amount: { toJSON: () => 5 } }) }), ["InvalidInput", "InvalidResumeValue", "Success"]],
    ["a decision that is a revoked Proxy", () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return { c1: proxy }
    }, ["InvalidInput"]],
    ["decisions that are a revoked Proxy", () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return proxy
    }, ["InvalidInput"]],
    ["a decision for an id 1 MB long", () => ({ ["k".repeat(1_000_000)]: Approval.approve }), ["InvalidInput"]],
    ["a supply-shaped answer given to decide", () => ({ c1: { result: "ok" } }), ["InvalidInput"]],
    ["a Stopped marker", () => ({ c1: { loopworkStop: true } }), ["InvalidInput"]]
  ]
  for (const [what, decisions, allowed] of hostileDecisions) {
    it.effect(`${what}: a typed refusal, nothing written, the refund not run`, () =>
      Effect.gen(function*() {
        const { live, ran, Support } = setup(refund1)
        yield* Effect.gen(function*() {
          const id = yield* Support.execute({ ticket: "T" }, { discard: true })
          yield* waitingOn(Support, id)
          const result = yield* outcome(() => DurableChain.decide(Support, id, decisions() as never))
          expect(allowed).toContain(result)
          if (result !== "Success") {
            expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
            expect(ran).toEqual([])
            // Still decidable afterwards.
            yield* DurableChain.decide(Support, id, { c1: Approval.reject("no") })
            expect((yield* Support.execute({ ticket: "T" }))._tag).toBe("Finished")
            expect(ran).toEqual([])
          }
        }).pipe(Effect.provide(live))
      }), 30_000)
  }

  const hostileOptions: ReadonlyArray<readonly [string, unknown]> = [
    ["null", null],
    ["a number", 42],
    ["a string", "waits"],
    ["waits null", { waits: null }],
    ["waits with a string number", { waits: { c1: "1" } }],
    ["waits with NaN", { waits: { c1: Number.NaN } }],
    ["waits with Infinity", { waits: { c1: Infinity } }],
    ["waits with 2^53", { waits: { c1: 2 ** 53 } }],
    ["waits as a Proxy whose ownKeys throws", { waits: new Proxy({}, { ownKeys: () => { throw new Error("boom") } }) }],
    ["options as a Proxy whose getOwnPropertyDescriptor throws", new Proxy({}, { getOwnPropertyDescriptor: () => { throw new Error("boom") } })],
    ["waits naming __proto__", JSON.parse('{"waits":{"__proto__":1}}')]
  ]
  for (const [what, options] of hostileOptions) {
    it.effect(`options ${what}: a typed refusal, the refund not run`, () =>
      Effect.gen(function*() {
        const { live, ran, Support } = setup(refund1)
        yield* Effect.gen(function*() {
          const id = yield* Support.execute({ ticket: "T" }, { discard: true })
          yield* waitingOn(Support, id)
          const result = yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }, options as never))
          expect(["InvalidInput", "WaitChanged"]).toContain(result)
          expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
          expect(ran).toEqual([])
        }).pipe(Effect.provide(live))
      }))
  }
})

describe("first answer wins", () => {
  it.effect("approve then reject: AlreadyAnswered, runs once", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        yield* DurableChain.decide(Support, id, { c1: Approval.approve })
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.reject("no") }))).toBe("AlreadyAnswered")
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }))).toBe("Success")
        expect((yield* Support.execute({ ticket: "T" }))._tag).toBe("Finished")
        expect(ran).toEqual([{ amount: 1 }])
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.edit({ amount: 5 }) }))).toBe("AlreadyAnswered")
      }).pipe(Effect.provide(live))
    }))

  it.effect("reject then approve: AlreadyAnswered, never runs", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        yield* DurableChain.decide(Support, id, { c1: Approval.reject("no") })
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }))).toBe("AlreadyAnswered")
        expect(yield* outcome(() => DurableChain.stop(Support, id))).toBe("Success")
        expect((yield* Support.execute({ ticket: "T" }))._tag).toBeDefined()
        expect(ran).toEqual([])
      }).pipe(Effect.provide(live))
    }))

  it.effect("approve and reject raced 50 times: one wins, the refund runs iff approve won", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 50; round++) {
        const { live, ran, Support } = setup(refund1)
        yield* Effect.gen(function*() {
          const id = yield* Support.execute({ ticket: "T" }, { discard: true })
          yield* waitingOn(Support, id)
          const [a, r] = yield* Effect.all([
            outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve })),
            outcome(() => DurableChain.decide(Support, id, { c1: Approval.reject("no") }))
          ], { concurrency: "unbounded" })
          expect([a, r].sort()).toEqual(["AlreadyAnswered", "Success"])
          yield* Support.execute({ ticket: "T" })
          expect(ran.length).toBe(a === "Success" ? 1 : 0)
        }).pipe(Effect.provide(live))
      }
    }), 60_000)

  it.effect("edit with __proto__ from JSON: the handler gets only the tool's arguments, no pollution", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        const edit = JSON.parse('{"_tag":"Edit","params":{"amount":7,"__proto__":{"amount":9999,"polluted":true}}}')
        const result = yield* outcome(() => DurableChain.decide(Support, id, { c1: edit }))
        if (result === "Success") {
          yield* Support.execute({ ticket: "T" })
          expect(ran.length).toBe(1)
          expect((ran[0] as { amount: number }).amount).toBe(7)
        } else expect(["InvalidResumeValue", "InvalidInput"]).toContain(result)
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
      }).pipe(Effect.provide(live))
    }))

  it.effect("an edit whose Proxy answers differently on each read: what runs is what the store holds", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        let reads = 0
        const params = new Proxy({ amount: 1 }, {
          get: (target, key) => key === "amount" ? (++reads === 1 ? 1 : 1_000_000 + reads) : Reflect.get(target, key)
        })
        const result = yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.edit(params) }))
        const store = yield* WaitingCalls.WaitingCalls
        const stored = yield* store.answerOf(`Support/${id}`, "c1")
        if (result === "Success") {
          yield* Support.execute({ ticket: "T" })
          expect(ran.length).toBe(1)
          expect(JSON.parse(stored as string).params).toEqual(ran[0])
        } else expect(stored).toBeUndefined()
      }).pipe(Effect.provide(live))
    }))
})

describe("supply vs decide kinds and hostile supplies", () => {
  const fetch1 = [{ id: "f1", name: "fetch", params: { url: "u" } }]
  it.effect("decide on an external call and supply on an approval call: CallNotAwaiting", () =>
    Effect.gen(function*() {
      const a = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* a.Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(a.Support, id)
        expect(yield* outcome(() => DurableChain.supply(a.Support, id, { c1: { result: "refunded 1" } }))).toBe("CallNotAwaiting")
      }).pipe(Effect.provide(a.live))
      const b = setup(fetch1)
      yield* Effect.gen(function*() {
        const id = yield* b.Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(b.Support, id)
        expect(yield* outcome(() => DurableChain.decide(b.Support, id, { f1: Approval.approve }))).toBe("CallNotAwaiting")
      }).pipe(Effect.provide(b.live))
    }))

  const hostile: ReadonlyArray<readonly [string, () => unknown]> = [
    ["null supplied", () => ({ f1: null })],
    ["empty supplied", () => ({ f1: {} })],
    ["result and failure both", () => ({ f1: { result: 1, failure: "x" } })],
    ["failure a number", () => ({ f1: { failure: 42 } })],
    ["result a throwing getter", () => ({ f1: Object.defineProperty({}, "result", { enumerable: true, get: () => { throw new Error("boom") } }) })],
    ["result 10,000 deep", () => {
      let deep: unknown = 1
      for (let n = 0; n < 10_000; n++) deep = { d: deep }
      return { f1: { result: deep } }
    }],
    ["result a BigInt", () => ({ f1: { result: 10n } })],
    ["result a revoked Proxy", () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return { f1: { result: proxy } }
    }],
    ["result undefined", () => ({ f1: { result: undefined } })]
  ]
  for (const [what, supplied] of hostile) {
    it.effect(`supply ${what}: typed refusal or a stored copy; never a defect`, () =>
      Effect.gen(function*() {
        const b = setup(fetch1)
        yield* Effect.gen(function*() {
          const id = yield* b.Support.execute({ ticket: "T" }, { discard: true })
          yield* waitingOn(b.Support, id)
          const result = yield* outcome(() => DurableChain.supply(b.Support, id, supplied() as never))
          expect(result.startsWith("DEFECT") || result.startsWith("THROWN")).toBe(false)
          if (result !== "Success") {
            expect(["InvalidInput", "InvalidResumeValue"]).toContain(result)
            expect((yield* DurableChain.pending(b.Support, id)).map((call) => call.callId)).toEqual(["f1"])
          } else {
            const end = yield* Effect.exit(Effect.timeout(b.Support.execute({ ticket: "T" }), "10 seconds"))
            expect(Exit.isSuccess(end) || !Cause.hasDies(end.cause)).toBe(true)
          }
        }).pipe(Effect.provide(b.live))
      }), 30_000)
  }
})

describe("more hostile arguments", () => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    return proxy
  }
  it.effect("decide with an empty Map or {} as decisions: refused, not a silent success", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        const map = yield* outcome(() => DurableChain.decide(Support, id, new Map([["c1", Approval.approve]]) as never))
        expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
        expect(ran).toEqual([])
        expect(map).toBe("InvalidInput")
      }).pipe(Effect.provide(live))
    }))

  it.effect("decide with a revoked Proxy as options: InvalidInput, not a defect", () =>
    Effect.gen(function*() {
      const { live, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }, revoked() as never))).toBe("InvalidInput")
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: revoked() } as never))).toBe("InvalidInput")
      }).pipe(Effect.provide(live))
    }))

  it.effect("a revoked Proxy as the workflow: NotDurableChain from pending/decide/supply/stop and layer", () =>
    Effect.gen(function*() {
      const { live } = setup(refund1)
      const results = yield* Effect.all([
        outcome(() => DurableChain.pending(revoked() as never, "e1")),
        outcome(() => DurableChain.decide(revoked() as never, "e1", { c1: Approval.approve })),
        outcome(() => DurableChain.supply(revoked() as never, "e1", { c1: { result: 1 } })),
        outcome(() => DurableChain.stop(revoked() as never, "e1"))
      ]).pipe(Effect.provide(live))
      let layerResult: string
      try {
        const layer = DurableChain.layer(revoked() as never)
        layerResult = yield* outcome(() => Effect.scoped(Layer.build(layer as Layer.Layer<never, unknown, never>)))
      } catch (thrown) {
        layerResult = `THROWN: ${String(thrown)}`
      }
      expect([...results, layerResult]).toEqual(["NotDurableChain", "NotDurableChain", "NotDurableChain", "NotDurableChain", "NotDurableChain"])
    }))

  const validOptions = () => ({
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }: { ticket: string }) => ticket,
    toolkit,
    chain: () => { throw new Error("unused") },
    mode: undefined
  })
  const badWorkflows: ReadonlyArray<readonly [string, () => unknown]> = [
    ["name null", () => DurableChain.workflow(null as never, validOptions() as never)],
    ["name a number", () => DurableChain.workflow(42 as never, validOptions() as never)],
    ["name empty", () => DurableChain.workflow("" as never, validOptions() as never)],
    ["name 1 MB long", () => DurableChain.workflow("W".repeat(1_000_000) as never, validOptions() as never)],
    ["options a revoked Proxy", () => DurableChain.workflow("W", revoked() as never)],
    ["options null", () => DurableChain.workflow("W", null as never)],
    ["version a string", () => DurableChain.workflow("W", { ...validOptions(), version: "2" } as never)],
    ["transactional a string", () => DurableChain.workflow("W", { ...validOptions(), transactional: "refund" } as never)],
    ["transactional naming __proto__", () => DurableChain.workflow("W", { ...validOptions(), transactional: ["__proto__"] } as never)],
    ["a throwing getter on maxRuns", () => DurableChain.workflow("W", Object.defineProperty(validOptions(), "maxRuns", { enumerable: true, get: () => { throw new Error("boom") } }) as never)],
    ["maxRuns -1", () => DurableChain.workflow("W", { ...validOptions(), maxRuns: -1 } as never)],
    ["maxRuns a string", () => DurableChain.workflow("W", { ...validOptions(), maxRuns: "20" } as never)]
  ]
  for (const [what, make] of badWorkflows) {
    it(`DurableChain.workflow with ${what}: throws InvalidInput (no TypeError), or a usable workflow`, () => {
      let result: string
      try {
        const made = make() as { _tag: unknown }
        // If accepted, the name must make usable keys: checkedKey must not throw.
        const pending = DurableChain.pending(made as never, "e1")
        result = `made: ${typeof made._tag}; ${pending === undefined ? "" : "pending ok"}`
      } catch (thrown) {
        result = thrown instanceof Error && (thrown as { _tag?: string })._tag !== undefined
          ? String((thrown as { _tag?: string })._tag)
          : `THROWN ${String(thrown)}`
      }
      expect(result.startsWith("THROWN")).toBe(false)
      if (what.startsWith("name") || what.startsWith("version") || what.startsWith("transactional") || what.startsWith("a throwing")) {
        expect(result === "InvalidInput" || (what === "name empty" && result.startsWith("made"))).toBe(true)
      }
    })
  }
})

describe("run options accepted by workflow() but bad", () => {
  for (const [what, extra] of [["maxRuns -1", { maxRuns: -1 }], ["maxRuns '20'", { maxRuns: "20" }], ["concurrency 0", { concurrency: 0 }], ["maxRuns NaN", { maxRuns: Number.NaN }]] as const) {
    it.effect(`a workflow with ${what}: refused by workflow() or the run fails typed (no defect, no hang)`, () =>
      Effect.gen(function*() {
        let W: ReturnType<typeof supportWorkflow<"Bad", typeof toolkit.tools>>
        try {
          W = DurableChain.workflow("Bad", {
            input: Schema.Struct({ ticket: Schema.String }),
            idempotencyKey: ({ ticket }) => ticket,
            toolkit,
            chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
            mode: Mode.whileNeedsResponse,
            ...(extra as object)
          }) as never
        } catch (thrown) {
          expect((thrown as { _tag?: string })._tag).toBe("InvalidInput")
          return
        }
        const model = ScriptedModel.make([{ toolCalls: refund1 as never }, { text: "Done." }])
        const handlers = toolkit.toLayer({ refund: () => Effect.succeed("ok"), fetch: () => Effect.die("x") })
        const live = DurableChain.layer(W).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory)))
        const end = yield* Effect.exit(Effect.timeout(W.execute({ ticket: "B" }), "5 seconds")).pipe(Effect.provide(live))
        if (Exit.isFailure(end)) {
          expect(Cause.hasDies(end.cause)).toBe(false)
          expect(String(Cause.squash(end.cause))).not.toContain("TimeoutError")
        }
      }), 20_000)
  }
})

describe("answers for waits that do not exist yet", () => {
  it.effect("approving wait 2 of a call still at wait 1 is refused (WaitChanged), nothing written", () =>
    Effect.gen(function*() {
      const { live, ran, Support } = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(Support, id)
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 2 } }))).toBe("WaitChanged")
        expect(yield* outcome(() => DurableChain.decide(Support, id, { c1: Approval.approve }, { waits: { c1: 999_999 } }))).toBe("WaitChanged")
        expect((yield* DurableChain.pending(Support, id)).map((call) => call.callId)).toEqual(["c1"])
        expect(ran).toEqual([])
      }).pipe(Effect.provide(live))
    }))

  it.effect("an external tool that needs approval: a result supplied before the approval is refused and never used", () =>
    Effect.gen(function*() {
      const Ask = ExternalTool.mark(Tool.make("ask", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, needsApproval: true }))
      const tk = Toolkit.make(Ask)
      const seen: Array<string> = []
      const model = ScriptedModel.make([
        (request) => {
          const tool = request.prompt.content.filter((m) => m.role === "tool")
          if (tool.length === 0) return { toolCalls: [{ id: "a1", name: "ask", params: { q: "?" } }] }
          seen.push(JSON.stringify(tool.at(-1)?.content))
          return { text: "Done." }
        }
      ], { repeat: true })
      const W = supportWorkflow("Ext", tk)
      const live = DurableChain.layer(W).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, tk.toLayer({ ask: () => Effect.die("never") }), WaitingCalls.layerMemory, WorkflowEngine.layerMemory)))
      yield* Effect.gen(function*() {
        const id = yield* W.execute({ ticket: "X" }, { discard: true })
        const first = yield* waitingOn(W, id)
        expect(first.map((c) => [c.callId, c.kind])).toEqual([["a1", "approval"]])
        expect(yield* outcome(() => DurableChain.supply(W, id, { a1: { result: "FORGED EARLY" } }))).toBe("CallNotAwaiting")
        yield* DurableChain.decide(W, id, { a1: Approval.approve })
        let next = yield* DurableChain.pending(W, id)
        for (let n = 0; n < 200 && !(next.length > 0 && next[0].kind === "result"); n++) next = yield* Effect.andThen(Effect.yieldNow, DurableChain.pending(W, id))
        expect(next.map((c) => [c.callId, c.kind])).toEqual([["a1", "result"]])
        expect(yield* outcome(() => DurableChain.decide(W, id, { a1: Approval.approve }))).not.toBe("Success")
        yield* DurableChain.supply(W, id, { a1: { result: "real" } })
        const end = yield* W.execute({ ticket: "X" })
        expect(end._tag).toBe("Finished")
        expect(seen.join("")).toContain("real")
        expect(seen.join("")).not.toContain("FORGED")
      }).pipe(Effect.provide(live))
    }))
})

describe("workflow names that leave no room for an id", () => {
  for (const [what, name] of [["a number", 42], ["1 MB long", "W".repeat(1_000_000)]] as const) {
    it.effect(`a workflow named ${what}: refused at workflow(), or pending's error says what to fix`, () =>
      Effect.gen(function*() {
        let W: unknown
        try {
          W = DurableChain.workflow(name as never, {
            input: Schema.Struct({ ticket: Schema.String }),
            idempotencyKey: ({ ticket }) => ticket,
            toolkit,
            chain: ({ ticket }) => Chain.make({ user: ticket, toolkit }),
            mode: Mode.whileNeedsResponse
          })
        } catch (thrown) {
          expect((thrown as { _tag?: string })._tag).toBe("InvalidInput")
          return
        }
        const error = yield* Effect.flip(DurableChain.pending(W as never, "e1").pipe(Effect.provide(WaitingCalls.layerMemory)))
        expect(error.message).not.toMatch(/NaN|-\d/)
      }))
  }
})

describe("Redacted values in answers", () => {
  const KEY = "sk-proj-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"
  it.effect("a Redacted in a supplied result or a reject message: its text never stored nor in the error", () =>
    Effect.gen(function*() {
      const { Redacted } = yield* Effect.promise(() => import("effect"))
      const b = setup([{ id: "f1", name: "fetch", params: { url: "u" } }])
      yield* Effect.gen(function*() {
        const id = yield* b.Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(b.Support, id)
        const exit = yield* Effect.exit(DurableChain.supply(b.Support, id, { f1: { result: { token: Redacted.make(KEY) } } }))
        const store = yield* WaitingCalls.WaitingCalls
        const stored = yield* store.answerOf(`Support/${id}`, "f1")
        const errorText = Exit.isFailure(exit) ? `${String(Cause.squash(exit.cause))} ${JSON.stringify(Cause.squash(exit.cause))}` : ""
        expect(String(stored)).not.toContain("ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210")
        expect(errorText).not.toContain("ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210")
      }).pipe(Effect.provide(b.live))
      const a = setup(refund1)
      yield* Effect.gen(function*() {
        const id = yield* a.Support.execute({ ticket: "T" }, { discard: true })
        yield* waitingOn(a.Support, id)
        const exit = yield* Effect.exit(DurableChain.decide(a.Support, id, { c1: { _tag: "Reject", message: Redacted.make(KEY) } as never }))
        const errorText = Exit.isFailure(exit) ? `${String(Cause.squash(exit.cause))} ${JSON.stringify(Cause.squash(exit.cause))} ${Cause.pretty(exit.cause)}` : "ok"
        expect(errorText).not.toContain("ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210")
      }).pipe(Effect.provide(a.live))
    }))
})

/**
 * Durable answers as recorded (found by a review of the all-or-none claims,
 * the copied answers, NotDelivered and stop's wake): a recorded answer is
 * compared with what the run receives as a JSON value, not as text (a store
 * may give it back reordered, and older versions wrote keys unsorted);
 * `stop` fails with a typed `NotDelivered` when the engine cannot wake the
 * run; a sparse array in an edit is taken as JSON takes it; `claimAll`
 * refuses a request it cannot read, never dies.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, SqliteClient, WaitingCalls } from "../../src/durable/index.ts"
import { approvalOf } from "../../src/durable/internal/waiting.ts"
import { supportWorkflow, waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const Store = Tool.make("store", { parameters: Schema.Struct({ data: Schema.Unknown }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund, Store)

const setup = <E>(store: Layer.Layer<WaitingCalls.WaitingCalls, E>, engine: Layer.Layer<WorkflowEngine.WorkflowEngine> = WorkflowEngine.layerMemory, call: { readonly name: string; readonly params: unknown } = { name: "refund", params: { amount: 5 } }) => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`)),
    store: ({ data }) => Effect.sync(() => (ran.push(`store ${JSON.stringify(data)}`), "stored"))
  })
  const model = ScriptedModel.make([{ toolCalls: [{ id: "r1", ...call }] }, { text: "Done." }])
  const Support = supportWorkflow("Support", toolkit)
  const live = DurableChain.layer(Support).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, store, engine)))
  return { ran, Support, live }
}

/**
 * JSON text as a PostgreSQL `jsonb` column gives it back: keys ordered by
 * length, then bytes; a space after every `:` and `,`. The same JSON value
 * as the text written.
 */
const jsonbText = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(", ")}]`
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
    return `{${keys.map((key) => `${JSON.stringify(key)}: ${jsonbText((value as Record<string, unknown>)[key])}`).join(", ")}}`
  }
  return JSON.stringify(value)
}

/** The memory store, whose answerOf gives each answer back as equivalent JSON text (as a store over a jsonb column would). */
const jsonbStore = Layer.effect(
  WaitingCalls.WaitingCalls,
  Effect.map(Effect.service(WaitingCalls.WaitingCalls), (store) =>
    WaitingCalls.WaitingCalls.of({
      ...store,
      answerOf: (key, callId) => Effect.map(store.answerOf(key, callId), (text) => typeof text === "string" ? jsonbText(JSON.parse(text)) : text)
    }))
).pipe(Layer.provide(WaitingCalls.layerMemory))

/** The memory engine, whose deferredDone always dies as the SQL engines' does when their store fails. */
const deadEngine = Layer.effect(
  WorkflowEngine.WorkflowEngine,
  Effect.map(Effect.service(WorkflowEngine.WorkflowEngine), (inner) => ({
    ...inner,
    deferredDone: () => Effect.die(new SqlError({ reason: new UnknownError({ cause: "database is locked" }) }))
  } as WorkflowEngine.WorkflowEngine["Service"]))
).pipe(Layer.provide(WorkflowEngine.layerMemory))

describe("durable answers as recorded", () => {
  it.effect("a decision a store gives back as equivalent JSON text (keys reordered, spaced) is the recorded one: the run runs it", () => {
    const { live, ran, Support } = setup(jsonbStore)
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "J1" }, { discard: true })
      yield* waitingOn(Support, id)
      yield* DurableChain.decide(Support, id, { r1: Approval.edit({ amount: 4 }) })
      const done = yield* Effect.exit(Support.execute({ ticket: "J1" }))
      expect(Exit.isSuccess(done) ? done.value._tag : String(done.cause)).toBe("Finished")
      expect(ran).toEqual(["refund 4"])
    }).pipe(Effect.provide(live))
  })

  it.effect("a run waiting since before 7c6769e, decided then (answer stored as JSON.stringify wrote it, keys unsorted), resumes and runs the edit", () => {
    const { live, ran, Support } = setup(WaitingCalls.layerMemory, WorkflowEngine.layerMemory, { name: "store", params: { data: 0 } })
    const decision = Approval.edit({ data: { b: 1, a: 2 } })
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "O1" }, { discard: true })
      yield* waitingOn(Support, id)
      // What decide did then: claim with JSON.stringify(value), then complete the deferred with the value.
      const store = yield* WaitingCalls.WaitingCalls
      expect(yield* store.claim(`Support/${id}`, "r1", JSON.stringify(decision), 1, "approval")).toBe("answered")
      const engine = yield* WorkflowEngine.WorkflowEngine
      const deferred = approvalOf("r1", 1)
      yield* engine.deferredDone(deferred, { workflowName: "Support", executionId: id, deferredName: deferred.name, exit: Exit.succeed(decision) })
      const done = yield* Effect.exit(Support.execute({ ticket: "O1" }))
      expect(Exit.isSuccess(done) ? done.value._tag : String(done.cause)).toBe("Finished")
      expect(ran).toEqual(['store {"b":1,"a":2}'])
    }).pipe(Effect.provide(live))
  })

  it.effect("stop, when the engine cannot wake the run, fails with a typed error (as decide's NotDelivered), not a defect", () => {
    const { live, Support } = setup(WaitingCalls.layerMemory, deadEngine)
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "D1" }, { discard: true })
      yield* waitingOn(Support, id)
      const decided = yield* Effect.flip(DurableChain.decide(Support, id, { r1: Approval.approve }))
      expect(decided._tag).toBe("NotDelivered")
      // What NotDelivered's message advises: "send the same answers again, or stop the execution".
      const stopped = yield* Effect.exit(DurableChain.stop(Support, id))
      expect(Exit.isFailure(stopped) && Cause.hasDies(stopped.cause)).toBe(false)
    }).pipe(Effect.provide(live))
  })

  it.effect("decide takes edited arguments holding a sparse array as JSON does (holes as null), not as unreadable input", () => {
    const { live, ran, Support } = setup(WaitingCalls.layerMemory, WorkflowEngine.layerMemory, { name: "store", params: { data: 0 } })
    const sparse: Array<number> = []
    sparse[1] = 1
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "S1" }, { discard: true })
      yield* waitingOn(Support, id)
      const decided = yield* Effect.exit(DurableChain.decide(Support, id, { r1: Approval.edit({ data: sparse }) }))
      expect(Exit.isSuccess(decided) ? "decided" : String(decided.cause)).toBe("decided")
      expect((yield* Support.execute({ ticket: "S1" }))._tag).toBe("Finished")
      expect(ran).toEqual(["store [null,1]"])
    }).pipe(Effect.provide(live))
  })

  const throwingRequest = () =>
    Object.defineProperty({ answer: '{"_tag":"Approve"}', wait: 1 }, "callId", {
      enumerable: true,
      get: () => {
        throw new Error("no id")
      }
    }) as WaitingCalls.ClaimRequest

  const claimThrowing = Effect.gen(function*() {
    const store = yield* WaitingCalls.WaitingCalls
    yield* store.post("E", { callId: "c1", kind: "approval", tool: "refund", params: { amount: 1 } })
    const exit = yield* Effect.exit(Effect.suspend(() => store.claimAll("E", "approval", [throwingRequest()])))
    // Refused (as claimAll's TSDoc says of a request that is not a call id, an answer and a wait), or a typed failure: never a defect.
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(false)
    expect(yield* store.answerOf("E", "c1")).toBeUndefined()
  })

  it.effect("claimAll refuses a request whose fields cannot be read (memory store), never dies", () =>
    Effect.provide(claimThrowing, WaitingCalls.layerMemory))

  it.effect("claimAll refuses a request whose fields cannot be read (SQLite store), never dies", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "loopwork-recorded-"))),
      (dir) => Effect.provide(claimThrowing, WaitingCalls.layerSql.pipe(Layer.provide(SqliteClient.layer({ filename: join(dir, "runs.db") })))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ))
})

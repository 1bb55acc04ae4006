/**
 * DurableChain.decide / supply / stop end to end on a real PostgreSQL with
 * DurablePostgres.single (one fresh database per test): two reviewers at
 * once, an edit, a stop while waiting and after the end, and an external
 * tool that needs approval (helper-52).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, ExternalTool } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"
import { usePostgres } from "./support/postgres.ts"
import { pendingWhen, supportWorkflow } from "../support/durable.ts"

const { database } = usePostgres({ beforeAll, afterAll })

const engineOn = (url: string) => DurablePostgres.single({ url: Redacted.make(url), pollInterval: "20 millis" })

const Refund = Tool.make("refund", {
  parameters: Schema.Struct({ amount: Schema.Number, note: Schema.Struct({ text: Schema.String, tags: Schema.Array(Schema.String) }) }),
  success: Schema.String,
  needsApproval: true
})
const refunds = Toolkit.make(Refund)

const Transfer = ExternalTool.mark(Tool.make("transfer", { parameters: Schema.Struct({ to: Schema.String }), success: Schema.String, needsApproval: true }))
const transfers = Toolkit.make(Transfer)

const errorTag = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
    ? (exit.cause.reasons[0].error as { readonly _tag?: string })._tag
    : String(exit)

/** Ticket "T<n>": the model asks for two refunds of 10n+1 and 10n+2 (r1, r2), then answers. */
const twoRefunds = (name: string) => {
  const ran: Array<{ readonly ticket: string; readonly amount: number; readonly note: unknown }> = []
  let modelCalls = 0
  const handlers = refunds.toLayer({
    refund: (params) => Effect.sync(() => (ran.push({ ticket: `T${Math.floor(params.amount / 10)}`, amount: params.amount, note: params.note }), `refunded ${params.amount}`))
  })
  const model = ScriptedModel.make([
    (request) => {
      modelCalls++
      const first = request.prompt.content.find((message) => message.role === "user")
      const text = JSON.stringify(first?.content ?? "")
      const n = Number(/Ticket T(\d+)/.exec(text)?.[1] ?? "0")
      const tools = request.prompt.content.filter((message) => message.role === "tool").length
      if (tools === 0) {
        return {
          toolCalls: [
            { id: "r1", name: "refund", params: { amount: 10 * n + 1, note: { text: "first", tags: ["a"] } } },
            { id: "r2", name: "refund", params: { amount: 10 * n + 2, note: { text: "second", tags: [] } } }
          ]
        }
      }
      return { text: "Done." }
    }
  ], { repeat: true })
  const Support = supportWorkflow(name, refunds)
  const live = (url: string) => DurableChain.layer(Support).pipe(Layer.provideMerge(Layer.mergeAll(model.layer, handlers, engineOn(url))))
  return { ran, Support, live, modelCalls: () => modelCalls }
}

const withDatabase = <A, E>(body: (url: string) => Effect.Effect<A, E>) => Effect.flatMap(Effect.promise(database), body)

describe("durable answers end to end on PostgreSQL", () => {
  it.live("(1) two reviewers decide the same two calls at once, 5 executions: each execution carries one reviewer's answers whole", () =>
    withDatabase((url) => {
      const { ran, Support, live } = twoRefunds("TwoReviewers")
      return Effect.gen(function*() {
        const store = yield* WaitingCalls.WaitingCalls
        for (let n = 1; n <= 5; n++) {
          const ticket = `T${n}`
          const id = yield* Support.execute({ ticket }, { discard: true })
          expect((yield* pendingWhen(Support, id, (calls) => calls.length === 2)).map((call) => call.callId).sort()).toEqual(["r1", "r2"])
          const [a, b] = yield* Effect.all([
            Effect.exit(DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.approve })),
            Effect.exit(DurableChain.decide(Support, id, { r2: Approval.reject("no from B"), r1: Approval.reject("no from B") }))
          ], { concurrency: 2 })
          expect([Exit.isSuccess(a), Exit.isSuccess(b)].filter(Boolean), `execution ${n}: ${String(a)} / ${String(b)}`).toHaveLength(1)
          const loser = Exit.isSuccess(a) ? b : a
          expect(errorTag(loser)).toBe("AlreadyAnswered")
          const winner = Exit.isSuccess(a) ? "A" : "B"
          const answers = [yield* store.answerOf(`TwoReviewers/${id}`, "r1"), yield* store.answerOf(`TwoReviewers/${id}`, "r2")]
          const reviewerOf = (answer: string | null | undefined) =>
            answer == null ? "none" : answer.includes("Approve") ? "A" : answer.includes("no from B") ? "B" : `? ${answer}`
          expect(answers.map(reviewerOf), `execution ${n}`).toEqual([winner, winner])
          const done = yield* Effect.timeout(Support.execute({ ticket }), "30 seconds")
          expect(done._tag).toBe("Finished")
          const here = ran.filter((entry) => entry.ticket === ticket).map((entry) => entry.amount).sort((x, y) => x - y)
          expect(here, `execution ${n}, winner ${winner}`).toEqual(winner === "A" ? [10 * n + 1, 10 * n + 2] : [])
          expect(yield* DurableChain.pending(Support, id)).toEqual([])
        }
      }).pipe(Effect.provide(live(url)))
    }), 120_000)

  it.live("(2) an edit decided: the run finishes and the tool ran with exactly the edited arguments", () =>
    withDatabase((url) => {
      const { ran, Support, live } = twoRefunds("Edit")
      const edited = { amount: 13.5, note: { text: "edited \u00e9 \u2028 \"q\"", tags: ["x", "", "y"] } }
      return Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
        yield* pendingWhen(Support, id, (calls) => calls.length === 2)
        yield* DurableChain.decide(Support, id, { r1: Approval.edit(edited), r2: Approval.reject("not this one") })
        const done = yield* Effect.timeout(Support.execute({ ticket: "T1" }), "30 seconds")
        expect(done._tag).toBe("Finished")
        expect(ran).toEqual([{ ticket: "T1", amount: 13.5, note: edited.note }])
        const document = JSON.parse(done.document) as { readonly messages: ReadonlyArray<unknown> }
        expect(JSON.stringify(document.messages)).toContain("refunded 13.5")
        expect(yield* DurableChain.pending(Support, id)).toEqual([])
      }).pipe(Effect.provide(live(url)))
    }), 60_000)

  it.live("(3) stop while waiting: Paused StopRequested, nothing runs, a later decision refused", () =>
    withDatabase((url) => {
      const { ran, Support, live, modelCalls } = twoRefunds("StopWaiting")
      return Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
        yield* pendingWhen(Support, id, (calls) => calls.length === 2)
        yield* DurableChain.stop(Support, id)
        yield* DurableChain.stop(Support, id)
        const done = yield* Effect.timeout(Support.execute({ ticket: "T1" }), "30 seconds")
        expect(done._tag).toBe("Paused")
        expect(done.reason).toBe("StopRequested")
        const document = JSON.parse(done.document) as { readonly pendingToolCalls: ReadonlyArray<{ readonly id: string }> }
        expect(document.pendingToolCalls.map((call) => call.id).sort()).toEqual(["r1", "r2"])
        expect(ran).toEqual([])
        expect(modelCalls()).toBe(1)
        expect(yield* DurableChain.pending(Support, id)).toEqual([])
        const late = yield* Effect.exit(DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.approve }))
        expect(errorTag(late)).toBe("AlreadyAnswered")
        yield* Effect.sleep("300 millis")
        expect(ran).toEqual([])
      }).pipe(Effect.provide(live(url)))
    }), 60_000)

  it.live("(4) stop after both calls were decided and the run finished changes nothing", () =>
    withDatabase((url) => {
      const { ran, Support, live, modelCalls } = twoRefunds("StopAfter")
      return Effect.gen(function*() {
        const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
        yield* pendingWhen(Support, id, (calls) => calls.length === 2)
        yield* DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.reject("no") })
        const done = yield* Effect.timeout(Support.execute({ ticket: "T1" }), "30 seconds")
        expect(done._tag).toBe("Finished")
        expect(ran.map((entry) => entry.amount)).toEqual([11])
        const callsBefore = modelCalls()
        const stopped = yield* Effect.exit(DurableChain.stop(Support, id))
        expect(Exit.isSuccess(stopped), String(stopped)).toBe(true)
        yield* Effect.sleep("300 millis")
        const again = yield* Effect.timeout(Support.execute({ ticket: "T1" }), "30 seconds")
        expect(again).toEqual(done)
        const polled = yield* Support.poll(id)
        expect(polled._tag).toBe("Some")
        expect(ran.map((entry) => entry.amount)).toEqual([11])
        expect(modelCalls()).toBe(callsBefore)
        expect(yield* DurableChain.pending(Support, id)).toEqual([])
        // the same decisions again are harmless; a different one is refused
        yield* DurableChain.decide(Support, id, { r1: Approval.approve, r2: Approval.reject("no") })
        expect(errorTag(yield* Effect.exit(DurableChain.decide(Support, id, { r2: Approval.approve })))).toBe("AlreadyAnswered")
        expect(ran.map((entry) => entry.amount)).toEqual([11])
      }).pipe(Effect.provide(live(url)))
    }), 60_000)

  it.live("(5) an external tool that needs approval: approved, then its result supplied, the run finishes with it", () =>
    withDatabase((url) => {
      const model = ScriptedModel.make([{ toolCalls: [{ id: "t1", name: "transfer", params: { to: "bob" } }] }, { text: "Sent." }])
      const services = Layer.merge(model.layer, transfers.toLayer({ transfer: () => Effect.die("an external tool's handler never runs") }))
      const Payments = supportWorkflow("Payments", transfers)
      const live = DurableChain.layer(Payments).pipe(Layer.provideMerge(Layer.mergeAll(services, engineOn(url))))
      return Effect.gen(function*() {
        const id = yield* Payments.execute({ ticket: "P1" }, { discard: true })
        const first = yield* pendingWhen(Payments, id, (calls) => calls.length > 0)
        expect(first.map((call) => [call.callId, call.kind, call.wait ?? 1, call.params])).toEqual([["t1", "approval", 1, { to: "bob" }]])
        expect(errorTag(yield* Effect.exit(DurableChain.supply(Payments, id, { t1: { result: "early" } })))).toBe("CallNotAwaiting")
        yield* DurableChain.decide(Payments, id, { t1: Approval.approve })
        const second = yield* pendingWhen(Payments, id, (calls) => calls.some((call) => call.kind === "result"))
        expect(second.map((call) => [call.callId, call.kind, call.wait ?? 1, call.params])).toEqual([["t1", "result", 1, { to: "bob" }]])
        expect(errorTag(yield* Effect.exit(DurableChain.decide(Payments, id, { t1: Approval.approve })))).toBe("CallNotAwaiting")
        yield* DurableChain.supply(Payments, id, { t1: { result: "receipt 42" } })
        // the same result again is harmless, a different one refused
        yield* DurableChain.supply(Payments, id, { t1: { result: "receipt 42" } })
        expect(errorTag(yield* Effect.exit(DurableChain.supply(Payments, id, { t1: { result: "receipt 43" } })))).toBe("AlreadyAnswered")
        const done = yield* Effect.timeout(Payments.execute({ ticket: "P1" }), "30 seconds")
        expect(done._tag).toBe("Finished")
        expect(done.document).toContain("receipt 42")
        expect(done.document).not.toContain("receipt 43")
        expect(yield* DurableChain.pending(Payments, id)).toEqual([])
      }).pipe(Effect.provide(live))
    }), 60_000)
})

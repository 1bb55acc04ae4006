/**
 * A durable chain with an `output` Schema ends like `Chain.run` with the same
 * option: the same chain document, and the decoded answer stored as JSON in
 * the workflow's `Finished` result — also when the body replays after an
 * approval (the final-answer tool runs in the body, so the count of re-asks
 * replays with it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, SchemaGetter } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ChatModel, Mode, StructuredOutput } from "../../src/index.ts"
import type { ScriptedTurn } from "../../src/ChatModel.ts"
import { DurableChain, WaitingCalls } from "../../src/durable/index.ts"
import { waitingOn } from "../support/durable.ts"

const Refund = Tool.make("refund", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const toolkit = Toolkit.make(Refund)
// The decoded type differs from its JSON: the stored output is the JSON form.
const Verdict = Schema.Struct({ approved: Schema.Boolean, amount: Schema.NumberFromString, at: Schema.Date })
const at = "2026-11-26T10:00:00.000Z"

const chainOf = (ticket: string) => Chain.make({ user: `Ticket ${ticket}`, toolkit })

const setup = (script: ReadonlyArray<ScriptedTurn>, output: StructuredOutput.Spec, structuredOutputs = false) => {
  const ran: Array<string> = []
  const handlers = toolkit.toLayer({
    refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), `refunded ${amount}`))
  })
  const model = ChatModel.scripted(script, { structuredOutputs })
  const Support = DurableChain.workflow("SupportVerdict", {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit,
    chain: ({ ticket }) => chainOf(ticket),
    mode: Mode.whileNeedsResponse,
    output
  })
  const live = DurableChain.layer(Support).pipe(
    Layer.provideMerge(Layer.mergeAll(model.layer, handlers, WaitingCalls.layerMemory, WorkflowEngine.layerMemory))
  )
  return { ran, model, Support, live, handlers }
}

/** The same run without durability: run, approve every pause, run again. */
const plainRun = (script: ReadonlyArray<ScriptedTurn>, output: StructuredOutput.Spec, structuredOutputs = false) => {
  const model = ChatModel.scripted(script, { structuredOutputs })
  const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.succeed(`refunded ${amount}`) })
  return Effect.gen(function*() {
    let chain: Chain.Chain<typeof toolkit.tools> = chainOf("T1")
    while (true) {
      const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, output })
      if (outcome._tag === "Ok") return { document: JSON.stringify(yield* Chain.encode(outcome.chain)), output: outcome.output }
      const calls = outcome.reason._tag === "ApprovalPending" ? outcome.reason.calls : []
      chain = yield* Approval.decide(outcome.chain, Object.fromEntries(calls.map((call) => [call.id, Approval.approve])))
    }
  }).pipe(Effect.provide([model.layer, handlers]))
}

const finalCall = (id: string, params: unknown): ScriptedTurn => ({ toolCalls: [{ id, name: "final_answer", params }] })

// A wrong answer (re-asked), a refund that waits for approval, then the right answer.
const toolScript: ReadonlyArray<ScriptedTurn> = [
  finalCall("f1", { approved: "yes", amount: "20" }),
  { toolCalls: [{ id: "c1", name: "refund", params: { amount: 20 } }] },
  finalCall("f2", { approved: true, amount: "20", at })
]

describe("DurableChain with an output Schema", () => {
  it.effect("final-answer tool: re-ask, approval, replay; the same document as Chain.run and the output as JSON", () => {
    const { live, model, ran, Support } = setup(toolScript, StructuredOutput.make(Verdict, { retries: 1 }))
    return Effect.gen(function*() {
      const id = yield* Support.execute({ ticket: "T1" }, { discard: true })
      const waiting = yield* waitingOn(Support, id)
      expect(waiting.map((call) => call.callId)).toEqual(["c1"])
      yield* DurableChain.decide(Support, id, { c1: Approval.approve })
      const result = yield* Support.execute({ ticket: "T1" })
      const plain = yield* plainRun(toolScript, StructuredOutput.make(Verdict, { retries: 1 }))
      expect(plain.output).toEqual({ approved: true, amount: 20, at: new Date(at) })
      // Stored as its JSON codec writes it: the Date as ISO text.
      expect(result).toEqual({ _tag: "Finished", reason: "return-behavior", document: plain.document, output: { approved: true, amount: "20", at } })
      // The replay after the approval called neither the model nor the refund again.
      expect(model.calls).toBe(3)
      expect(ran).toEqual(["refund 20"])
      const decoded = yield* Schema.decodeUnknownEffect(Schema.toCodecJson(Verdict))(result._tag === "Finished" ? result.output : undefined)
      expect(decoded).toEqual({ approved: true, amount: 20, at: new Date(at) })
    }).pipe(Effect.provide(live))
  })

  it.effect("the provider's JSON mode: every request carries the Schema, the text answer decodes", () => {
    const script: ReadonlyArray<ScriptedTurn> = [{ text: "not json" }, { text: `{"approved": false, "amount": "0", "at": "${at}"}` }]
    const { live, model, Support } = setup(script, StructuredOutput.make(Verdict, { retries: 1 }), true)
    return Effect.gen(function*() {
      const result = yield* Support.execute({ ticket: "T2" })
      expect(result._tag === "Finished" && result.output).toEqual({ approved: false, amount: "0", at })
      expect(model.requests.map((request) => request.responseFormat?.name)).toEqual(["final_answer", "final_answer"])
      const plain = yield* plainRun(script, StructuredOutput.make(Verdict, { retries: 1 }), true).pipe(Effect.provide(live))
      expect(result._tag === "Finished" && result.document).toBe(plain.document.replace("Ticket T1", "Ticket T2"))
    }).pipe(Effect.provide(live))
  })

  it.effect("answers that never decode fail the workflow with OutputInvalid and the chain's document", () => {
    const script = [finalCall("f1", { approved: 1 }), finalCall("f2", { approved: 2 })]
    const { live, Support } = setup(script, StructuredOutput.make(Verdict, { retries: 1 }))
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(Support.execute({ ticket: "T3" }))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      const failed = error?._tag === "Fail" ? error.error : undefined
      expect(failed?.reason).toBe("OutputInvalid")
      expect(JSON.parse(failed?.document ?? "{}").messages.length).toBeGreaterThan(2)
    }).pipe(Effect.provide(live))
  })

  it.effect("an output that does not encode to JSON fails the workflow with OutputNotStorable", () => {
    // Decodes from the model's text, but refuses to encode: the answer cannot be stored.
    const OneWay = Schema.String.pipe(Schema.decodeTo(Schema.String, {
      decode: SchemaGetter.passthrough(),
      encode: SchemaGetter.forbidden(() => "one way only")
    }))
    const script = [finalCall("f1", { value: "yes" })]
    const { live, Support } = setup(script, OneWay)
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(Support.execute({ ticket: "T4" }))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      expect(error?._tag === "Fail" ? error.error.reason : undefined).toBe("OutputNotStorable")
    }).pipe(Effect.provide(live))
  })

  it("a bad output option is refused when the workflow is made, as Chain.run refuses it", () => {
    const make = (output: unknown) => () =>
      DurableChain.workflow("Bad", {
        input: Schema.Struct({ ticket: Schema.String }),
        idempotencyKey: ({ ticket }) => ticket,
        toolkit,
        chain: ({ ticket }) => chainOf(ticket),
        mode: Mode.whileNeedsResponse,
        output: output as StructuredOutput.Spec
      })
    expect(make("a string")).toThrow(/output/)
    expect(make({ __proto__: null, schema: 1 })).toThrow(/output/)
  })
})

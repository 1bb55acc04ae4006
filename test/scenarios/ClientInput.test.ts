/**
 * What a client hands to `Approval.decide` and `ExternalTool.supply` is
 * copied once, then checked and kept as copied (helper-38's probes): an
 * edit changed after `decide`, or a getter that answers differently on a
 * later read, cannot change the arguments of an approved call; a getter
 * that throws or a proxy is refused with a typed error, never a defect; a
 * supplied failure or a rejection message too large to keep in a chain is
 * refused. A handler's result whose getter throws is a failed result.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, ExternalTool, LoopError, Mode, type Outcome } from "../../src/index.ts"

const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Fetch = ExternalTool.mark(Tool.make("fetch", { parameters: Schema.Struct({}), success: Schema.Struct({ n: Schema.Number }) }))
const toolkit = Toolkit.merge(Toolkit.make(Transfer), Toolkit.make(Fetch))

/** The transfers that ran, with their arguments. */
const transfers = () => {
  const ran: Array<unknown> = []
  return { ran, layer: Toolkit.make(Transfer).toLayer({ transfer: (params) => Effect.sync(() => (ran.push({ ...params }), "sent")) }) }
}

/** `chain` run on a scripted model with `layer`'s handlers (the transfer's, or none for a run that pauses). */
const run = (chain: Chain.Chain<typeof toolkit.tools>, replies: ReadonlyArray<ChatModel.ScriptedReply>, layer: Layer.Layer<Tool.Handler<"transfer">> | undefined) =>
  Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide(Layer.merge(ChatModel.scripted(replies).layer, layer ?? Layer.empty))
  ) as Effect.Effect<Outcome.Final<typeof toolkit.tools>, LoopError.RunError>

/** A chain paused on `transfer` call c1 (to bob, 300). */
const paused = Effect.map(
  run(Chain.make({ user: "Pay Bob", toolkit }), [{ toolCalls: [{ id: "c1", name: "transfer", params: { to: "bob", amount: 300 } }] }], undefined),
  (outcome) => outcome.chain
)

/** The error an effect failed with; it must fail, and not with a defect. */
const typedFailure = <E>(effect: Effect.Effect<unknown, E>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("it succeeded")
    if (Cause.hasDies(exit.cause)) throw new Error(`a defect: ${String(Cause.squash(exit.cause))}`)
    return Option.getOrThrow(Exit.findErrorOption(exit))
  })

const throwing = <A extends object>(value: A, key: string): A =>
  Object.defineProperty(value, key, { enumerable: true, get: () => { throw new Error(`${key} cannot be read`) } })

describe("Approval.decide: the edit approved is the edit as it was given", () => {
  it.effect("changed after decide: the call runs with the arguments decided", () =>
    Effect.gen(function*() {
      const { layer, ran } = transfers()
      const edited = { to: "bob", amount: 250 }
      const decided = yield* Approval.decide(yield* paused, { c1: Approval.edit(edited) })
      edited.to = "mallory"
      edited.amount = 1_000_000
      yield* run(decided, [{ text: "done" }], layer)
      expect(ran).toEqual([{ to: "bob", amount: 250 }])
    }))

  it.effect("a getter answering differently on later reads: the value read once runs", () =>
    Effect.gen(function*() {
      const { layer, ran } = transfers()
      let reads = 0
      const edited = { to: "bob", get amount() { return ++reads <= 1 ? 250 : 1_000_000 } }
      const decided = yield* Approval.decide(yield* paused, { c1: Approval.edit(edited) })
      yield* run(decided, [{ text: "done" }], layer)
      expect(ran).toEqual([{ to: "bob", amount: 250 }])
    }))
})

describe("client input that cannot be read: a typed error, never a defect", () => {
  it.effect.each([
    { name: "a decisions record whose entry getter throws", decisions: () => throwing({}, "c1") },
    { name: "a proxy as the decisions record", decisions: () => new Proxy({ c1: Approval.approve }, {}) },
    { name: "edited arguments whose getter throws", decisions: () => ({ c1: Approval.edit(throwing({ to: "bob" }, "amount")) }) }
  ])("decide with $name: InvalidInput", ({ decisions }) =>
    Effect.gen(function*() {
      const error = yield* typedFailure(Approval.decide(yield* paused, decisions() as never))
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
    }))

  it.effect("supply with a result whose getter throws: InvalidInput", () =>
    Effect.gen(function*() {
      const waiting = yield* Effect.map(
        run(Chain.make({ user: "Fetch", toolkit }), [{ toolCalls: [{ id: "f1", name: "fetch", params: {} }] }], undefined),
        (outcome) => outcome.chain
      )
      const error = yield* typedFailure(ExternalTool.supply(waiting, { f1: { result: throwing({}, "n") } }))
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
    }))

  it.effect("a handler's result whose getter throws: a failed result, and the run goes on", () =>
    Effect.gen(function*() {
      const Lookup = Tool.make("lookup", { parameters: Schema.Struct({}), success: Schema.Unknown })
      const kit = Toolkit.make(Lookup)
      const outcome = yield* Chain.run(Chain.make({ user: "Look", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([
          ChatModel.scripted([{ toolCalls: [{ id: "l1", name: "lookup", params: {} }] }, { text: "done" }]).layer,
          kit.toLayer({ lookup: () => Effect.succeed(throwing({}, "rows")) })
        ])
      )
      expect(outcome._tag).toBe("Ok")
      expect(outcome.chain.lastToolResults).toMatchObject([
        { id: "l1", isFailure: true, result: "Tool 'lookup' returned a result that cannot be stored: it is not JSON data (it holds a value that cannot be read)" }
      ])
    }))
})

describe("a failure or a rejection message too large to keep in a chain", () => {
  const huge = "\u0000".repeat(100_000_000)

  it.effect("supply { failure }: refused", () =>
    Effect.gen(function*() {
      const waiting = yield* Effect.map(
        run(Chain.make({ user: "Fetch", toolkit }), [{ toolCalls: [{ id: "f1", name: "fetch", params: {} }] }], undefined),
        (outcome) => outcome.chain
      )
      const error = yield* typedFailure(ExternalTool.supply(waiting, { f1: { failure: huge } }))
      expect(error).toBeInstanceOf(LoopError.InvalidResumeValue)
      expect(error.message).toContain("the failure cannot be stored: it is larger than")
    }))

  it.effect("Approval.reject(message): refused", () =>
    Effect.gen(function*() {
      const error = yield* typedFailure(Approval.decide(yield* paused, { c1: Approval.reject(huge) }))
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
      expect(error.message).toContain("the rejection message cannot be stored: it is larger than")
    }))
})

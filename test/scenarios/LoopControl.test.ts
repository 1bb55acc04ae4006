/**
 * Loop-control edge cases: an open round is never lost, a resumed run keeps
 * its maxRuns budget, decoding needs the tools of decided calls, a user
 * message added during a pause keeps the transcript valid, and user
 * functions that throw end the run with a typed error and the chain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, LoopError, Mode, type Outcome, Step, StopSignal, ToolTimeout } from "../../src/index.ts"
import { DeleteFile, Lookup } from "../support/tools.ts"

const Delete = DeleteFile
const toolkit = Toolkit.make(Lookup, Delete)
const handlers = toolkit.toLayer({
  lookup: ({ q }) => Effect.succeed(`found ${q}`),
  delete_file: ({ path }) => Effect.succeed(`deleted ${path}`)
})
const start = () => Chain.make({ system: "Be careful.", user: "Clean up.", toolkit })

const roles = (chain: Chain.Chain) => chain.messages.map((message) => message.role)

/** Every tool call in an assistant message has exactly one result, in the very next message. */
const providerValid = (chain: Chain.Chain): boolean =>
  chain.messages.every((message, index) => {
    if (message.role !== "assistant") return true
    const calls = message.content.flatMap((part) => part.type === "tool-call" ? [part.id] : [])
    if (calls.length === 0) return true
    const next = chain.messages[index + 1]
    if (next?.role !== "tool") return false
    const results = next.content.flatMap((part) => part.type === "tool-result" ? [part.id] : [])
    return results.length === calls.length && calls.every((id) => results.includes(id))
  })

describe("an open round is never lost", () => {
  it.effect("a custom loop of executeTools then callLlm pauses for a held call instead of calling the model", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ id: "a", name: "delete_file", params: { path: "/tmp/x" } }, { id: "b", name: "lookup", params: { q: "x" } }] },
        { text: "never reached" }
      ])
      const loop = (c: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
        Step.start(c).pipe(Step.executeTools, Step.callLlm, Step.continueOrDone(loop))
      const outcome = yield* Chain.run(start(), { mode: (c) => loop(c) }).pipe(Effect.provide([model.layer, handlers]))
      expect(outcome._tag).toBe("Pause")
      expect(outcome._tag === "Pause" && outcome.reason._tag).toBe("ApprovalPending")
      expect(model.calls).toBe(1)
      expect(outcome.chain.pendingToolCalls.map((call) => call.id)).toEqual(["a"])
      expect(outcome.chain.roundResults.map((result) => result.id)).toEqual(["b"])
    }))

  it.effect("callLlm on a chain whose tool calls have not run ends with InvalidInput, keeping the chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ id: "b", name: "lookup", params: { q: "x" } }] }, { text: "no" }])
      const once = (c: Chain.Chain) => Step.start(c).pipe(Step.callLlm, Step.callLlm)
      const error = yield* Effect.flip(
        Chain.run(start(), { mode: (c) => once(c) }).pipe(Effect.provide([model.layer, handlers]))
      )
      expect(error.reason._tag).toBe("InvalidInput")
      expect(error.message).toContain("the model cannot be called while tool calls of the last turn have no result")
      expect(model.calls).toBe(1)
      expect(error.chain.pendingToolCalls.map((call) => call.id)).toEqual(["b"])
    }))
})

describe("a resumed run continues the maxRuns budget of the run that paused", () => {
  const script = () =>
    ChatModel.scripted([{ toolCalls: [{ name: "lookup", params: { q: "again" } }] }], { repeat: true })

  it.effect("paused by a stop after one call and resumed: fails at the same runCount as a run never paused", () =>
    Effect.gen(function*() {
      const straight = script()
      const never = yield* Effect.flip(
        Chain.run(start(), { mode: Mode.whileNeedsResponse, maxRuns: 2 }).pipe(Effect.provide([straight.layer, handlers]))
      )
      expect(never.message).toBe("Exceeded maximum number of runs (2/2)")
      expect(never.chain.runCount).toBe(2)

      const model = script()
      const stop = yield* StopSignal.make
      const stoppingHandlers = toolkit.toLayer({
        lookup: ({ q }) => Effect.as(StopSignal.request(stop), `found ${q}`),
        delete_file: ({ path }) => Effect.succeed(`deleted ${path}`)
      })
      const paused = yield* Chain.run(start(), { mode: Mode.whileNeedsResponse, maxRuns: 2, stop }).pipe(
        Effect.provide([model.layer, stoppingHandlers])
      )
      expect(paused._tag).toBe("Pause")
      expect(paused.chain.runCount).toBe(1)
      // the budget start travels with the paused chain (also through JSON)
      const stored = yield* Chain.decode(JSON.stringify(yield* Chain.encode(paused.chain)), { toolkit })
      const resumed = yield* Effect.flip(
        Chain.run(stored, { mode: Mode.whileNeedsResponse, maxRuns: 2 }).pipe(Effect.provide([model.layer, handlers]))
      )
      expect(resumed.message).toBe("Exceeded maximum number of runs (2/2)")
      expect(resumed.chain.runCount).toBe(2)
      expect(yield* Chain.encode(resumed.chain)).toEqual(yield* Chain.encode(never.chain))
    }))

  it.effect("a finished run leaves no budget behind: the next question gets a fresh one", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Done." }, { text: "Again." }])
      const first = yield* Chain.run(start(), { mode: Mode.whileNeedsResponse, maxRuns: 1 }).pipe(
        Effect.provide([model.layer, handlers])
      )
      expect(first.chain.modeState).toEqual({})
      const second = yield* Chain.run(first.chain.pipe(Chain.addUser("And now?")), { mode: Mode.whileNeedsResponse, maxRuns: 1 })
        .pipe(Effect.provide([model.layer, handlers]))
      expect(second._tag === "Ok" && second.reason).toBe("done")
    }))
})

describe("decoding and transcript validity around a pause", () => {
  const pausedForApproval = Effect.gen(function*() {
    // Replies depend on the conversation, since each Effect.provide of the layer starts the script afresh.
    const model = ChatModel.scripted([
      (request) =>
        request.prompt.content.some((message) => message.role === "tool")
          ? { text: "Deleted." }
          : { toolCalls: [{ id: "a", name: "delete_file", params: { path: "/tmp/x" } }] }
    ], { repeat: true })
    const paused = yield* Chain.run(start(), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, handlers]))
    return { model, paused }
  })

  it.effect("a chain with decided calls does not decode without their tools", () =>
    Effect.gen(function*() {
      const { paused } = yield* pausedForApproval
      const approved = yield* Approval.decide(paused.chain, { a: Approval.approve })
      const json = JSON.stringify(yield* Chain.encode(approved))
      const error = yield* Effect.flip(Chain.decode(json))
      expect(error.message).toBe(
        "Cannot decode chain: the chain has tool calls waiting on tools the toolkit does not have (delete_file); pass the chain's toolkit: Chain.decode(json, { toolkit })"
      )
      const decoded = yield* Chain.decode(json, { toolkit, trustUnsignedApprovals: true })
      expect(decoded.callStates).toEqual(new Map(Object.entries({ a: { _tag: "Approved" } })))
    }))

  it.effect("a user message added during a pause comes after the round's tool message", () =>
    Effect.gen(function*() {
      const { model, paused } = yield* pausedForApproval
      const withNote = paused.chain.pipe(Chain.addUser("Only temp files, please."))
      const approved = yield* Approval.decide(withNote, { a: Approval.approve })
      const done = yield* Chain.run(approved, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, handlers]))
      expect(roles(done.chain)).toEqual(["system", "user", "assistant", "tool", "user", "assistant"])
      expect(providerValid(done.chain)).toBe(true)
      expect(model.requests.at(-1)!.prompt.content.map((message) => message.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "user"
      ])
    }))
})

describe("declarations and functions that go wrong end with a typed error and the chain", () => {
  it.effect("an invalid ToolTimeout annotation is rejected before any model call", () =>
    Effect.gen(function*() {
      const Bad = Lookup.annotate(ToolTimeout.Annotation, "soon" as unknown as number)
      const badToolkit = Toolkit.make(Bad)
      const model = ChatModel.scripted([{ text: "never" }])
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "hi", toolkit: badToolkit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, badToolkit.toLayer({ lookup: () => Effect.succeed("x") })])
        )
      )
      expect(error.reason._tag).toBe("InvalidInput")
      expect(error.message).toBe(
        "Invalid ToolTimeout of tool 'lookup': must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got \"soon\")"
      )
      expect(model.calls).toBe(0)
    }))

  const boom = () => {
    throw new Error("boom")
  }
  const rows: ReadonlyArray<{ readonly policy: string; readonly options: Partial<Chain.RunOptions<ChatModel.ChatModel>> }> = [
    { policy: "noTool", options: { mode: Mode.whileNeedsResponse, noTool: boom } },
    { policy: "onMaxRuns", options: { mode: Mode.whileNeedsResponse, maxRuns: 1, onMaxRuns: boom } },
    { policy: "shouldContinue", options: { mode: Mode.step, shouldContinue: boom } },
    {
      policy: "checkPause",
      options: { mode: (c) => Step.start(c).pipe(Step.callLlm, Step.checkPause(boom), Step.continueOrDone(() => Effect.die("unreachable"))) }
    }
  ]
  for (const row of rows) {
    it.effect(`a ${row.policy} function that throws ends with PolicyFailed`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([
          row.policy === "onMaxRuns" ? { toolCalls: [{ name: "lookup", params: { q: "x" } }] } : { text: "Hello." }
        ])
        const error = yield* Effect.flip(
          Chain.run(start(), { mode: Mode.whileNeedsResponse, ...row.options }).pipe(Effect.provide([model.layer, handlers]))
        )
        expect(error.reason).toBeInstanceOf(LoopError.PolicyFailed)
        expect(error.message).toBe(`The ${row.policy} function failed: boom`)
        expect(error.chain.runCount).toBe(1)
      }))
  }
})

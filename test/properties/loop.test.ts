/**
 * Property tests of the loop (whileNeedsResponse): random model scripts —
 * text, several calls per turn to known and unknown tools, valid and invalid
 * arguments, failing handlers, ReturnBehavior annotations, handlers that
 * return directly — and random maxRuns. On every case:
 *
 * 1. the outcome and the number of model calls agree with a reference model of
 *    the rules written independently here (ReturnBehavior, direct return,
 *    maxFailures, maxRuns), and model calls never exceed maxRuns;
 * 2. every tool call in the chain has exactly one result, in the next message,
 *    in call order (a paused round: each call pending or answered, once);
 * 3. stopping after any model call, encoding the paused chain to JSON,
 *    decoding it and resuming with a fresh model ends with the same outcome and
 *    the same final chain as the uninterrupted run;
 * 4. with approval-needing and external tools too (and random concurrency),
 *    granting every approval and supplying every external result after a
 *    JSON round-trip at each pause ends exactly as a run without pauses.
 *
 * Failing cases shrink to the smallest script that breaks the property.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { Prompt } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  ExternalTool,
  Mode,
  type Outcome,
  StopSignal
} from "../../src/index.ts"
import { Direct, Fails, Immediate, Last, parameters, Plain } from "../support/tools.ts"

// -- tools ---------------------------------------------------------------------------
const toolkit = Toolkit.make(Plain, Immediate, Last, Fails, Direct)
const handlers = toolkit.toLayer({
  plain: ({ x }) => Effect.succeed(`plain ${x}`),
  immediate: ({ x }) => Effect.succeed(`immediate ${x}`),
  last: ({ x }) => Effect.succeed(`last ${x}`),
  fails: () => Effect.fail("boom"),
  direct: ({ x }) => DirectReturn.final(`direct ${x}`)
})

// -- scenarios -----------------------------------------------------------------------
const ToolName = Schema.Literals(["plain", "immediate", "last", "fails", "direct", "unknown"])
const Call = Schema.Struct({ tool: ToolName, valid: Schema.Boolean })
const Turn = Schema.Struct({ calls: Schema.Array(Call) })
const Scenario = Schema.Struct({
  turns: Schema.Array(Turn),
  maxRuns: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })),
  stopAfter: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 }))
})
type Scenario = typeof Scenario.Type

/** At most 6 turns of at most 3 calls: enough for every rule, small enough to read. */
const normalize = (scenario: Scenario): ReadonlyArray<ReadonlyArray<typeof Call.Type>> =>
  scenario.turns.slice(0, 6).map((turn) => turn.calls.slice(0, 3))

// -- the reference model of the rules ---------------------------------------------------
type Expected =
  | { readonly tag: "Ok"; readonly reason: "done" | "direct-return" | "return-behavior"; readonly modelCalls: number }
  | { readonly tag: "Error"; readonly error: "MaxRunsExceeded" | "MaxFailuresExceeded"; readonly modelCalls: number }

const reference = (turns: ReadonlyArray<ReadonlyArray<typeof Call.Type>>, maxRuns: number): Expected => {
  let runs = 0
  let failedRounds = 0
  for (let i = 0;; i++) {
    if (runs >= maxRuns) return { tag: "Error", error: "MaxRunsExceeded", modelCalls: runs }
    const calls = turns[i] ?? []
    runs++
    if (calls.length === 0) return { tag: "Ok", reason: "done", modelCalls: runs }
    const failed = calls.map((call) => !call.valid || call.tool === "fails" || call.tool === "unknown")
    const anyFailed = failed.includes(true)
    failedRounds = anyFailed ? failedRounds + 1 : 0
    if (failedRounds >= 3) return { tag: "Error", error: "MaxFailuresExceeded", modelCalls: runs }
    if (anyFailed) continue
    if (calls.some((call) => call.tool === "direct")) return { tag: "Ok", reason: "direct-return", modelCalls: runs }
    const behavior = (tool: string) => tool === "immediate" ? "IMMEDIATE" : tool === "last" ? "IMMEDIATE_IF_LAST" : "TO_LLM"
    const behaviors = calls.map((call) => behavior(call.tool))
    if (behaviors[behaviors.length - 1] === "IMMEDIATE_IF_LAST" || behaviors.every((b) => b !== "TO_LLM")) {
      return { tag: "Ok", reason: "return-behavior", modelCalls: runs }
    }
  }
}

// -- running a scenario ---------------------------------------------------------------
/** The model: its turn is the number of assistant messages so far, so a resumed chain continues the script. */
const modelFor = (
  turns: ReadonlyArray<ReadonlyArray<{ readonly tool: string; readonly valid: boolean }>>,
  onCall: (n: number) => Effect.Effect<void>
) => {
  let n = 0
  return ChatModel.scripted([(request) =>
    Effect.as(onCall(++n), (() => {
      const turn = request.prompt.content.filter((message) => message.role === "assistant").length
      const calls = turns[turn] ?? []
      return calls.length === 0
        ? { text: `final after ${turn} turns` }
        : {
          toolCalls: calls.map((call, i) => ({
            id: `t${turn}_${i}`,
            name: call.tool,
            params: call.valid ? { x: i } : { x: "not a number" }
          }))
        }
    })())
  ], { repeat: true, record: 0 })
}

interface Ended {
  readonly tag: "Ok" | "Pause" | "Error"
  readonly detail: string
  readonly chain: Chain.Chain
}

const ended = (run: Effect.Effect<Outcome.Final, { readonly reason: { readonly _tag: string }; readonly chain: Chain.Chain }>) =>
  Effect.match(run, {
    onSuccess: (outcome): Ended => ({
      tag: outcome._tag,
      detail: outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag,
      chain: outcome.chain
    }),
    onFailure: (error): Ended => ({ tag: "Error", detail: error.reason._tag, chain: error.chain })
  })

const start = () => Chain.make({ user: "go", toolkit })

/** Every tool call has exactly one result, in the message right after it, in call order. */
const transcriptValid = (chain: Chain.Chain): boolean =>
  chain.messages.every((message: Prompt.Message, index) => {
    if (message.role !== "assistant") return true
    const calls = message.content.flatMap((part) => part.type === "tool-call" ? [part.id] : [])
    if (calls.length === 0) return true
    const next = chain.messages[index + 1]
    if (next === undefined) {
      // an open round (paused): each call is either pending or answered in roundResults, exactly once
      const open = [...chain.pendingToolCalls.map((call) => call.id), ...chain.roundResults.map((result) => result.id)]
      return open.length === calls.length && calls.every((id) => open.includes(id))
    }
    if (next.role !== "tool") return false
    const results = next.content.flatMap((part) => part.type === "tool-result" ? [part.id] : [])
    return JSON.stringify(results) === JSON.stringify(calls)
  })

const runs = 1000

describe("properties of the loop", () => {
  it.effect.prop(
    "the outcome and model calls follow the rules; calls never exceed maxRuns; every call has one result",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const turns = normalize(scenario)
        const expected = reference(turns, scenario.maxRuns)
        const model = modelFor(turns, () => Effect.void)
        const result = yield* ended(
          Chain.run(start(), { mode: Mode.whileNeedsResponse, maxRuns: scenario.maxRuns }).pipe(
            Effect.provide([model.layer, handlers])
          )
        )
        expect({ tag: result.tag, detail: result.detail, modelCalls: result.chain.runCount }).toEqual({
          tag: expected.tag,
          detail: expected.tag === "Ok" ? expected.reason : expected.error,
          modelCalls: expected.modelCalls
        })
        expect(result.chain.runCount).toBeLessThanOrEqual(scenario.maxRuns)
        expect(transcriptValid(result.chain)).toBe(true)
      }),
    { arbitrary: { runs } }
  )

  it.effect.prop(
    "stopped after any model call, stored as JSON and resumed with a fresh model: the same end as never stopping",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const turns = normalize(scenario)
        const options = { mode: Mode.whileNeedsResponse, maxRuns: scenario.maxRuns }
        const straight = yield* ended(
          Chain.run(start(), options).pipe(Effect.provide([modelFor(turns, () => Effect.void).layer, handlers]))
        )

        const stop = yield* StopSignal.make
        const stopping = modelFor(turns, (n) => n === scenario.stopAfter ? StopSignal.request(stop) : Effect.void)
        let result = yield* ended(Chain.run(start(), { ...options, stop }).pipe(Effect.provide([stopping.layer, handlers])))
        if (result.tag === "Pause") {
          expect(result.detail).toBe("StopRequested")
          expect(transcriptValid(result.chain)).toBe(true)
          const json = JSON.stringify(yield* Chain.encode(result.chain))
          const restored = yield* Chain.decode(json, { toolkit })
          expect(JSON.stringify(yield* Chain.encode(restored))).toBe(json)
          result = yield* ended(Chain.run(restored, options).pipe(Effect.provide([modelFor(turns, () => Effect.void).layer, handlers])))
        }
        expect({ tag: result.tag, detail: result.detail }).toEqual({ tag: straight.tag, detail: straight.detail })
        expect(yield* Chain.encode(result.chain)).toEqual(yield* Chain.encode(straight.chain))
      }),
    { arbitrary: { runs } }
  )

  // Human in the loop: the same scripts, with two more tools that pause the loop — one needs approval,
  // one is external. Every pause is stored as JSON and read back; approvals are granted and external
  // results supplied (the value a local handler would return). The end must equal a run of the same
  // script where those tools simply run.
  const gated = {
    parameters,
    success: Schema.String
  }
  const GatedLocal = Tool.make("gated", gated)
  const RemoteLocal = Tool.make("remote", gated)
  const pausingToolkit = Toolkit.merge(
    Toolkit.make(Plain, Immediate, Last, Fails, Direct, Tool.make("gated", { ...gated, needsApproval: true })),
    Toolkit.make(ExternalTool.mark(Tool.make("remote", gated)))
  )
  const directToolkit = Toolkit.make(Plain, Immediate, Last, Fails, Direct, GatedLocal, RemoteLocal)
  const pausingHandlers = Toolkit.make(Plain, Immediate, Last, Fails, Direct, Tool.make("gated", { ...gated, needsApproval: true }))
    .toLayer({
      plain: ({ x }) => Effect.succeed(`plain ${x}`),
      immediate: ({ x }) => Effect.succeed(`immediate ${x}`),
      last: ({ x }) => Effect.succeed(`last ${x}`),
      fails: () => Effect.fail("boom"),
      direct: ({ x }) => DirectReturn.final(`direct ${x}`),
      gated: ({ x }) => Effect.succeed(`gated ${x}`)
    })
  const directHandlers = directToolkit.toLayer({
    plain: ({ x }) => Effect.succeed(`plain ${x}`),
    immediate: ({ x }) => Effect.succeed(`immediate ${x}`),
    last: ({ x }) => Effect.succeed(`last ${x}`),
    fails: () => Effect.fail("boom"),
    direct: ({ x }) => DirectReturn.final(`direct ${x}`),
    gated: ({ x }) => Effect.succeed(`gated ${x}`),
    remote: ({ x }) => Effect.succeed(`remote ${x}`)
  })
  const GatedCall = Schema.Struct({
    tool: Schema.Literals(["plain", "immediate", "last", "fails", "direct", "unknown", "gated", "remote"]),
    valid: Schema.Boolean
  })
  const GatedScenario = Schema.Struct({
    turns: Schema.Array(Schema.Struct({ calls: Schema.Array(GatedCall) })),
    maxRuns: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })),
    concurrency: Schema.Literals([1, "unbounded"])
  })

  it.effect.prop(
    "with approval and external tools: approving and supplying after a JSON round-trip at every pause ends as a run without pauses",
    { scenario: GatedScenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const turns = scenario.turns.slice(0, 5).map((turn) => turn.calls.slice(0, 3))
        const options = { mode: Mode.whileNeedsResponse, maxRuns: scenario.maxRuns, concurrency: scenario.concurrency }
        const straight = yield* ended(
          Chain.run(Chain.make({ user: "go", toolkit: directToolkit }), options).pipe(
            Effect.provide([modelFor(turns, () => Effect.void).layer, directHandlers])
          )
        )
        let result = yield* ended(
          Chain.run(Chain.make({ user: "go", toolkit: pausingToolkit }), options).pipe(
            Effect.provide([modelFor(turns, () => Effect.void).layer, pausingHandlers])
          )
        )
        let pauses = 0
        while (result.tag === "Pause") {
          expect(++pauses).toBeLessThanOrEqual(12)
          expect(transcriptValid(result.chain)).toBe(true)
          let chain: Chain.Chain = yield* Chain.decode(JSON.stringify(yield* Chain.encode(result.chain)), {
            toolkit: pausingToolkit
          })
          if (result.detail === "ApprovalPending") {
            chain = yield* Approval.decide(chain, Object.fromEntries(Approval.pending(chain).map((call) => [call.id, Approval.approve])))
          } else {
            expect(result.detail).toBe("ExternalPending")
            chain = yield* ExternalTool.supply(
              chain,
              Object.fromEntries(ExternalTool.pending(chain).map((call) => [call.id, { result: `remote ${(call.params as { x: number }).x}` }]))
            )
          }
          result = yield* ended(
            Chain.run(chain, options).pipe(Effect.provide([modelFor(turns, () => Effect.void).layer, pausingHandlers]))
          )
        }
        expect({ tag: result.tag, detail: result.detail }).toEqual({ tag: straight.tag, detail: straight.detail })
        expect(yield* Chain.encode(result.chain)).toEqual(yield* Chain.encode(straight.chain))
      }),
    { arbitrary: { runs } }
  )
})

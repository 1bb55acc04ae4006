/**
 * Durable runs are the same runs: over random model scripts (plain calls,
 * failing handlers, unknown tools, bad arguments, calls that wait for an
 * approval) and random options (every built-in mode, maxRuns, maxFailures,
 * concurrency, onMaxRuns, onToolFailure per kind, noTool), a durable run on
 * the memory engine — its approvals answered through `DurableChain.decide` —
 * ends with the same outcome and the same chain document as `Chain.run`
 * with the same answers given through `Approval.decide`.
 *
 * And the steps a durable run records are a golden list per scenario, read
 * from the engine's own message table of a SQLite store.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { SqlClient } from "effect/sql/SqlClient"
import { WorkflowEngine } from "effect/workflow"
import { Approval, Chain, ChatModel, ExternalTool, Mode, NoToolPolicy } from "../../src/index.ts"
import { DurableChain, DurableSqlite, WaitingCalls } from "../../src/durable/index.ts"
import { Fails, parameters, Plain } from "../support/tools.ts"

const Guarded = Tool.make("guarded", { parameters, success: Schema.String, needsApproval: true })
const Outside = ExternalTool.mark(Tool.make("outside", { parameters, success: Schema.String }))
const toolkit = Toolkit.make(Plain, Fails, Guarded, Outside)
const handlers = toolkit.toLayer({
  plain: ({ x }) => Effect.as(Effect.repeat(Effect.yieldNow, { times: 3 - x }), `plain ${x}`),
  fails: () => Effect.fail("boom"),
  guarded: ({ x }) => Effect.succeed(`guarded ${x}`),
  outside: () => Effect.die(new Error("an external tool's handler never runs"))
})

const Call = Schema.Struct({ tool: Schema.Literals(["plain", "fails", "guarded", "unknown"]), valid: Schema.Boolean })
type Call = typeof Call.Type
const FailurePolicy = Schema.Literals(["feed-back", "fail"])
const Scenario = Schema.Struct({
  turns: Schema.Array(Schema.Array(Call).check(Schema.isMaxLength(3))).check(Schema.isMaxLength(4)),
  mode: Schema.Literals(["whileNeedsResponse", "untilSuccess", "step", "untilToolUsed"]),
  maxRuns: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
  maxFailures: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
  concurrency: Schema.Literals([1, "unbounded"]),
  noTool: Schema.Literals(["unset", "done", "reminder"]),
  onMaxRuns: Schema.Literals(["fail", "stop", "final-answer"]),
  onToolFailure: Schema.Struct({ "unknown-tool": FailurePolicy, parameters: FailurePolicy, handler: FailurePolicy })
})
type Scenario = typeof Scenario.Type

const modeOf = (scenario: Scenario): Mode.Mode<ChatModel.ChatModel> =>
  scenario.mode === "untilToolUsed" ? Mode.untilToolUsed("guarded") : Mode[scenario.mode]

const optionsOf = (scenario: Scenario) => ({
  mode: modeOf(scenario),
  maxRuns: scenario.maxRuns,
  maxFailures: scenario.maxFailures,
  concurrency: scenario.concurrency,
  onMaxRuns: scenario.onMaxRuns,
  onToolFailure: scenario.onToolFailure,
  ...(scenario.noTool === "unset" ? {} : { noTool: scenario.noTool === "done" ? "done" as const : NoToolPolicy.remind("done") }),
  ...(scenario.mode === "step" ? { shouldContinue: (chain: Chain.Chain) => chain.needsResponse } : {})
})

/** Replay-safe: turn t is read from the request, never from a counter. */
const modelFor = (scenario: Scenario) =>
  ChatModel.scripted([(request) => {
    const t = request.prompt.content.filter((message) => message.role === "assistant").length
    const calls = request.toolChoice === "none" ? [] : scenario.turns[t] ?? []
    return calls.length === 0 ? { text: `answer ${t}` } : {
      text: `working ${t}`,
      toolCalls: calls.map((call, i) => ({ id: `t${t}_${i}`, name: call.tool, params: call.valid ? { x: i } : { x: "NaN" } }))
    }
  }], { repeat: true })

/** The human: approves calls with an even `x`, rejects the others. */
const decisionsFor = (calls: ReadonlyArray<{ readonly callId: string; readonly params: unknown }>) => {
  const decisions: Record<string, Approval.Decision> = Object.create(null)
  for (const call of calls) decisions[call.callId] = (call.params as { x?: unknown }).x === 0 ? Approval.approve : Approval.reject("no")
  return decisions
}

interface Ending {
  readonly tag: "Finished" | "Paused" | "Failed"
  readonly reason: string
  readonly document: unknown
}

const plainRun = (scenario: Scenario) =>
  Effect.gen(function*() {
    let chain: Chain.Chain = Chain.make({ user: "go", toolkit })
    for (let rounds = 0; rounds < 50; rounds++) {
      const result = yield* Effect.result(Chain.run(chain, optionsOf(scenario)))
      if (result._tag === "Failure") {
        return { tag: "Failed", reason: result.failure.reason._tag, document: yield* Chain.encode(result.failure.chain) } satisfies Ending
      }
      const outcome = result.success
      if (outcome._tag === "Pause" && outcome.reason._tag === "ApprovalPending") {
        chain = yield* Approval.decide(outcome.chain, decisionsFor(outcome.reason.calls.map((call) => ({ callId: call.id, params: call.params }))))
        continue
      }
      const document = yield* Chain.encode(outcome.chain)
      return outcome._tag === "Ok"
        ? { tag: "Finished", reason: outcome.reason, document } satisfies Ending
        : { tag: "Paused", reason: outcome.reason._tag, document } satisfies Ending
    }
    return yield* Effect.die(new Error("the plain run never ended"))
  }).pipe(Effect.provide([modelFor(scenario).layer, handlers]))

let executions = 0
const durableRun = (scenario: Scenario) => {
  const Run = DurableChain.workflow("Equivalence", {
    input: Schema.Struct({ id: Schema.String }),
    idempotencyKey: ({ id }) => id,
    toolkit,
    chain: () => Chain.make({ user: "go", toolkit }),
    ...optionsOf(scenario)
  })
  const live = DurableChain.layer(Run).pipe(
    Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, WaitingCalls.layerMemory)),
    Layer.provide([modelFor(scenario).layer, handlers])
  )
  return Effect.gen(function*() {
    const id = yield* Run.execute({ id: `e${++executions}` }, { discard: true })
    for (let turn = 0; turn < 5_000; turn++) {
      const polled = yield* Run.poll(id)
      if (Option.isSome(polled) && polled.value._tag === "Complete") {
        const exit = polled.value.exit
        if (exit._tag === "Success") {
          return { tag: exit.value._tag, reason: exit.value.reason, document: JSON.parse(exit.value.document) } satisfies Ending
        }
        const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
        if (failure === undefined || failure._tag !== "Fail") return yield* Effect.die(new Error(`the durable run died: ${String(exit.cause)}`))
        return { tag: "Failed", reason: failure.error.reason, document: JSON.parse(failure.error.document) } satisfies Ending
      }
      const waiting = yield* DurableChain.pending(Run, id)
      if (waiting.length > 0) yield* DurableChain.decide(Run, id, decisionsFor(waiting))
      else yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error("the durable run never ended"))
  }).pipe(Effect.provide(live))
}

describe("durable runs are the same runs", () => {
  it.effect.prop(
    "outcome and chain document equal Chain.run's, approvals answered the same way",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const plain = yield* plainRun(scenario)
        const durable = yield* durableRun(scenario)
        expect(durable).toEqual(JSON.parse(JSON.stringify(plain)))
      }),
    { arbitrary: { runs: 150 } }
  )

  it.effect("the generated cases wait for approvals and end every way (so the property compares every path)", () =>
    Effect.gen(function*() {
      const scenarios = yield* Arbitrary.sampleEffect(Arbitrary.schema(Scenario), { count: 150, seed: "loopwork" })
      const approvals = scenarios.filter((scenario) => scenario.turns.some((turn) => turn.some((call) => call.tool === "guarded" && call.valid)))
      expect(approvals.length).toBeGreaterThan(30)
      const endings = new Set<string>()
      for (const scenario of scenarios.slice(0, 60)) {
        const ending = yield* plainRun(scenario)
        endings.add(`${ending.tag} ${ending.reason}`)
      }
      for (const ending of ["Finished done", "Failed MaxRunsExceeded", "Failed ToolCallFailed", "Failed MaxFailuresExceeded"]) {
        expect([...endings]).toContain(ending)
      }
    }))
})

// -- golden lists of recorded steps ------------------------------------------------------

const goldenRun = (turns: ReadonlyArray<ReadonlyArray<readonly [string, string]>>, version: number, answer?: "approve" | "supply") => {
  const model = ChatModel.scripted([(request) => {
    const t = request.prompt.content.filter((message) => message.role === "assistant").length
    const calls = turns[t] ?? []
    return calls.length === 0 ? { text: "done" } : { toolCalls: calls.map(([id, name]) => ({ id, name, params: { x: 0 } })) }
  }], { repeat: true })
  const Run = DurableChain.workflow("Golden", {
    input: Schema.Struct({ id: Schema.String }),
    idempotencyKey: ({ id }) => id,
    toolkit,
    chain: () => Chain.make({ user: "go", toolkit }),
    mode: Mode.whileNeedsResponse,
    version
  })
  const live = DurableChain.layer(Run).pipe(
    Layer.provideMerge(DurableSqlite.runner({ filename: ":memory:", pollInterval: "10 millis" })),
    Layer.provide([model.layer, handlers])
  )
  return Effect.gen(function*() {
    const id = yield* Run.execute({ id: "g" }, { discard: true })
    const complete = Effect.map(Run.poll(id), (polled) => Option.isSome(polled) && polled.value._tag === "Complete")
    for (let turn = 0; turn < 2_000 && !(yield* complete); turn++) {
      const waiting = yield* DurableChain.pending(Run, id)
      if (waiting.length > 0 && answer === "approve") yield* DurableChain.decide(Run, id, decisionsFor(waiting))
      if (waiting.length > 0 && answer === "supply") {
        const results: Record<string, ExternalTool.Supplied> = Object.create(null)
        for (const call of waiting) results[call.callId] = { result: "from outside" }
        yield* DurableChain.supply(Run, id, results)
      }
      yield* Effect.sleep("5 millis")
    }
    const sql = yield* SqlClient
    const rows = yield* sql<{ payload: string }>`SELECT payload FROM cluster_messages WHERE tag = 'activity' ORDER BY rowid`
    return rows.map((row) => (JSON.parse(row.payload) as { name: string }).name)
  }).pipe(Effect.provide(live))
}

describe("the steps a durable run records (golden lists)", () => {
  it.live.each([
    { scenario: "a plain answer", turns: [], version: 1, answer: undefined, steps: ["loopwork/version", "v1/model/1"] },
    {
      scenario: "two rounds",
      turns: [[["c1", "plain"], ["c2", "plain"]], [["c3", "plain"]]],
      version: 1,
      answer: undefined,
      steps: ["loopwork/version", "v1/model/1", "v1/tool/c1/1", "v1/tool/c2/1", "v1/model/2", "v1/tool/c3/1", "v1/model/3"]
    },
    {
      scenario: "a failing handler, fed back",
      turns: [[["f1", "fails"]]],
      version: 1,
      answer: undefined,
      steps: ["loopwork/version", "v1/model/1", "v1/tool/f1/1", "v1/model/2"]
    },
    {
      scenario: "an approval",
      turns: [[["g1", "guarded"], ["c1", "plain"]]],
      version: 1,
      answer: "approve",
      steps: ["loopwork/version", "v1/model/1", "v1/tool/c1/1", "v1/wait/g1", "v1/answered/g1", "v1/tool/g1/1", "v1/model/2"]
    },
    {
      scenario: "an external result",
      turns: [[["e1", "outside"]]],
      version: 1,
      answer: "supply",
      steps: ["loopwork/version", "v1/model/1", "v1/wait/e1", "v1/answered/e1", "v1/model/2"]
    },
    { scenario: "version 2", turns: [[["c1", "plain"]]], version: 2, answer: undefined, steps: ["loopwork/version", "v2/model/1", "v2/tool/c1/1", "v2/model/2"] }
  ] as const)("$scenario", ({ answer, steps, turns, version }) =>
    Effect.map(goldenRun(turns, version, answer), (recorded) => expect(recorded).toEqual(steps)))
})

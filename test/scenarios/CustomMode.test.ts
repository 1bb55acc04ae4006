/**
 * A custom mode is as complete as a built-in:
 *
 * - the README's `withAudit` (`Step.forRun` + `Mode.loop` + one audit step)
 *   ends every scenario exactly as `Mode.whileNeedsResponse` does: maxRuns
 *   and its policies, onToolFailure, a stop, approvals, direct return,
 *   ReturnBehavior, the no-tool policy, a resumed budget;
 * - whatever the pipeline, a run makes at most `maxRuns` model calls (the
 *   README's old pipeline, with `checkMaxRuns` after `callLlm`, made 11 calls
 *   at `maxRuns: 5`), and the run's `onMaxRuns` policy applies at the limit;
 * - a mode's own options type-check through `Chain.run`, and a typo in a
 *   built-in option is still an error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  Mode,
  Outcome,
  ReturnBehavior,
  Step,
  StopSignal
} from "../../src/index.ts"
import { Guarded } from "../support/tools.ts"

// -----------------------------------------------------------------------------
// The README's custom mode
// -----------------------------------------------------------------------------

const audited: Array<number> = []
const audit = Step.make((chain) => Effect.sync(() => (audited.push(chain.runCount), new Outcome.Continue(chain))))

const withAudit: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
  const s = Step.forRun(chain, options)
  return Mode.loop(chain, (self) =>
    self.pipe(
      s.executeTools,
      s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior,
      s.checkMaxRuns,
      s.callLlm, s.checkNoTool, audit
    ))
}

// -----------------------------------------------------------------------------
// Tools and scripts
// -----------------------------------------------------------------------------

const Echo = Tool.make("echo", { parameters: Schema.Struct({ x: Schema.Number }), success: Schema.Number })
const Fails = Tool.make("fails", { parameters: Schema.Struct({}), success: Schema.String, failure: Schema.String })
const Direct = Tool.make("direct", { parameters: Schema.Struct({}), success: Schema.String })
const Submit = Tool.make("submit", { parameters: Schema.Struct({}), success: Schema.String })
  .annotate(ReturnBehavior.Annotation, "IMMEDIATE")
const Stopper = Tool.make("stopper", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Echo, Fails, Direct, Submit, Guarded, Stopper)

const handlersWith = (signal: StopSignal.StopSignal) =>
  toolkit.toLayer({
    echo: ({ x }) => Effect.succeed(x),
    fails: () => Effect.fail("boom"),
    direct: () => DirectReturn.final("the answer"),
    submit: () => Effect.succeed("submitted"),
    guarded: () => Effect.succeed("done"),
    stopper: () => Effect.as(StopSignal.request(signal), "stopping")
  })

type Reply = ChatModel.ScriptedReply
const calling = (name: string, params: object = {}): Reply => ({ toolCalls: [{ name, params }] })

interface Scenario {
  readonly name: string
  readonly turns: ReadonlyArray<Reply>
  readonly options: Omit<Mode.Options, "stop">
  readonly withStop?: boolean
}

const scenarios: ReadonlyArray<Scenario> = [
  { name: "a plain answer", turns: [{ text: "hi" }], options: {} },
  { name: "two tool rounds, then an answer", turns: [calling("echo", { x: 1 }), calling("echo", { x: 2 }), { text: "3" }], options: {} },
  { name: "maxRuns 3, the model never stops calling", turns: Array(10).fill(calling("echo", { x: 1 })), options: { maxRuns: 3 } },
  {
    name: "maxRuns 2, onMaxRuns stop",
    turns: Array(10).fill(calling("echo", { x: 1 })),
    options: { maxRuns: 2, onMaxRuns: "stop" }
  },
  {
    name: "maxRuns 2, onMaxRuns final-answer",
    turns: [calling("echo", { x: 1 }), calling("echo", { x: 1 }), { text: "final" }],
    options: { maxRuns: 2, onMaxRuns: "final-answer" }
  },
  { name: "onToolFailure handler: fail", turns: [calling("fails"), { text: "x" }], options: { onToolFailure: { handler: "fail" } } },
  { name: "maxFailures 2", turns: [calling("fails"), calling("fails"), { text: "x" }], options: { maxFailures: 2 } },
  { name: "a direct return", turns: [calling("direct"), { text: "x" }], options: {} },
  { name: "a direct return remembered as an answer", turns: [calling("direct"), { text: "x" }], options: { returnMemory: "answer" } },
  { name: "ReturnBehavior IMMEDIATE", turns: [calling("submit"), { text: "x" }], options: {} },
  { name: "an approval pauses", turns: [calling("guarded"), { text: "x" }], options: {} },
  { name: "noTool: user pauses on a plain answer", turns: [{ text: "hi" }], options: { noTool: "user" } },
  { name: "a stop requested by a tool", turns: [calling("stopper"), { text: "x" }], options: {}, withStop: true },
  { name: "concurrency 1, toolTimeout", turns: [calling("echo", { x: 1 }), { text: "y" }], options: { concurrency: 1, toolTimeout: "1 second" } }
]

interface Ended {
  readonly tag: string
  readonly detail: string
  readonly runCount: number
  readonly roles: string
}

const runWith = (mode: Mode.Mode<ChatModel.ChatModel>, scenario: Scenario, chain?: Chain.Chain) =>
  Effect.gen(function*() {
    const signal = yield* StopSignal.make
    const model = ChatModel.scripted(scenario.turns)
    const start = chain ?? Chain.make({ user: "go", toolkit })
    const options = scenario.withStop === true ? { ...scenario.options, stop: signal } : scenario.options
    return yield* Chain.run(start, { mode, ...options }).pipe(
      Effect.match({
        onSuccess: (outcome): Ended & { readonly chain: Chain.Chain } => ({
          tag: outcome._tag,
          detail: outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag,
          runCount: outcome.chain.runCount,
          roles: outcome.chain.messages.map((m) => m.role).join(","),
          chain: outcome.chain
        }),
        onFailure: (error): Ended & { readonly chain: Chain.Chain } => ({
          tag: "Error",
          detail: error.reason._tag,
          runCount: error.chain.runCount,
          roles: error.chain.messages.map((m) => m.role).join(","),
          chain: error.chain
        })
      }),
      Effect.provide([model.layer, handlersWith(signal)])
    )
  })

describe("the README's custom mode ends every scenario as whileNeedsResponse does", () => {
  for (const scenario of scenarios) {
    it.effect(scenario.name, () =>
      Effect.gen(function*() {
        const builtIn = yield* runWith(Mode.whileNeedsResponse, scenario)
        audited.length = 0
        const custom = yield* runWith(withAudit, scenario)
        const { chain: _b, ...expected } = builtIn
        const { chain: _c, ...actual } = custom
        expect(actual).toEqual(expected)
        expect(JSON.stringify(yield* Chain.encode(custom.chain))).toBe(JSON.stringify(yield* Chain.encode(builtIn.chain)))
        // The audit step saw every model call that completed.
        expect(audited.length).toBeLessThanOrEqual(custom.runCount)
      }))
  }

  it.effect("a paused run resumed continues the same maxRuns budget in both", () =>
    Effect.gen(function*() {
      const scenario: Scenario = { name: "", turns: [calling("guarded"), ...Array(10).fill(calling("echo", { x: 1 }))], options: { maxRuns: 3 } }
      for (const mode of [Mode.whileNeedsResponse, withAudit]) {
        const paused = yield* runWith(mode, scenario)
        expect(paused.detail).toBe("ApprovalPending")
        const approved = yield* Approval.decide(paused.chain, Approval.pending(paused.chain).map((c) => [c.id, Approval.approve] as const)
          .reduce((all, [id, d]) => ({ ...all, [id]: d }), {}))
        const resumed = yield* runWith(mode, { ...scenario, turns: scenario.turns.slice(1) }, approved)
        expect([resumed.tag, resumed.detail, resumed.runCount]).toEqual(["Error", "MaxRunsExceeded", 3])
      }
    }))
})

// -----------------------------------------------------------------------------
// Every pipeline is bounded
// -----------------------------------------------------------------------------

describe("whatever the pipeline, a run makes at most maxRuns model calls", () => {
  const endless = () => ChatModel.scripted([calling("echo", { x: 1 })], { repeat: true })

  /** The README's pipeline before: checkMaxRuns after callLlm never fires while calls are pending. */
  const oldReadmeMode: Mode.Mode<ChatModel.ChatModel> = (chain, options) => {
    const checkMaxRuns = Step.checkMaxRuns({ ...options, since: chain.runCount })
    const next = Step.continueOrDone((c: Chain.Chain) => loop(c))
    const loop = (c: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
      Step.start(c).pipe(Step.executeTools, Step.callLlm, checkMaxRuns, next)
    return loop(chain)
  }
  /** No checkMaxRuns at all. */
  const unchecked: Mode.Mode<ChatModel.ChatModel> = (chain) =>
    Mode.loop(chain, (self) => self.pipe(Step.executeTools, Step.callLlm))

  const rows: ReadonlyArray<readonly [string, Mode.Mode<ChatModel.ChatModel>, Mode.Options, string, string]> = [
    ["checkMaxRuns after callLlm, maxRuns 5", oldReadmeMode, { maxRuns: 5 }, "Error", "MaxRunsExceeded"],
    ["no checkMaxRuns, maxRuns 5", unchecked, { maxRuns: 5 }, "Error", "MaxRunsExceeded"],
    ["no checkMaxRuns, maxRuns 5, onMaxRuns stop", unchecked, { maxRuns: 5, onMaxRuns: "stop" }, "Ok", "max-runs"],
    ["no checkMaxRuns, default maxRuns (25)", unchecked, {}, "Error", "MaxRunsExceeded"]
  ]
  for (const [name, mode, options, tag, detail] of rows) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const model = endless()
        const signal = yield* StopSignal.make
        const ended = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode, ...options }).pipe(
          Effect.match({
            onSuccess: (o) => [o._tag, o._tag === "Ok" ? o.reason : o.reason._tag] as const,
            onFailure: (e) => ["Error", e.reason._tag] as const
          }),
          Effect.provide([model.layer, handlersWith(signal)])
        )
        expect(ended).toEqual([tag, detail])
        expect(model.calls).toBe(options.maxRuns ?? 25)
      }))
  }
})

// -----------------------------------------------------------------------------
// A mode's own options
// -----------------------------------------------------------------------------

interface PrefixOptions extends Mode.Options {
  readonly prefix: string
}
const prefixed: Mode.Mode<ChatModel.ChatModel, PrefixOptions> = (chain, options) =>
  Effect.succeed(new Outcome.Ok(chain, "done", `done with ${options.prefix}`))

describe("a mode's own options", () => {
  it.effect("type-check through Chain.run and reach the mode", () =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "go" }), { mode: prefixed, prefix: "A", maxRuns: 3 }).pipe(
        Effect.provide(ChatModel.scripted([]).layer)
      )
      expect(outcome._tag === "Ok" && outcome.extra).toBe("done with A")
    }))

  it("a missing required option and a typo are compile errors", () => {
    const chain = Chain.make({ user: "go" })
    // @ts-expect-error: `prefix` is required by the mode
    const missing = () => Chain.run(chain, { mode: prefixed })
    // @ts-expect-error: a typo in a built-in option
    const typo = () => Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRunz: 3 })
    expect([typeof missing, typeof typo]).toEqual(["function", "function"])
  })
})

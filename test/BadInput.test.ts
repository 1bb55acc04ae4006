/**
 * Bad input, everywhere: every public constructor and `run` given invalid
 * configuration or inputs fails with a typed error whose message names the
 * field and the rule — never a defect, never a model call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, ExternalTool, Mode } from "../src/index.ts"
import { Agent, Ensemble, Task } from "../src/ensemble/index.ts"

const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
const Remote = ExternalTool.mark(Tool.make("remote", { success: Schema.Number }))
const toolkit = Toolkit.merge(Toolkit.make(Transfer), Toolkit.make(Remote))
const handlers = Toolkit.make(Transfer).toLayer({ transfer: ({ amount }) => Effect.succeed(`sent ${amount}`) })
const chain = () => Chain.make({ user: "go", toolkit })

/** A chain paused with one call awaiting approval and one awaiting an external result. */
const paused = Effect.gen(function*() {
  const model = ChatModel.scripted([{
    toolCalls: [{ id: "a", name: "transfer", params: { amount: 5 } }, { id: "r", name: "remote" }]
  }])
  const outcome = yield* Chain.run(chain(), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, handlers]))
  return outcome.chain
})

const runWith = (options: Record<string, unknown>) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([{ text: "never" }])
    const result = yield* Chain.run(chain(), { mode: Mode.whileNeedsResponse, ...options } as Chain.RunOptions<ChatModel.ChatModel>)
      .pipe(Effect.provide([model.layer, handlers]))
    expect(model.calls).toBe(0)
    return result
  })

const good = Effect.gen(function*() {
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  const task = yield* Task.make({ description: "Write about {topic}", expectedOutput: "Text", agent: writer })
  return { writer, task }
})

interface Row {
  readonly input: string
  readonly attempt: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>
  /** Fragments the message must contain: the field and the rule. */
  readonly says: ReadonlyArray<string>
}

const rows: ReadonlyArray<Row> = [
  // Chain.run options
  { input: "maxRuns -1", attempt: runWith({ maxRuns: -1 }), says: ["maxRuns", "positive integer"] },
  { input: "maxRuns 0", attempt: runWith({ maxRuns: 0 }), says: ["maxRuns", "positive integer"] },
  { input: "maxRuns 1.5", attempt: runWith({ maxRuns: 1.5 }), says: ["maxRuns", "positive integer"] },
  { input: "maxRuns \"3\"", attempt: runWith({ maxRuns: "3" }), says: ["maxRuns", "positive integer"] },
  { input: "maxFailures 0", attempt: runWith({ maxFailures: 0 }), says: ["maxFailures", "positive integer"] },
  { input: "concurrency 0", attempt: runWith({ concurrency: 0 }), says: ["concurrency", "positive integer"] },
  { input: "toolTimeout -1", attempt: runWith({ toolTimeout: -1 }), says: ["toolTimeout", "positive duration"] },
  { input: "toolTimeout \"soon\"", attempt: runWith({ toolTimeout: "soon" }), says: ["toolTimeout", "positive duration"] },
  { input: "retry 3", attempt: runWith({ retry: 3 }), says: ["retry", "Schedule"] },
  { input: "stop {}", attempt: runWith({ stop: {} }), says: ["stop", "StopSignal"] },
  { input: "onMaxRuns \"explode\"", attempt: runWith({ onMaxRuns: "explode" }), says: ["onMaxRuns", "\"fail\""] },
  { input: "onToolFailure.nope", attempt: runWith({ onToolFailure: { nope: "fail" } }), says: ["onToolFailure.nope", "failure kind"] },
  { input: "onToolFailure.handler \"explode\"", attempt: runWith({ onToolFailure: { handler: "explode" } }), says: ["onToolFailure.handler", "feed-back"] },
  { input: "noTool 42", attempt: runWith({ noTool: 42 }), says: ["noTool", "reminder"] },
  { input: "noTool \"\"", attempt: runWith({ noTool: "" }), says: ["noTool", "must not be empty"] },
  { input: "returnMemory \"all\"", attempt: runWith({ returnMemory: "all" }), says: ["returnMemory", "\"results\""] },
  { input: "shouldContinue 3", attempt: runWith({ shouldContinue: 3 }), says: ["shouldContinue", "function"] },
  {
    input: "an empty chain",
    attempt: Chain.run(Chain.make({}), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(ChatModel.scripted([]).layer)),
    says: ["chain.messages", "at least one message"]
  },
  {
    input: "untilToolUsed([])",
    attempt: Chain.run(chain(), { mode: Mode.untilToolUsed([]) }).pipe(Effect.provide([ChatModel.scripted([]).layer, handlers])),
    says: ["untilToolUsed names", "at least one tool"]
  },
  {
    input: "untilToolUsed(\"nope\")",
    attempt: Chain.run(chain(), { mode: Mode.untilToolUsed("nope") }).pipe(Effect.provide([ChatModel.scripted([]).layer, handlers])),
    says: ["'nope'", "not found"]
  },
  // Chain.decode
  { input: "decode: not JSON", attempt: Chain.decode("{nope"), says: ["not valid JSON"] },
  { input: "decode: an array", attempt: Chain.decode([]), says: ["expected a JSON object"] },
  { input: "decode: another format", attempt: Chain.decode({ format: "x", version: 1 }), says: ["expected format \"loopwork/chain\""] },
  { input: "decode: version 99", attempt: Chain.decode({ format: "loopwork/chain", version: 99 }), says: ["unsupported format version 99"] },
  {
    input: "decode: tampered runCount",
    attempt: Effect.flatMap(Chain.encode(chain()), (doc) => Chain.decode({ ...doc, runCount: -4 })),
    says: ["Cannot decode chain", "runCount"]
  },
  {
    input: "decode: tampered call state",
    attempt: Effect.flatMap(paused, (c) =>
      Effect.flatMap(Chain.encode(c), (doc) => Chain.decode({ ...doc, callStates: { a: { _tag: "Maybe" } } }, { toolkit }))),
    says: ["Cannot decode chain", "callStates"]
  },
  {
    input: "decode: decided calls without their toolkit",
    attempt: Effect.flatMap(paused, (c) => Effect.flatMap(Chain.encode(c), (doc) => Chain.decode(doc))),
    says: ["toolkit does not have", "transfer"]
  },
  // Approval.decide / ExternalTool.supply
  {
    input: "decide: an unknown call id",
    attempt: Effect.flatMap(paused, (c) => Approval.decide(c, { zzz: Approval.approve })),
    says: ["'zzz'", "awaiting approval"]
  },
  {
    input: "decide: a malformed decision",
    attempt: Effect.flatMap(paused, (c) => Approval.decide(c, { a: { _tag: "Maybe" } as unknown as Approval.Decision })),
    says: ["approval decisions", "Approve, Reject or Edit"]
  },
  {
    input: "decide: edited arguments that fail the schema",
    attempt: Effect.flatMap(paused, (c) => Approval.decide(c, { a: Approval.edit({ amount: "lots" }) })),
    says: ["edited arguments", "'transfer'"]
  },
  {
    input: "supply: an id not awaiting a result",
    attempt: Effect.flatMap(paused, (c) => ExternalTool.supply(c, { a: { result: 1 } })),
    says: ["'a'", "awaiting result"]
  },
  {
    input: "supply: a result that fails the schema",
    attempt: Effect.flatMap(paused, (c) => ExternalTool.supply(c, { r: { result: "one" } })),
    says: ["result supplied", "'remote'"]
  },
  {
    input: "supply: both result and failure",
    attempt: Effect.flatMap(paused, (c) => ExternalTool.supply(c, { r: { result: 1, failure: "x" } as unknown as ExternalTool.Supplied })),
    says: ["external results", "{ result } or { failure: string }"]
  },
  // ensembles
  { input: "Agent.make: blank role", attempt: Agent.make({ role: " ", goal: "g" }), says: ["Agent role must not be blank"] },
  { input: "Agent.make: maxIterations 0", attempt: Agent.make({ role: "r", goal: "g", maxIterations: 0 }), says: ["Agent maxIterations must be > 0, got: 0"] },
  {
    input: "Task.make: maxOutputRetries -1",
    attempt: Effect.flatMap(good, ({ writer }) =>
      Task.make({ description: "d", expectedOutput: "e", agent: writer, maxOutputRetries: -1 })),
    says: ["Task maxOutputRetries must be >= 0, got: -1"]
  },
  { input: "Ensemble.make: no tasks", attempt: Effect.flatMap(good, ({ writer }) => Ensemble.make({ agents: [writer], tasks: [] })), says: ["Ensemble must have at least one task"] },
  {
    input: "Ensemble.make: an unknown role in constraints",
    attempt: Effect.flatMap(good, ({ task, writer }) =>
      Ensemble.make({ agents: [writer], tasks: [task], workflow: "HIERARCHICAL", constraints: { allowedWorkers: ["Editor"] } })),
    says: ["HierarchicalConstraints.allowedWorkers references unknown agent: 'Editor'"]
  },
  {
    input: "Ensemble.make: concurrency -2",
    attempt: Effect.flatMap(good, ({ task, writer }) => Ensemble.make({ agents: [writer], tasks: [task], workflow: "PARALLEL", concurrency: -2 })),
    says: ["concurrency", "positive integer"]
  },
  {
    input: "Ensemble.run: a missing template variable",
    attempt: Effect.flatMap(good, ({ task, writer }) =>
      Effect.flatMap(Ensemble.make({ agents: [writer], tasks: [task] }), (e) =>
        Ensemble.run(e, {}).pipe(Effect.provide(ChatModel.scripted([]).layer)))),
    says: ["Missing template variables: [topic]"]
  }
]

describe("bad input gives a typed error naming the field and the rule", () => {
  for (const row of rows) {
    it.effect(row.input, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(row.attempt)
        expect(Exit.isFailure(exit)).toBe(true)
        if (!Exit.isFailure(exit)) return
        // a typed failure, never a defect
        expect(Cause.hasDies(exit.cause)).toBe(false)
        const error = Cause.squash(exit.cause) as { readonly _tag: string; readonly message: string }
        expect(typeof error._tag).toBe("string")
        for (const fragment of row.says) expect(error.message).toContain(fragment)
      }))
  }
})

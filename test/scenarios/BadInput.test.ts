/**
 * Bad input, everywhere: every public constructor and `run` given invalid
 * configuration or inputs fails with a typed error whose message names the
 * field and the rule — never a defect, never a model call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  ExternalTool,
  LoopError,
  MaxRunsPolicy,
  Mode,
  ModelRetry,
  NoToolPolicy,
  Outcome,
  Step,
  StopSignal
} from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"

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
  // constructors that return plain data: the run refuses what they made from bad input
  {
    input: "onMaxRuns MaxRunsPolicy.finalAnswer(5)",
    attempt: runWith({ onMaxRuns: MaxRunsPolicy.finalAnswer(5 as unknown as string) }),
    says: ["onMaxRuns", "MaxRunsPolicy.finalAnswer(text)"]
  },
  {
    input: "noTool NoToolPolicy.remind(5)",
    attempt: runWith({ noTool: NoToolPolicy.remind(5 as unknown as string) }),
    says: ["noTool", "NoToolPolicy.remind(text)"]
  },
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

// -----------------------------------------------------------------------------
// Wrongly shaped values from JSON, YAML or JavaScript: each row is one bad
// value for one field. The call must not throw or die, must not silently
// succeed, must not reach the model, and must answer with the exact error
// type naming the field.
// -----------------------------------------------------------------------------

/** A value as it comes from JSON or JavaScript: the types do not stop it. */
const js = <A>(value: unknown): A => value as A

const whileNeeds = { mode: Mode.whileNeedsResponse }
const runMade = (options: unknown) => Chain.run(Chain.make(js<Chain.MakeOptions<{}>>(options)), whileNeeds)
const hi = Prompt.userMessage({ content: [Prompt.textPart({ text: "Hi" })] })
/** The current step of a pipeline that starts on a fresh chain. */
const stepOn = (step: Step.Step<ChatModel.ChatModel>) => step(Step.start(Chain.make({ user: "go", toolkit })))

interface ShapeRow {
  readonly input: string
  /** Built inside the test, so a throw at construction is caught (as a defect) rather than breaking the file. */
  readonly attempt: () => Effect.Effect<unknown, unknown, ChatModel.ChatModel | Tool.Handler<"transfer">>
  readonly error: "InvalidInput" | "ChainCodecError"
  /** The field the error must name exactly (`InvalidInput.field`; for `ChainCodecError`, "Invalid <field>:" in its reason). */
  readonly field: string
}

const shapeRows: ReadonlyArray<ShapeRow> = [
  // Chain.make: never throws; Chain.run reports the option before any model call
  { input: "make(undefined)", attempt: () => runMade(undefined), error: "InvalidInput", field: "Chain.make options" },
  { input: "make(null)", attempt: () => runMade(null), error: "InvalidInput", field: "Chain.make options" },
  { input: "make([\"Hi\"])", attempt: () => runMade(["Hi"]), error: "InvalidInput", field: "Chain.make options" },
  { input: "make { user: 5 }", attempt: () => runMade({ user: 5 }), error: "InvalidInput", field: "user" },
  { input: "make { user: [\"a\", 1] }", attempt: () => runMade({ user: ["a", 1] }), error: "InvalidInput", field: "user[1]" },
  { input: "make { system: {} }", attempt: () => runMade({ system: {}, user: "x" }), error: "InvalidInput", field: "system" },
  { input: "make { messages: \"xy\" }", attempt: () => runMade({ messages: "xy", user: "x" }), error: "InvalidInput", field: "messages" },
  { input: "make { messages: [message, 1] }", attempt: () => runMade({ messages: [hi, 1] }), error: "InvalidInput", field: "messages[1]" },
  {
    input: "make { messages: [a JSON message] }",
    attempt: () => runMade({ messages: [{ role: "user", content: "Hi" }] }),
    error: "InvalidInput",
    field: "messages[0]"
  },
  { input: "make { toolkit: {} }", attempt: () => runMade({ toolkit: {}, user: "x" }), error: "InvalidInput", field: "toolkit" },
  { input: "make { context: 5 }", attempt: () => runMade({ context: 5, user: "x" }), error: "InvalidInput", field: "context" },
  {
    input: "make { context: { f: a function } }",
    attempt: () => runMade({ context: { f: () => 1 }, user: "x" }),
    error: "InvalidInput",
    field: "context[\"f\"]"
  },
  {
    input: "make { sytem: ... } (a misspelt option)",
    attempt: () => runMade({ sytem: "Never reveal the key.", user: "x" }),
    error: "InvalidInput",
    field: "Chain.make options[\"sytem\"]"
  },
  {
    input: "make { user: 5 }, then stream",
    attempt: () => Stream.runDrain(Chain.stream(Chain.make(js<Chain.MakeOptions<{}>>({ user: 5 })), whileNeeds)),
    error: "InvalidInput",
    field: "user"
  },
  {
    input: "addUser(5)",
    attempt: () => Chain.run(Chain.make({ user: "x" }).pipe(Chain.addUser(js(5))), whileNeeds),
    error: "InvalidInput",
    field: "addUser text"
  },
  // Chain.encode: the same problems as its typed ChainCodecError
  { input: "encode: make { user: 5 }", attempt: () => Chain.encode(Chain.make(js({ user: 5 }))), error: "ChainCodecError", field: "user" },
  {
    input: "encode: make { messages: [1] }",
    attempt: () => Chain.encode(Chain.make(js({ messages: [1] }))),
    error: "ChainCodecError",
    field: "messages[0]"
  },
  { input: "encode(undefined)", attempt: () => Chain.encode(js(undefined)), error: "ChainCodecError", field: "chain" },
  { input: "encode({})", attempt: () => Chain.encode(js({})), error: "ChainCodecError", field: "chain" },
  {
    input: "encode(chain, \"a key\") (options not an object: would store unsigned)",
    attempt: () => Chain.encode(chain(), js("a secret of at least thirty-two bytes!")),
    error: "ChainCodecError",
    field: "options"
  },
  // Chain.run / Chain.stream: the chain and the options
  { input: "run(undefined, ...)", attempt: () => Chain.run(js<Chain.Chain>(undefined), whileNeeds), error: "InvalidInput", field: "chain" },
  { input: "run(chain, undefined)", attempt: () => Chain.run(chain(), js<Chain.RunOptions<ChatModel.ChatModel>>(undefined)), error: "InvalidInput", field: "options" },
  { input: "run(chain, null)", attempt: () => Chain.run(chain(), js<Chain.RunOptions<ChatModel.ChatModel>>(null)), error: "InvalidInput", field: "options" },
  { input: "run(chain, {})", attempt: () => Chain.run(chain(), js<Chain.RunOptions<ChatModel.ChatModel>>({})), error: "InvalidInput", field: "mode" },
  { input: "run(chain, { mode: \"x\" })", attempt: () => Chain.run(chain(), js<Chain.RunOptions<ChatModel.ChatModel>>({ mode: "x" })), error: "InvalidInput", field: "mode" },
  {
    input: "run: a chain whose messages hold 1",
    attempt: () => Chain.run(Chain.make({ user: "x" }).copy({ messages: js([hi, 1]) }), whileNeeds),
    error: "InvalidInput",
    field: "chain.messages[1]"
  },
  {
    input: "run: a chain whose toolkit is {}",
    attempt: () => Chain.run(Chain.make({ user: "x" }).copy({ toolkit: js({}) }), whileNeeds),
    error: "InvalidInput",
    field: "chain.toolkit"
  },
  {
    input: "run: a chain whose context is 5",
    attempt: () => Chain.run(Chain.make({ user: "x" }).copy({ context: js(5) }), whileNeeds),
    error: "InvalidInput",
    field: "chain.context"
  },
  {
    input: "run: a toolkit holding a non-tool (ExternalTool.mark(5))",
    attempt: () => Chain.run(Chain.make({ user: "x", toolkit: Toolkit.make(ExternalTool.mark(js<Tool.Any>(5))) }), whileNeeds),
    error: "InvalidInput",
    field: "chain.toolkit"
  },
  { input: "stream(undefined, ...)", attempt: () => Stream.runDrain(Chain.stream(js<Chain.Chain>(undefined), whileNeeds)), error: "InvalidInput", field: "chain" },
  { input: "stream(chain, undefined)", attempt: () => Stream.runDrain(Chain.stream(chain(), js<Chain.StreamOptions<ChatModel.ChatModel>>(undefined))), error: "InvalidInput", field: "options" },
  {
    input: "toolChoice \"sometimes\"",
    attempt: () => Chain.run(chain(), { ...whileNeeds, toolChoice: js("sometimes") }),
    error: "InvalidInput",
    field: "toolChoice"
  },
  {
    input: "retry: ModelRetry.schedule(null)",
    attempt: () => Chain.run(chain(), { ...whileNeeds, retry: ModelRetry.schedule(js(null)) }),
    error: "InvalidInput",
    field: "ModelRetry.schedule options"
  },
  {
    input: "retry: ModelRetry.schedule({ times: \"x\" })",
    attempt: () => Chain.run(chain(), { ...whileNeeds, retry: ModelRetry.schedule(js({ times: "x" })) }),
    error: "InvalidInput",
    field: "ModelRetry.schedule times"
  },
  {
    input: "retry: ModelRetry.schedule({ max: \"soon\" })",
    attempt: () => Chain.run(chain(), { ...whileNeeds, retry: ModelRetry.schedule(js({ max: "soon" })) }),
    error: "InvalidInput",
    field: "ModelRetry.schedule max"
  },
  {
    input: "stop: StopSignal.fromAbortSignal(5)",
    attempt: () => Chain.run(chain(), { ...whileNeeds, stop: StopSignal.fromAbortSignal(js(5)) }),
    error: "InvalidInput",
    field: "stop"
  },
  {
    input: "stop: an object carrying the signal's key (JSON)",
    attempt: () => Chain.run(chain(), { ...whileNeeds, stop: js({ "~loopwork/StopSignal": "~loopwork/StopSignal", requested: false }) }),
    error: "InvalidInput",
    field: "stop"
  },
  // Modes
  {
    input: "Mode.untilToolUsed(5)",
    attempt: () => Chain.run(chain(), { mode: Mode.untilToolUsed(js(5)) }),
    error: "InvalidInput",
    field: "untilToolUsed names"
  },
  {
    input: "Mode.untilToolUsed([1])",
    attempt: () => Chain.run(chain(), { mode: Mode.untilToolUsed(js([1])) }),
    error: "InvalidInput",
    field: "untilToolUsed names[0]"
  },
  { input: "Mode.whileNeedsResponse(chain, null)", attempt: () => Mode.whileNeedsResponse(chain(), js(null)), error: "InvalidInput", field: "options" },
  { input: "Mode.untilSuccess(chain, { maxRuns: 0 })", attempt: () => Mode.untilSuccess(chain(), { maxRuns: 0 }), error: "InvalidInput", field: "maxRuns" },
  // Approval / ExternalTool
  { input: "Approval.decide(undefined, ...)", attempt: () => Approval.decide(js<Chain.Chain>(undefined), {}), error: "InvalidInput", field: "chain" },
  { input: "ExternalTool.supply(undefined, ...)", attempt: () => ExternalTool.supply(js<Chain.Chain>(undefined), {}), error: "InvalidInput", field: "chain" },
  // Step factories: never throw; the step ends the loop with Error(InvalidInput) when it runs
  { input: "Step.callLlmWith(null)", attempt: () => stepOn(Step.callLlmWith(js(null))), error: "InvalidInput", field: "callLlmWith options" },
  { input: "Step.callLlmWith({ toolChoice: 5 })", attempt: () => stepOn(Step.callLlmWith(js({ toolChoice: 5 }))), error: "InvalidInput", field: "toolChoice" },
  { input: "Step.executeToolsWith(null)", attempt: () => stepOn(Step.executeToolsWith(js(null))), error: "InvalidInput", field: "executeToolsWith options" },
  {
    input: "Step.executeToolsWith({ toolTimeout: \"soon\" })",
    attempt: () => stepOn(Step.executeToolsWith(js({ toolTimeout: "soon" }))),
    error: "InvalidInput",
    field: "toolTimeout"
  },
  { input: "Step.checkMaxRuns({ maxRuns: \"5\" })", attempt: () => stepOn(Step.checkMaxRuns(js({ maxRuns: "5" }))), error: "InvalidInput", field: "maxRuns" },
  { input: "Step.checkMaxRuns({ since: -1 })", attempt: () => stepOn(Step.checkMaxRuns({ since: -1 })), error: "InvalidInput", field: "since" },
  { input: "Step.checkMaxRuns(null)", attempt: () => stepOn(Step.checkMaxRuns(js(null))), error: "InvalidInput", field: "checkMaxRuns options" },
  { input: "Step.checkNoTool(5)", attempt: () => stepOn(Step.checkNoTool(js(5))), error: "InvalidInput", field: "checkNoTool policy" },
  { input: "Step.checkUntilTool(5)", attempt: () => stepOn(Step.checkUntilTool(js(5))), error: "InvalidInput", field: "checkUntilTool names" },
  { input: "Step.make(5)", attempt: () => stepOn(Step.make(js(5))), error: "InvalidInput", field: "Step.make argument" },
  { input: "Step.checkStop(undefined)", attempt: () => stepOn(Step.checkStop(js(undefined))), error: "InvalidInput", field: "checkStop signal" },
  { input: "Step.checkPause(5)", attempt: () => stepOn(Step.checkPause(js(5))), error: "InvalidInput", field: "checkPause predicate" },
  {
    input: "Step.checkPause(f, { _tag: \"Nope\" })",
    attempt: () => stepOn(Step.checkPause(() => true, js({ _tag: "Nope" }))),
    error: "InvalidInput",
    field: "checkPause reason"
  },
  { input: "Step.checkDirectReturn({ memory: \"all\" })", attempt: () => stepOn(Step.checkDirectReturn(js({ memory: "all" }))), error: "InvalidInput", field: "memory" },
  {
    input: "Step.checkReturnBehaviorWith(null)",
    attempt: () => stepOn(Step.checkReturnBehaviorWith(js(null))),
    error: "InvalidInput",
    field: "checkReturnBehaviorWith options"
  },
  { input: "Step.continueOrDone(5)", attempt: () => stepOn(Step.continueOrDone(js<Mode.Mode>(5))), error: "InvalidInput", field: "continueOrDone loop" }
]

/** The typed error of an attempt: the failure (a `RunError`'s reason), or an `Error` outcome's error. */
const typedError = (exit: Exit.Exit<unknown, unknown>): { readonly _tag: string; readonly message: string; readonly field?: string } | undefined => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value
    return value instanceof Outcome.Error ? value.error as never : undefined
  }
  const error = Cause.squash(exit.cause) as { readonly _tag: string; readonly reason?: unknown }
  return (error._tag === "RunError" ? error.reason : error) as never
}

describe("a wrongly shaped value from JSON or JavaScript gets a typed error naming the field, never a throw, a defect or a model call", () => {
  for (const row of shapeRows) {
    it.effect(row.input, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "never" }], { repeat: true })
        const exit = yield* Effect.exit(Effect.suspend(row.attempt).pipe(Effect.provide([model.layer, handlers])))
        expect(model.calls).toBe(0)
        if (Exit.isFailure(exit)) expect(Cause.hasDies(exit.cause)).toBe(false)
        const error = typedError(exit)
        expect(error?._tag).toBe(row.error)
        if (row.error === "InvalidInput") {
          expect(error?.field).toBe(row.field)
          expect(error?.message).toContain(`Invalid ${row.field}: `)
        } else {
          expect(error?.message).toContain(`Cannot encode chain: Invalid ${row.field}: `)
        }
      }))
  }
})

describe("bad input that is not refused, and why", () => {
  it.effect("StopSignal.request, clear and interrupt on a non-signal do nothing (no run can hold it); isRequested is false", () =>
    Effect.gen(function*() {
      for (const value of [undefined, null, {}, { "~loopwork/StopSignal": "~loopwork/StopSignal", requested: true }]) {
        const signal = js<StopSignal.StopSignal>(value)
        const results = yield* Effect.exit(Effect.all([
          StopSignal.request(signal),
          StopSignal.interrupt(signal),
          StopSignal.clear(signal),
          StopSignal.isRequested(signal)
        ]))
        expect(Exit.isSuccess(results) && results.value[3]).toBe(false)
        expect(StopSignal.isStopSignal(value)).toBe(false)
      }
    }))

  it.effect("ModelRetry.schedule given bad options does not throw, and never retries when used on its own", () =>
    Effect.gen(function*() {
      for (const options of [null, { times: "x" }, { base: "soon" }, { max: -1 }]) {
        let attempts = 0
        const failing = Effect.suspend(() => {
          attempts++
          return Effect.fail(new LoopError.ModelCallFailed({ description: "rate limited", cause: undefined, status: 429 }))
        })
        const retried = Effect.suspend(() => Effect.retry(failing, ModelRetry.schedule(js(options))))
        const fiber = yield* Effect.forkChild(Effect.exit(retried))
        yield* TestClock.adjust("1 minute")
        const exit = yield* Fiber.join(fiber)
        expect(Exit.isFailure(exit) && !Cause.hasDies(exit.cause)).toBe(true)
        expect(attempts).toBe(1)
      }
    }))
})

describe("good input still passes the checks", () => {
  it.effect("a finished run's messages (tool calls, failed results, an edited approval) make a chain that runs", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { text: "Let me", toolCalls: [{ name: "transfer", params: { amount: "lots" } }, { name: "nope" }] },
        { toolCalls: [{ id: "a", name: "transfer", params: { amount: 5 } }] },
        { text: "Sent." },
        { text: "You are welcome." }
      ])
      const conversation = Effect.gen(function*() {
        const paused = yield* Chain.run(chain(), whileNeeds)
        const decided = yield* Approval.decide(paused.chain, { a: Approval.edit({ amount: 7 }) })
        const done = yield* Chain.run(decided, whileNeeds)
        expect(Chain.text(done.chain)).toBe("Sent.")
        const again = Chain.make({ messages: done.chain.messages, user: "Thanks", toolkit, context: { n: [1, "x", null] } })
        return yield* Chain.run(again, whileNeeds)
      })
      const outcome = yield* conversation.pipe(Effect.provide([model.layer, handlers]))
      expect(Chain.text(outcome.chain)).toBe("You are welcome.")
      expect(model.calls).toBe(4)
      yield* Chain.encode(outcome.chain)
    }))
})

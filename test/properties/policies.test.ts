/**
 * Property tests of the run-level policies, over every built-in mode: random
 * model scripts (text, several calls per turn to a tool that succeeds, one
 * whose handler fails, the watched tool of `untilToolUsed`, unknown tools,
 * arguments that fail the schema) AND random options — mode, `maxRuns`,
 * `maxFailures`, `concurrency`, `noTool`, `onMaxRuns`, `onToolFailure` per
 * kind, and whether the model honours `toolChoice: "none"`. On every case:
 *
 * 1. the outcome (Ok reason and extra / Pause reason / error tag and fields),
 *    the number of model calls and the whole transcript agree with a reference
 *    model of the documented rules (README "Modes", "Loop control"; the TSDoc
 *    of Mode, NoToolPolicy, MaxRunsPolicy, ToolFailurePolicy), written here
 *    independently of src;
 * 2. model calls never exceed `maxRuns` (+1: the documented final-answer call);
 * 3. every tool call in the final chain has exactly one result, in the next
 *    message, in call order, and every result answers a call;
 * 4. encode → JSON → decode of the final chain gives the same document.
 *
 * A second property drives `Mode.step` from outside, one `Chain.run` per step
 * with a JSON round-trip between steps, and checks it ends with the same chain
 * as one run with `shouldContinue`.
 *
 * Cases are small Schema values, so a failure shrinks to a short, readable
 * scenario.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { Prompt } from "effect/ai"
import { Chain, ChatModel, MaxRunsPolicy, Mode, NoToolPolicy, type Outcome } from "../../src/index.ts"
import { textOf } from "../support/transcript.ts"
import { Fails, parameters, Plain } from "../support/tools.ts"

// -- tools ---------------------------------------------------------------------------
const Target = Tool.make("target", { parameters, success: Schema.String })
const toolkit = Toolkit.make(Plain, Fails, Target)
/** `plain` yields a few times (more for earlier calls), so concurrent calls finish out of call order. */
const handlers = toolkit.toLayer({
  plain: ({ x }) => Effect.as(Effect.repeat(Effect.yieldNow, { times: 3 - x }), `plain ${x}`),
  fails: () => Effect.fail("boom"),
  target: ({ x }) => Effect.succeed(`target ${x}`)
})

// -- scenarios -----------------------------------------------------------------------
const Call = Schema.Struct({
  tool: Schema.Literals(["plain", "fails", "target", "unknown"]),
  valid: Schema.Boolean
})
type Call = typeof Call.Type
const FailurePolicy = Schema.Literals(["feed-back", "fail"])
const Scenario = Schema.Struct({
  /** Turn t of the model: these calls (none: a plain answer); after the script, plain answers. */
  turns: Schema.Array(Schema.Array(Call).check(Schema.isMaxLength(3))).check(Schema.isMaxLength(5)),
  mode: Schema.Literals(["whileNeedsResponse", "untilSuccess", "step", "untilToolUsed"]),
  maxRuns: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
  maxFailures: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
  concurrency: Schema.Literals([1, 2, "unbounded"]),
  noTool: Schema.Literals(["unset", "done", "user", "reminder", "remind-done", "result"]),
  onMaxRuns: Schema.Literals(["fail", "stop", "final-answer", "final-answer-custom"]),
  onToolFailure: Schema.Struct({ "unknown-tool": FailurePolicy, parameters: FailurePolicy, handler: FailurePolicy }),
  /** Whether the model answers without tools when asked with toolChoice "none". */
  obeysToolChoice: Schema.Boolean
})
type Scenario = typeof Scenario.Type

const reminder = "Please use a tool."
const customInstruction = "Stop now and answer."
const noToolResult = { fallback: true }

const noToolOption = (scenario: Scenario) => {
  switch (scenario.noTool) {
    case "unset":
      return undefined
    case "done":
    case "user":
      return scenario.noTool
    case "reminder":
      return reminder
    case "remind-done":
      return NoToolPolicy.remind("done")
    case "result":
      return NoToolPolicy.result(noToolResult)
  }
}

const onMaxRunsOption = (scenario: Scenario) =>
  scenario.onMaxRuns === "final-answer-custom" ? MaxRunsPolicy.finalAnswer(customInstruction) : scenario.onMaxRuns

const modeOf = (scenario: Scenario): Mode.Mode<ChatModel.ChatModel> => {
  switch (scenario.mode) {
    case "whileNeedsResponse":
      return Mode.whileNeedsResponse
    case "untilSuccess":
      return Mode.untilSuccess
    case "step":
      return Mode.step
    case "untilToolUsed":
      return Mode.untilToolUsed("target")
  }
}

const optionsOf = (scenario: Scenario): Chain.RunOptions<ChatModel.ChatModel> => {
  const noTool = noToolOption(scenario)
  return {
    mode: modeOf(scenario),
    maxRuns: scenario.maxRuns,
    maxFailures: scenario.maxFailures,
    concurrency: scenario.concurrency,
    onMaxRuns: onMaxRunsOption(scenario),
    onToolFailure: scenario.onToolFailure,
    ...(noTool === undefined ? {} : { noTool }),
    // "step driven to the end": the library repeats steps while the chain needs a response
    ...(scenario.mode === "step" ? { shouldContinue: (chain: Chain.Chain) => chain.needsResponse } : {})
  }
}

// -- the model -----------------------------------------------------------------------
/** What the model answers at turn t (t = the assistant messages so far), asked with or without toolChoice "none". */
const replyAt = (scenario: Scenario, t: number, toolChoiceNone: boolean) => {
  const calls: ReadonlyArray<Call> = toolChoiceNone && scenario.obeysToolChoice ? [] : scenario.turns[t] ?? []
  return { calls, text: calls.length === 0 ? `answer ${t}` : `working ${t}` }
}

const modelFor = (scenario: Scenario) =>
  ChatModel.scripted([(request) => {
    const t = request.prompt.content.filter((message) => message.role === "assistant").length
    const { calls, text } = replyAt(scenario, t, request.toolChoice === "none")
    return calls.length === 0 ? { text } : {
      text,
      toolCalls: calls.map((call, i) => ({ id: `t${t}_${i}`, name: call.tool, params: call.valid ? { x: i } : { x: "NaN" } }))
    }
  }], { repeat: true })

// -- the reference model of the rules ---------------------------------------------------
type Kind = "ok" | "unknown-tool" | "parameters" | "handler"
/** An unknown tool is reported as such whatever its arguments; known tools check arguments, then run. */
const kindOf = (call: Call): Kind =>
  call.tool === "unknown" ? "unknown-tool" : !call.valid ? "parameters" : call.tool === "fails" ? "handler" : "ok"

interface Expected {
  readonly tag: "Ok" | "Pause" | "Error"
  /** Ok reason, Pause reason tag or error tag. */
  readonly detail: string
  /** Ok's extra, or the error's fields that matter. */
  readonly extra: unknown
  readonly runCount: number
  readonly modelCalls: number
  /** The transcript, one line per message (see `lines`). */
  readonly messages: ReadonlyArray<string>
}

const assistantLine = (text: string, names: ReadonlyArray<string>) =>
  names.length === 0 ? `assistant: ${text}` : `assistant: ${text} -> ${names.join(",")}`
const toolLine = (results: ReadonlyArray<{ readonly name: string; readonly ok: boolean }>) =>
  `tool: ${results.map((result) => `${result.name}:${result.ok ? "ok" : "failed"}`).join(",")}`

/**
 * The rules, as documented:
 * - a turn with calls runs them all (results in call order); a failure of a kind whose policy is "fail"
 *   ends the run with ToolCallFailed naming the first such call, once the round is complete; otherwise a
 *   round with any failure counts towards maxFailures (a clean round resets it) and reaching it ends the
 *   run with MaxFailuresExceeded;
 * - a plain answer goes to the no-tool policy; unset, it ends whileNeedsResponse / untilSuccess with
 *   Ok "done" (no extra) and a step with Ok "step"; untilToolUsed reminds the model of its tools;
 * - whileNeedsResponse and step call the model again after each round; untilSuccess ends after a clean
 *   round (Ok "tools-succeeded"); untilToolUsed ends on a successful call of the watched tool;
 * - a model call is checked against maxRuns only when it is the next thing to do (so a watched tool on
 *   the last run still wins, and every round runs first); at the limit, onMaxRuns decides: fail, stop
 *   (extra = last response text) or one more call with toolChoice "none" after the instruction (a reply
 *   with tool calls there is MaxRunsExceeded with the chain before that call).
 */
const reference = (scenario: Scenario): Expected => {
  const messages: Array<string> = ["user: go"]
  let runs = 0
  let modelCalls = 0
  let failures = 0
  let lastText = ""
  const end = (tag: Expected["tag"], detail: string, extra?: unknown): Expected => ({
    tag,
    detail,
    extra,
    runCount: runs,
    modelCalls,
    messages
  })

  const callModel = () => {
    const t = runs
    const reply = replyAt(scenario, t, false)
    runs++
    modelCalls++
    lastText = reply.text
    messages.push(assistantLine(reply.text, reply.calls.map((call) => call.tool)))
    return { t, calls: reply.calls, text: reply.text }
  }

  const atMaxRuns = (): Expected => {
    switch (scenario.onMaxRuns) {
      case "fail":
        return end("Error", "MaxRunsExceeded", { runs, maxRuns: scenario.maxRuns })
      case "stop":
        return end("Ok", "max-runs", lastText)
      case "final-answer":
      case "final-answer-custom": {
        const instruction = scenario.onMaxRuns === "final-answer" ? MaxRunsPolicy.instruction : customInstruction
        const reply = replyAt(scenario, runs, true)
        modelCalls++
        if (reply.calls.length > 0) return end("Error", "MaxRunsExceeded", { runs, maxRuns: scenario.maxRuns })
        messages.push(`user: ${instruction}`, assistantLine(reply.text, []))
        runs++
        return end("Ok", "final-answer", reply.text)
      }
    }
  }

  /** The no-tool policy on a plain answer: an outcome, "again" (a reminder was added) or "unset". */
  const noTool = (text: string): Expected | "again" | "unset" => {
    const remind = (message: string) => {
      messages.push(`user: ${message}`)
      return "again" as const
    }
    switch (scenario.noTool) {
      case "unset":
        return scenario.mode === "untilToolUsed"
          ? remind("You answered without calling a tool. To finish, call target.")
          : "unset"
      case "done":
        return end("Ok", "done", text)
      case "user":
        return end("Pause", "UserInputWanted")
      case "reminder":
        return remind(reminder)
      case "remind-done":
        return remind("done")
      case "result":
        return end("Ok", "no-tool-result", noToolResult)
    }
  }

  /** Runs a round: an ending outcome, or whether it had a failure. */
  const round = (t: number, calls: ReadonlyArray<Call>): Expected | { readonly failed: boolean } => {
    const kinds = calls.map(kindOf)
    messages.push(toolLine(calls.map((call, i) => ({ name: call.tool, ok: kinds[i] === "ok" }))))
    const fatal = kinds.findIndex((kind) => kind !== "ok" && scenario.onToolFailure[kind] === "fail")
    if (fatal >= 0) {
      return end("Error", "ToolCallFailed", { kind: kinds[fatal], callId: `t${t}_${fatal}`, tool: calls[fatal].tool })
    }
    const failed = kinds.some((kind) => kind !== "ok")
    failures = failed ? failures + 1 : 0
    if (failures >= scenario.maxFailures) {
      return end("Error", "MaxFailuresExceeded", { failures, maxFailures: scenario.maxFailures })
    }
    return { failed }
  }

  for (let guard = 0; guard < 100; guard++) {
    if (scenario.mode !== "untilToolUsed" && runs >= scenario.maxRuns) return atMaxRuns()
    const { t, calls, text } = callModel()
    if (calls.length === 0) {
      const decided = noTool(text)
      if (decided === "unset") return end("Ok", scenario.mode === "step" ? "step" : "done")
      if (decided !== "again") return decided
    } else {
      const ran = round(t, calls)
      if ("tag" in ran) return ran
      if (scenario.mode === "untilSuccess" && !ran.failed) return end("Ok", "tools-succeeded")
      if (scenario.mode === "untilToolUsed") {
        const used = calls.findIndex((call) => call.tool === "target" && kindOf(call) === "ok")
        if (used >= 0) return end("Ok", "tool-used", { id: `t${t}_${used}`, name: "target", isFailure: false })
      }
    }
    if (scenario.mode === "untilToolUsed" && runs >= scenario.maxRuns) return atMaxRuns()
  }
  throw new Error("the reference did not end")
}

// -- observing a run -------------------------------------------------------------------
interface Ended {
  readonly tag: "Ok" | "Pause" | "Error"
  readonly detail: string
  readonly extra: unknown
  readonly chain: Chain.Chain
}

const ended = (run: Effect.Effect<Outcome.Final, { readonly reason: { readonly _tag: string }; readonly chain: Chain.Chain }>) =>
  Effect.match(run, {
    onSuccess: (outcome): Ended =>
      outcome._tag === "Ok"
        ? { tag: "Ok", detail: outcome.reason, extra: outcome.extra, chain: outcome.chain }
        : { tag: "Pause", detail: outcome.reason._tag, extra: undefined, chain: outcome.chain },
    onFailure: (error): Ended => ({ tag: "Error", detail: error.reason._tag, extra: error.reason, chain: error.chain })
  })

/** The parts of the extra the reference predicts. */
const extraView = (result: Ended): unknown => {
  if (result.tag === "Error") {
    const reason = result.extra as Record<string, unknown>
    switch (result.detail) {
      case "ToolCallFailed":
        return { kind: reason.kind, callId: reason.callId, tool: reason.tool }
      case "MaxRunsExceeded":
        return { runs: reason.runs, maxRuns: reason.maxRuns }
      case "MaxFailuresExceeded":
        return { failures: reason.failures, maxFailures: reason.maxFailures }
      default:
        return reason
    }
  }
  if (result.detail === "tool-used") {
    const extra = result.extra as { readonly id: string; readonly name: string; readonly isFailure: boolean }
    return { id: extra.id, name: extra.name, isFailure: extra.isFailure }
  }
  return result.extra
}

/** One line per message, in the reference's format. */
const lines = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> =>
  messages.map((message) => {
    switch (message.role) {
      case "assistant":
        return assistantLine(
          textOf(message),
          message.content.flatMap((part) => part.type === "tool-call" ? [part.name] : [])
        )
      case "tool":
        return toolLine(message.content.flatMap((part) =>
          part.type === "tool-result" ? [{ name: part.name, ok: !part.isFailure }] : []
        ))
      default:
        return `${message.role}: ${textOf(message)}`
    }
  })

/**
 * Provider-valid order: every assistant message with tool calls is followed by one tool message answering
 * exactly those calls, in call order; every tool message follows such an assistant message; no call id is
 * used twice.
 */
const providerValid = (chain: Chain.Chain): boolean => {
  const seen = new Set<string>()
  return chain.messages.every((message, index) => {
    if (message.role === "tool") {
      const before = chain.messages[index - 1]
      return before?.role === "assistant" && before.content.some((part) => part.type === "tool-call")
    }
    if (message.role !== "assistant") return true
    const calls = message.content.flatMap((part) => part.type === "tool-call" ? [part.id] : [])
    if (calls.length === 0) return true
    if (calls.some((id) => seen.has(id))) return false
    for (const id of calls) seen.add(id)
    const next = chain.messages[index + 1]
    if (next?.role !== "tool") return false
    const results = next.content.flatMap((part) => part.type === "tool-result" ? [part.id] : [])
    return results.length === calls.length && results.every((id, i) => id === calls[i])
  }) && chain.pendingToolCalls.length === 0 && chain.roundResults.length === 0
}

/** The state a chain carries (its results in their stored form: the decoded `result` of a failure is its text). */
const stateOf = (chain: Chain.Chain) => ({
  messages: chain.messages,
  lastResponse: chain.lastResponse,
  pendingToolCalls: chain.pendingToolCalls,
  lastToolResults: chain.lastToolResults.map(({ encoded, id, isFailure, name }) => ({ id, name, isFailure, encoded })),
  roundResults: chain.roundResults.map(({ encoded, id, isFailure, name }) => ({ id, name, isFailure, encoded })),
  callStates: chain.callStates,
  runCount: chain.runCount,
  failureCount: chain.failureCount,
  modeState: chain.modeState,
  context: chain.context,
  needsResponse: chain.needsResponse
})

/** encode → JSON text → decode gives back the same chain (and the same document), and the document is plain JSON. */
const roundTrips = (chain: Chain.Chain) =>
  Effect.gen(function*() {
    const document = yield* Chain.encode(chain)
    const json = JSON.stringify(document)
    expect(JSON.parse(json)).toEqual(document)
    const decoded = yield* Chain.decode(json, { toolkit })
    expect(JSON.parse(JSON.stringify(stateOf(decoded)))).toEqual(JSON.parse(JSON.stringify(stateOf(chain))))
    expect(yield* Chain.encode(decoded)).toEqual(document)
  })

const start = () => Chain.make({ user: "go", toolkit })

const runs = 1000

describe("properties of the run-level policies, in every mode", () => {
  it.effect.prop(
    "outcome, model calls and transcript follow the documented rules; calls ≤ maxRuns (+1 final answer); one result per call; JSON round-trip",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const expected = reference(scenario)
        const model = modelFor(scenario)
        const result = yield* ended(Chain.run(start(), optionsOf(scenario)).pipe(Effect.provide([model.layer, handlers])))

        expect({
          tag: result.tag,
          detail: result.detail,
          extra: extraView(result),
          runCount: result.chain.runCount,
          modelCalls: model.calls,
          messages: lines(result.chain.messages)
        }).toEqual(expected)

        const finalAnswerAllowed = scenario.onMaxRuns === "final-answer" || scenario.onMaxRuns === "final-answer-custom"
        expect(model.calls).toBeLessThanOrEqual(scenario.maxRuns + (finalAnswerAllowed ? 1 : 0))
        expect(result.chain.runCount).toBeLessThanOrEqual(scenario.maxRuns + (finalAnswerAllowed ? 1 : 0))
        // only the final-answer call goes out with toolChoice "none", and only beyond maxRuns
        model.requests.forEach((request, i) => expect(request.toolChoice).toBe(i === scenario.maxRuns ? "none" : "auto"))

        expect(providerValid(result.chain)).toBe(true)
        yield* roundTrips(result.chain)
      }),
    { arbitrary: { runs } }
  )

  it.effect("the generated cases reach every outcome of every mode (so the properties test every rule)", () =>
    Effect.gen(function*() {
      const scenarios = yield* Arbitrary.sampleEffect(Arbitrary.schema(Scenario), { count: runs, seed: "loopwork" })
      const reached = new Set(scenarios.map((scenario) => {
        const expected = reference(scenario)
        return `${scenario.mode}: ${expected.tag} ${expected.detail}`
      }))
      const common = [
        "Error MaxFailuresExceeded",
        "Error MaxRunsExceeded",
        "Error ToolCallFailed",
        "Ok done",
        "Ok final-answer",
        "Ok max-runs",
        "Ok no-tool-result",
        "Pause UserInputWanted"
      ]
      const own = { whileNeedsResponse: [], untilSuccess: ["Ok tools-succeeded"], step: ["Ok step"], untilToolUsed: ["Ok tool-used"] }
      expect([...reached].sort()).toEqual(
        Object.entries(own).flatMap(([mode, extra]) => [...common, ...extra].map((outcome) => `${mode}: ${outcome}`)).sort()
      )
    }))

  it.effect.prop(
    "step driven from outside, one run per step through JSON, ends with the same chain as one run with shouldContinue",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const noTool = noToolOption(scenario)
        const options = {
          maxRuns: scenario.maxRuns,
          maxFailures: scenario.maxFailures,
          concurrency: scenario.concurrency,
          onToolFailure: scenario.onToolFailure,
          ...(noTool === undefined ? {} : { noTool })
        }
        const whole = yield* ended(
          Chain.run(start(), {
            ...options,
            mode: Mode.step,
            onMaxRuns: "stop",
            shouldContinue: (chain) => chain.needsResponse
          }).pipe(Effect.provide([modelFor(scenario).layer, handlers]))
        )

        let chain: Chain.Chain = start()
        let stepped: Ended | undefined
        for (let steps = 0; stepped === undefined; steps++) {
          expect(steps).toBeLessThan(4 * scenario.maxRuns + 4)
          // the driver's budget: the same rule as maxRuns (no model call beyond it; rounds still run)
          if (chain.runCount >= scenario.maxRuns && chain.pendingToolCalls.length === 0 && chain.needsResponse) {
            stepped = { tag: "Ok", detail: "max-runs", extra: Chain.text(chain), chain }
            break
          }
          const before = chain.runCount
          const result = yield* ended(
            Chain.run(chain, { ...options, mode: Mode.step }).pipe(Effect.provide([modelFor(scenario).layer, handlers]))
          )
          // one step: the pending round or one model call, never both
          expect(result.chain.runCount - before).toBeLessThanOrEqual(1)
          if (result.chain.runCount > before) expect(chain.pendingToolCalls).toEqual([])
          if (result.tag === "Ok" && result.detail === "step" && result.chain.needsResponse) {
            chain = yield* Chain.decode(JSON.stringify(yield* Chain.encode(result.chain)), { toolkit })
          } else {
            stepped = result
          }
        }

        expect({ tag: stepped.tag, detail: stepped.detail, extra: extraView(stepped) }).toEqual({
          tag: whole.tag,
          detail: whole.detail,
          extra: extraView(whole)
        })
        // A paused run keeps where its budget started (modeState): one run started at 0, the last step later.
        const { modeState: _stepped, ...steppedDocument } = yield* Chain.encode(stepped.chain)
        const { modeState: _whole, ...wholeDocument } = yield* Chain.encode(whole.chain)
        expect(steppedDocument).toEqual(wholeDocument)
      }),
    { arbitrary: { runs } }
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Schedule, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Approval, Chain, ChatModel, LoopError, Mode, ToolFailurePolicy, ToolTimeout } from "../src/index.ts"
import type { Outcome, ToolCall } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** Fails for "Atlantis", dies for "Chernobyl", returns a bad result for "Mars". */
const Weather = Tool.make("weather", {
  description: "Current temperature of a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ celsius: Schema.Number }),
  failure: Schema.String
})
/** Sleeps `ms`; declares a 2 second timeout. */
const Nap = Tool.make("nap", {
  parameters: Schema.Struct({ ms: Schema.Number }),
  success: Schema.String
}).annotate(ToolTimeout.Annotation, "2 seconds")
/** Sleeps `ms`; declares no timeout. */
const Fetch = Tool.make("fetch", {
  parameters: Schema.Struct({ ms: Schema.Number }),
  success: Schema.String
})
/** Needs a human's approval above 1000. */
const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }) => amount > 1000
})

const toolkit = Toolkit.make(Weather, Nap, Fetch, Transfer)
const AVAILABLE = "weather, nap, fetch, transfer"

const temperatures: Readonly<Record<string, number>> = { Lisbon: 21, Oslo: 4 }

/** Fresh handlers per test, with a log of what ran, finished and was interrupted. */
const makeHandlers = () => {
  const log = {
    weather: [] as Array<string>,
    transfer: [] as Array<number>,
    started: [] as Array<string>,
    finished: [] as Array<string>,
    interrupted: [] as Array<string>
  }
  const sleeper = (name: string, ms: number): Effect.Effect<string> =>
    Effect.sync(() => log.started.push(`${name}:${ms}`)).pipe(
      Effect.andThen(Effect.sleep(Duration.millis(ms))),
      Effect.andThen(Effect.sync(() => {
        log.finished.push(`${name}:${ms}`)
        return `${name} slept ${ms}ms`
      })),
      Effect.onInterrupt(() => Effect.sync(() => log.interrupted.push(`${name}:${ms}`)))
    )
  const layer = toolkit.toLayer({
    weather: ({ city }) =>
      Effect.suspend((): Effect.Effect<{ readonly celsius: number }, string> => {
        log.weather.push(city)
        if (city === "Atlantis") return Effect.fail(`no such city: ${city}`)
        if (city === "Chernobyl") return Effect.die(new Error("sensor exploded"))
        if (city === "Mars") return Effect.succeed({ celsius: "hot" } as unknown as { readonly celsius: number })
        return Effect.succeed({ celsius: temperatures[city] ?? 0 })
      }),
    nap: ({ ms }) => sleeper("nap", ms),
    fetch: ({ ms }) => sleeper("fetch", ms),
    transfer: ({ amount }) =>
      Effect.sync(() => {
        log.transfer.push(amount)
        return `sent ${amount}`
      })
  })
  return { log, layer }
}

const userChain = () => Chain.make({ system: "You help.", user: "Go", toolkit })

const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)

/** A tool result as the model sees it in a tool message. */
interface Seen {
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  readonly result: unknown
}

const toolResultsOf = (message: Prompt.Message | undefined): ReadonlyArray<Seen> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content
    .filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
    .map((part) => ({ id: part.id, name: part.name, isFailure: part.isFailure, result: part.result }))
}

/** The tool results at the end of the prompt of the model's request `index` (0-based). */
const seenByModel = (model: ChatModel.ScriptedModel, index: number): ReadonlyArray<Seen> => {
  const request = model.requests[index]
  if (request === undefined) throw new globalThis.Error(`the model received no request #${index + 1}`)
  return toolResultsOf(request.prompt.content.at(-1))
}

/** The tool calls (id, name, params) of the last assistant message that made any. */
const callsInTranscript = (chain: Chain.Chain): ReadonlyArray<ToolCall.ToolCall> => {
  for (let i = chain.messages.length - 1; i >= 0; i--) {
    const message = chain.messages[i]
    if (message.role !== "assistant") continue
    const calls = message.content
      .filter((part): part is Prompt.ToolCallPart => part.type === "tool-call")
      .map((part) => ({ id: part.id, name: part.name, params: part.params }))
    if (calls.length > 0) return calls
  }
  return []
}

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

const asToolCallFailed = (reason: LoopError.StepFailure): LoopError.ToolCallFailed => {
  if (!(reason instanceof LoopError.ToolCallFailed)) {
    throw new globalThis.Error(`expected ToolCallFailed, got ${reason._tag}: ${reason.message}`)
  }
  return reason
}

const policyMessage = (tool: string, callId: string, kind: string, detail: string): string =>
  `Tool '${tool}' (call ${callId}) failed (${kind}): ${detail.replace(/\.$/, "")}. The run's onToolFailure policy for "${kind}" is "fail"; use "feed-back" to let the model see the failure instead`

/**
 * Runs `chain` to its end in a forked fiber, moving the TestClock far enough
 * for every sleep and timeout of these tests.
 */
const settleRun = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(Effect.exit(effect))
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

// -----------------------------------------------------------------------------
// The acceptance table: kind × policy
// -----------------------------------------------------------------------------

type Kind = ToolFailurePolicy.Kind

/** How each kind is triggered: the call the model makes (id "call_1_1"). */
interface Scenario {
  readonly call: { readonly name: string; readonly params: unknown }
  /** `ToolFailure.message` (and ToolCallFailed.detail). */
  readonly message: string
  /** What the model is shown when the failure is fed back (default text). */
  readonly shown: Seen
  readonly origin: ToolCall.FailureOrigin | undefined
}

const CALL_ID = "call_1_1"

const PARAMS_MESSAGE = "Invalid arguments for tool 'weather': Expected string\n  at [\"city\"]"
const RESULT_MESSAGE =
  "Tool 'weather' returned a result that does not match its success schema: Expected number\n  at [\"celsius\"]"

const scenarios: Readonly<Record<Kind, Scenario>> = {
  "unknown-tool": {
    call: { name: "teleport", params: { to: "Mars" } },
    message: `Tool 'teleport' not found. Available tools: ${AVAILABLE}`,
    shown: {
      id: CALL_ID,
      name: "teleport",
      isFailure: true,
      result: `Tool 'teleport' not found. Available tools: ${AVAILABLE}`
    },
    origin: "unknown-tool"
  },
  parameters: {
    call: { name: "weather", params: { city: 42 } },
    message: PARAMS_MESSAGE,
    shown: { id: CALL_ID, name: "weather", isFailure: true, result: PARAMS_MESSAGE },
    origin: "parameters"
  },
  handler: {
    call: { name: "weather", params: { city: "Atlantis" } },
    message: "Tool 'weather' failed: no such city: Atlantis",
    // the failure, encoded through the tool's failure schema
    shown: { id: CALL_ID, name: "weather", isFailure: true, result: "no such city: Atlantis" },
    origin: "handler"
  },
  result: {
    call: { name: "weather", params: { city: "Mars" } },
    message: RESULT_MESSAGE,
    shown: { id: CALL_ID, name: "weather", isFailure: true, result: RESULT_MESSAGE },
    origin: "result"
  },
  timeout: {
    call: { name: "nap", params: { ms: 3000 } },
    message: "Tool 'nap' timed out after 2s",
    shown: { id: CALL_ID, name: "nap", isFailure: true, result: "Tool 'nap' timed out after 2s" },
    origin: "timeout"
  },
  rejected: {
    call: { name: "transfer", params: { amount: 1000000 } },
    message: "Too much money.",
    // a rejection is not an error for the model
    shown: { id: CALL_ID, name: "transfer", isFailure: false, result: "Too much money." },
    origin: undefined
  }
}

type RowPolicy = "feed-back" | "fail" | ToolFailurePolicy.Repair

type Expected =
  /** The round completed and the model answered: it saw `seen`; the transcript shows `params`. */
  | {
    readonly _tag: "Answered"
    readonly seen: Seen
    readonly origin: ToolCall.FailureOrigin | undefined
    readonly rejected?: true
    readonly params: unknown
  }
  /** The run failed with ToolCallFailed after the round completed with `seen`. */
  | { readonly _tag: "Failed"; readonly seen: Seen }

interface KindRow {
  readonly name: string
  readonly kind: Kind
  readonly policy: RowPolicy
  readonly expected: Expected
  /** What the handlers logged. */
  readonly log: Partial<ReturnType<typeof makeHandlers>["log"]>
}

const fedBack = (kind: Kind): Expected => {
  const scenario = scenarios[kind]
  return kind === "rejected"
    ? { _tag: "Answered", seen: scenario.shown, origin: undefined, rejected: true, params: scenario.call.params }
    : { _tag: "Answered", seen: scenario.shown, origin: scenario.origin, params: scenario.call.params }
}
const failed = (kind: Kind): Expected => ({ _tag: "Failed", seen: scenarios[kind].shown })
const succeeded = (kind: Kind, result: unknown, params: unknown = scenarios[kind].call.params): Expected => ({
  _tag: "Answered",
  seen: { id: CALL_ID, name: scenarios[kind].call.name, isFailure: false, result },
  origin: undefined,
  params
})

const kindRows: ReadonlyArray<KindRow> = [
  // unknown-tool
  {
    name: "unknown-tool × feed-back: a failed 'unknown-tool' result listing the tools",
    kind: "unknown-tool",
    policy: "feed-back",
    expected: fedBack("unknown-tool"),
    log: { weather: [] }
  },
  {
    name: "unknown-tool × fail: ToolCallFailed, the model is not called again",
    kind: "unknown-tool",
    policy: "fail",
    expected: failed("unknown-tool"),
    log: { weather: [] }
  },
  {
    name: "unknown-tool × retryWith: cannot apply, the failure is fed back",
    kind: "unknown-tool",
    policy: ToolFailurePolicy.retryWith({ city: "Lisbon" }),
    expected: fedBack("unknown-tool"),
    log: { weather: [] }
  },
  {
    name: "unknown-tool × succeedWith: the value is the call's successful result",
    kind: "unknown-tool",
    policy: ToolFailurePolicy.succeedWith("teleported"),
    expected: succeeded("unknown-tool", "teleported"),
    log: { weather: [] }
  },
  // parameters
  {
    name: "parameters × feed-back: a failed 'parameters' result saying what is wrong; the handler never runs",
    kind: "parameters",
    policy: "feed-back",
    expected: fedBack("parameters"),
    log: { weather: [] }
  },
  {
    name: "parameters × fail: ToolCallFailed",
    kind: "parameters",
    policy: "fail",
    expected: failed("parameters"),
    log: { weather: [] }
  },
  {
    name: "parameters × retryWith: reruns with the new arguments; the transcript shows them",
    kind: "parameters",
    policy: ToolFailurePolicy.retryWith({ city: "Lisbon" }),
    expected: succeeded("parameters", { celsius: 21 }, { city: "Lisbon" }),
    log: { weather: ["Lisbon"] }
  },
  {
    name: "parameters × succeedWith: the value is the result; the handler never runs",
    kind: "parameters",
    policy: ToolFailurePolicy.succeedWith({ celsius: 15 }),
    expected: succeeded("parameters", { celsius: 15 }),
    log: { weather: [] }
  },
  // handler
  {
    name: "handler × feed-back: the failure encoded by the failure schema, origin 'handler'",
    kind: "handler",
    policy: "feed-back",
    expected: fedBack("handler"),
    log: { weather: ["Atlantis"] }
  },
  {
    name: "handler × fail: ToolCallFailed",
    kind: "handler",
    policy: "fail",
    expected: failed("handler"),
    log: { weather: ["Atlantis"] }
  },
  {
    name: "handler × retryWith: reruns the handler once with the new arguments",
    kind: "handler",
    policy: ToolFailurePolicy.retryWith({ city: "Oslo" }),
    expected: succeeded("handler", { celsius: 4 }, { city: "Oslo" }),
    log: { weather: ["Atlantis", "Oslo"] }
  },
  {
    name: "handler × succeedWith: the value is the result",
    kind: "handler",
    policy: ToolFailurePolicy.succeedWith({ celsius: 15 }),
    expected: succeeded("handler", { celsius: 15 }),
    log: { weather: ["Atlantis"] }
  },
  // result
  {
    name: "result × feed-back: a failed 'result' result naming the schema issue",
    kind: "result",
    policy: "feed-back",
    expected: fedBack("result"),
    log: { weather: ["Mars"] }
  },
  {
    name: "result × fail: ToolCallFailed",
    kind: "result",
    policy: "fail",
    expected: failed("result"),
    log: { weather: ["Mars"] }
  },
  {
    name: "result × retryWith: reruns the handler once with the new arguments",
    kind: "result",
    policy: ToolFailurePolicy.retryWith({ city: "Lisbon" }),
    expected: succeeded("result", { celsius: 21 }, { city: "Lisbon" }),
    log: { weather: ["Mars", "Lisbon"] }
  },
  {
    name: "result × succeedWith: the value replaces the bad result",
    kind: "result",
    policy: ToolFailurePolicy.succeedWith({ celsius: -63 }),
    expected: succeeded("result", { celsius: -63 }),
    log: { weather: ["Mars"] }
  },
  // timeout
  {
    name: "timeout × feed-back: the handler is interrupted; 'Tool 'nap' timed out after 2s'",
    kind: "timeout",
    policy: "feed-back",
    expected: fedBack("timeout"),
    log: { started: ["nap:3000"], finished: [], interrupted: ["nap:3000"] }
  },
  {
    name: "timeout × fail: ToolCallFailed, the handler was interrupted",
    kind: "timeout",
    policy: "fail",
    expected: failed("timeout"),
    log: { started: ["nap:3000"], finished: [], interrupted: ["nap:3000"] }
  },
  {
    name: "timeout × retryWith: reruns the call once with the new arguments",
    kind: "timeout",
    policy: ToolFailurePolicy.retryWith({ ms: 500 }),
    expected: succeeded("timeout", "nap slept 500ms", { ms: 500 }),
    log: { started: ["nap:3000", "nap:500"], finished: ["nap:500"], interrupted: ["nap:3000"] }
  },
  {
    name: "timeout × succeedWith: the value is the result",
    kind: "timeout",
    policy: ToolFailurePolicy.succeedWith("skipped the nap"),
    expected: succeeded("timeout", "skipped the nap"),
    log: { started: ["nap:3000"], finished: [], interrupted: ["nap:3000"] }
  },
  // rejected
  {
    name: "rejected × feed-back: a non-error result with the reviewer's message; the handler never runs",
    kind: "rejected",
    policy: "feed-back",
    expected: fedBack("rejected"),
    log: { transfer: [] }
  },
  {
    name: "rejected × fail: ToolCallFailed",
    kind: "rejected",
    policy: "fail",
    expected: failed("rejected"),
    log: { transfer: [] }
  },
  {
    name: "rejected × retryWith: runs the call with the new arguments (which need no approval)",
    kind: "rejected",
    policy: ToolFailurePolicy.retryWith({ amount: 100 }),
    expected: succeeded("rejected", "sent 100", { amount: 100 }),
    log: { transfer: [100] }
  },
  {
    name: "rejected × succeedWith: the value is the result; the handler never runs",
    kind: "rejected",
    policy: ToolFailurePolicy.succeedWith("queued for tomorrow"),
    expected: succeeded("rejected", "queued for tomorrow"),
    log: { transfer: [] }
  }
]

describe("onToolFailure: kind × policy", () => {
  for (const row of kindRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const scenario = scenarios[row.kind]
        const model = ChatModel.scripted([{ toolCalls: [scenario.call] }, { text: "Understood." }])
        const handlers = makeHandlers()
        const repairs: Array<ToolFailurePolicy.ToolFailure> = []
        const policy: ToolFailurePolicy.Policy = typeof row.policy === "string"
          ? row.policy
          : (failure) =>
            Effect.sync(() => {
              repairs.push(failure)
              return row.policy as ToolFailurePolicy.Repair
            })
        const onToolFailure: ToolFailurePolicy.Options = { [row.kind]: policy }
        const start = userChain()

        const program = Effect.gen(function*() {
          if (row.kind !== "rejected") return yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure })
          // the call waits for approval; a human rejects it; the next run applies the policy
          const paused = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure })
          expect(paused._tag).toBe("Pause")
          expect(model.calls).toBe(1)
          const decided = yield* Effect.orDie(
            Approval.decide(paused.chain, { [CALL_ID]: Approval.reject("Too much money.") })
          )
          return yield* Chain.run(decided, { mode: Mode.whileNeedsResponse, onToolFailure })
        })
        const exit = yield* settleRun(program.pipe(Effect.provide([model.layer, handlers.layer])))

        // the repair function saw the failure once, with its kind, call and message
        if (typeof row.policy !== "string") {
          expect(repairs.map((failure) => [failure.kind, failure.call, failure.message])).toEqual([
            [row.kind, { id: CALL_ID, ...scenario.call }, scenario.message]
          ])
        }
        for (const [key, value] of Object.entries(row.log)) {
          expect(handlers.log[key as keyof typeof handlers.log], key).toEqual(value)
        }

        const expected = row.expected
        if (expected._tag === "Answered") {
          if (Exit.isFailure(exit)) throw new globalThis.Error(`expected Ok, got a failure: ${String(exit.cause)}`)
          const outcome = asOk(exit.value)
          expect(outcome.reason).toBe("done")
          expect(Chain.text(outcome.chain)).toBe("Understood.")
          expect(model.calls).toBe(2)
          // what the model saw next: exactly one result for the call
          expect(seenByModel(model, 1)).toEqual([expected.seen])
          expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
          const last = outcome.chain.lastToolResults
          expect(last).toHaveLength(1)
          expect(last[0].isFailure).toBe(expected.seen.isFailure)
          expect(last[0].failureOrigin).toBe(expected.origin)
          expect(last[0].rejected).toBe(expected.rejected)
          // the transcript shows the arguments that ran, and the model was sent them
          expect(callsInTranscript(outcome.chain)).toEqual([
            { id: CALL_ID, name: scenario.call.name, params: expected.params }
          ])
          expect(outcome.chain.failureCount).toBe(expected.seen.isFailure ? 1 : 0)
        } else {
          if (Exit.isSuccess(exit)) throw new globalThis.Error(`expected a RunError, got ${exit.value._tag}`)
          const error = yield* Effect.flip(exit)
          expect(error._tag).toBe("RunError")
          const reason = asToolCallFailed(error.reason)
          expect({ kind: reason.kind, callId: reason.callId, tool: reason.tool, detail: reason.detail }).toEqual({
            kind: row.kind,
            callId: CALL_ID,
            tool: scenario.call.name,
            detail: scenario.message
          })
          expect(error.message).toBe(policyMessage(scenario.call.name, CALL_ID, row.kind, scenario.message))
          // the model is not called again, but the round is complete in the chain
          expect(model.calls).toBe(1)
          expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
          expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([expected.seen])
          expect(error.chain.pendingToolCalls).toEqual([])
          expect(error.chain.callStates).toEqual(new Map())
          expect(error.chain.lastToolResults.map((result) => result.id)).toEqual([CALL_ID])
        }
      }))
  }
})

describe("a repair's new arguments are checked for approval again", () => {
  it.effect("rejected × retryWith to arguments that still need approval: the run pauses for them", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ id: CALL_ID, ...scenarios.rejected.call }] }, { text: "Understood." }])
      const handlers = makeHandlers()
      const onToolFailure: ToolFailurePolicy.Options = {
        rejected: () => Effect.succeed(ToolFailurePolicy.retryWith({ amount: 5000 }))
      }
      const program = Effect.gen(function*() {
        const paused = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure })
        const decided = yield* Effect.orDie(Approval.decide(paused.chain, { [CALL_ID]: Approval.reject("Too much money.") }))
        const again = yield* Chain.run(decided, { mode: Mode.whileNeedsResponse, onToolFailure })
        expect(again._tag).toBe("Pause")
        expect(again._tag === "Pause" && again.reason).toEqual({
          _tag: "ApprovalPending",
          calls: [{ id: CALL_ID, name: "transfer", params: { amount: 5000 } }]
        })
        // nothing ran, and the transcript shows the arguments now waiting for a human
        expect(handlers.log.transfer).toEqual([])
        expect(callsInTranscript(again.chain)).toEqual([{ id: CALL_ID, name: "transfer", params: { amount: 5000 } }])
        expect(model.calls).toBe(1)
      })
      yield* program.pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

// -----------------------------------------------------------------------------
// Policies: details
// -----------------------------------------------------------------------------

describe("onToolFailure: feed-back and format", () => {
  it.effect("format: the model sees the formatter's text; the failure carries kind, call, message and error", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        {
          toolCalls: [
            { name: "weather", params: { city: "Atlantis" } },
            { name: "teleport", params: {} },
            { name: "weather", params: { city: 42 } },
            { name: "weather", params: { city: "Lisbon" } }
          ]
        },
        { text: "Some failed." }
      ])
      const handlers = makeHandlers()
      const seen: Array<ToolFailurePolicy.ToolFailure> = []
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: {
            format: (failure) => {
              seen.push(failure)
              return `[${failure.kind}] ${failure.call.name}: ${failure.message}`
            }
          }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result: "[handler] weather: Tool 'weather' failed: no such city: Atlantis"
        },
        {
          id: "call_1_2",
          name: "teleport",
          isFailure: true,
          result: `[unknown-tool] teleport: Tool 'teleport' not found. Available tools: ${AVAILABLE}`
        },
        { id: "call_1_3", name: "weather", isFailure: true, result: `[parameters] weather: ${PARAMS_MESSAGE}` },
        { id: "call_1_4", name: "weather", isFailure: false, result: { celsius: 21 } }
      ])
      const byId = new Map(seen.map((failure) => [failure.call.id, failure]))
      expect(seen).toHaveLength(3)
      const handler = byId.get("call_1_1")!
      expect(handler.kind).toBe("handler")
      expect(handler.call).toEqual({ id: "call_1_1", name: "weather", params: { city: "Atlantis" } })
      expect(handler.error).toBe("no such city: Atlantis")
      const unknown = byId.get("call_1_2")!
      expect(unknown.kind).toBe("unknown-tool")
      expect("error" in unknown).toBe(false)
      const parameters = byId.get("call_1_3")!
      expect(parameters.kind).toBe("parameters")
      expect(parameters.error).toBeInstanceOf(globalThis.Error)
      expect(String((parameters.error as Error).message)).toContain("Expected string")
      // the failures keep their origin in the chain
      expect(outcome.chain.lastToolResults.map((result) => result.failureOrigin)).toEqual([
        "handler",
        "unknown-tool",
        "parameters",
        undefined
      ])
      expect(outcome.chain.failureCount).toBe(1)
    }))

  it.effect("format applies to a rejection too, which stays a non-error result", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { amount: 5000 } }] },
        { text: "OK, not sending." }
      ])
      const handlers = makeHandlers()
      const options = {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { format: (failure: ToolFailurePolicy.ToolFailure) => `${failure.kind}: ${failure.message}` }
      }
      const outcome = asOk(
        yield* Effect.gen(function*() {
          const paused = yield* Chain.run(userChain(), options)
          const decided = yield* Effect.orDie(Approval.decide(paused.chain, { call_1_1: Approval.reject() }))
          return yield* Chain.run(decided, options)
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "transfer",
          isFailure: false,
          result: "rejected: Tool call 'transfer' was rejected by a human reviewer."
        }
      ])
      expect(outcome.chain.lastToolResults[0].rejected).toBe(true)
      expect(handlers.log.transfer).toEqual([])
    }))

  it.effect("a handler that dies is a 'handler' failure naming the defect", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Chernobyl" } }] },
        { text: "The sensor broke." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result: "Tool 'weather' failed unexpectedly: sensor exploded"
        }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("handler")
    }))

  it.effect("a dying handler with policy 'fail' ends the run with ToolCallFailed (handler)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "weather", params: { city: "Chernobyl" } }] }])
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } })
        .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      const reason = asToolCallFailed(error.reason)
      expect(reason.kind).toBe("handler")
      expect(reason.detail).toBe("Tool 'weather' failed unexpectedly: sensor exploded")
      expect(model.calls).toBe(1)
    }))
})

describe("onToolFailure: fail", () => {
  it.effect("the round completes first: every call has its result in RunError.chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        {
          toolCalls: [
            { name: "weather", params: { city: "Lisbon" } },
            { name: "weather", params: { city: "Atlantis" } },
            { name: "weather", params: { city: "Oslo" } }
          ]
        },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const start = userChain()
      const error = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason).toBeInstanceOf(LoopError.ToolCallFailed)
      expect(error.message).toBe(
        policyMessage("weather", "call_1_2", "handler", "Tool 'weather' failed: no such city: Atlantis")
      )
      expect(model.calls).toBe(1)
      expect(handlers.log.weather).toEqual(["Lisbon", "Atlantis", "Oslo"])
      expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([
        { id: "call_1_1", name: "weather", isFailure: false, result: { celsius: 21 } },
        { id: "call_1_2", name: "weather", isFailure: true, result: "no such city: Atlantis" },
        { id: "call_1_3", name: "weather", isFailure: false, result: { celsius: 4 } }
      ])
      expect(error.chain.pendingToolCalls).toEqual([])
      expect(error.chain.runCount).toBe(1)
      expect(error.chain.failureCount).toBe(1)
      // the chain needs a response: running it again lets the model answer
      expect(error.chain.needsResponse).toBe(true)
    }))

  it.effect("several 'fail' failures in one round: the first in call order is reported, not the first to finish", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "nap", params: { ms: 5000 } }, { name: "teleport" }, { name: "weather", params: { city: 1 } }] }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { timeout: "fail", "unknown-tool": "fail", parameters: "fail" }
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip, Effect.forkChild)
      // teleport and the bad arguments fail at once; nap times out at 2s
      yield* TestClock.adjust("1999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      const reason = asToolCallFailed(error.reason)
      expect([reason.kind, reason.callId, reason.tool, reason.detail]).toEqual([
        "timeout",
        "call_1_1",
        "nap",
        "Tool 'nap' timed out after 2s"
      ])
      expect(toolResultsOf(error.chain.messages.at(-1)).map((seen) => [seen.id, seen.isFailure])).toEqual([
        ["call_1_1", true],
        ["call_1_2", true],
        ["call_1_3", true]
      ])
      expect(handlers.log.interrupted).toEqual(["nap:5000"])
    }))

  it.effect("a 'fail' kind does not affect other kinds: a fed-back failure in the same round does not end the run", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] },
        { text: "Atlantis does not exist." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { "unknown-tool": "fail", parameters: "fail", timeout: "fail" }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(outcome.reason).toBe("done")
      expect(seenByModel(model, 1)).toEqual([scenarios.handler.shown])
    }))
})

describe("onToolFailure: repair functions", () => {
  it.effect("a retried call that fails again is fed back (its new failure), with the retried arguments", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Still wrong." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { parameters: () => Effect.succeed(ToolFailurePolicy.retryWith({ town: "Lisbon" })) }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      const seen = seenByModel(model, 1)
      expect(seen).toHaveLength(1)
      expect(seen[0].isFailure).toBe(true)
      expect(String(seen[0].result)).toContain("Invalid arguments for tool 'weather'")
      expect(String(seen[0].result)).toContain("city")
      expect(callsInTranscript(outcome.chain)).toEqual([
        { id: "call_1_1", name: "weather", params: { town: "Lisbon" } }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("parameters")
      expect(handlers.log.weather).toEqual([])
    }))

  it.effect("the repair runs once per call: a second failure is fed back, not repaired again", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Still wrong." }
      ])
      const handlers = makeHandlers()
      let consulted = 0
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: {
            parameters: () =>
              Effect.sync(() => {
                consulted++
                // a second repair would turn the failure into a success
                return consulted === 1
                  ? ToolFailurePolicy.retryWith({ city: 7 })
                  : ToolFailurePolicy.succeedWith({ celsius: 99 })
              })
          }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(consulted).toBe(1)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "weather", isFailure: true, result: PARAMS_MESSAGE }
      ])
      expect(callsInTranscript(outcome.chain)).toEqual([{ id: "call_1_1", name: "weather", params: { city: 7 } }])
    }))

  it.effect("succeedWith a value that fails the success schema becomes a 'result' failure", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: 42 } }] },
        { text: "Hmm." }
      ])
      const handlers = makeHandlers()
      const outcome = asOk(
        yield* Chain.run(userChain(), {
          mode: Mode.whileNeedsResponse,
          onToolFailure: { parameters: () => Effect.succeed(ToolFailurePolicy.succeedWith({ celsius: "warm" })) }
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      expect(seenByModel(model, 1)).toEqual([
        {
          id: "call_1_1",
          name: "weather",
          isFailure: true,
          result:
            "Tool 'weather': the repaired result does not match the tool's success schema: Expected number\n  at [\"celsius\"]"
        }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("result")
      expect(outcome.chain.lastToolResults[0].result).toEqual({ celsius: "warm" })
    }))

  it.effect("a repair returning ToolFailurePolicy.fail ends the run like 'fail'", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] }])
      const handlers = makeHandlers()
      const error = yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { handler: () => Effect.succeed(ToolFailurePolicy.fail) }
      }).pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip)
      const reason = asToolCallFailed(error.reason)
      expect([reason.kind, reason.callId, reason.detail]).toEqual([
        "handler",
        "call_1_1",
        "Tool 'weather' failed: no such city: Atlantis"
      ])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([scenarios.handler.shown])
      expect(model.calls).toBe(1)
    }))

  it.effect("a repair returning ToolFailurePolicy.feedBack feeds the failure back (with the formatter)", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Atlantis" } }] },
        { text: "No Atlantis." }
      ])
      const handlers = makeHandlers()
      yield* Chain.run(userChain(), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: {
          handler: () => Effect.succeed(ToolFailurePolicy.feedBack),
          format: (failure) => `formatted ${failure.kind}`
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "weather", isFailure: true, result: "formatted handler" }
      ])
    }))

  const brokenRepairs: ReadonlyArray<{ readonly name: string; readonly repair: ToolFailurePolicy.Policy }> = [
    { name: "dies", repair: () => Effect.die(new Error("repair bug")) },
    {
      name: "fails (despite its type)",
      repair: (() => Effect.fail(new Error("repair failed"))) as unknown as ToolFailurePolicy.Policy
    },
    {
      name: "throws",
      repair: () => {
        throw new Error("repair threw")
      }
    }
  ]
  for (const row of brokenRepairs) {
    it.effect(`a repair function that ${row.name}: the failure is fed back`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([
          { toolCalls: [{ name: "weather", params: { city: 42 } }] },
          { text: "Bad arguments." }
        ])
        const handlers = makeHandlers()
        const outcome = asOk(
          yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure: { parameters: row.repair } })
            .pipe(Effect.provide([model.layer, handlers.layer]))
        )
        expect(outcome.reason).toBe("done")
        expect(seenByModel(model, 1)).toEqual([scenarios.parameters.shown])
        expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("parameters")
      }))
  }
})

// -----------------------------------------------------------------------------
// Timeouts
// -----------------------------------------------------------------------------

describe("tool timeouts", () => {
  it.effect("a handler finishing at 1.9s under a 2s annotation succeeds, exactly at 1.9s", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 1900 } }] }, { text: "Rested." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1899 millis")
      expect(handlers.log.started).toEqual(["nap:1900"])
      expect(handlers.log.finished).toEqual([])
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.finished).toEqual(["nap:1900"])
      expect(model.calls).toBe(2)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: false, result: "nap slept 1900ms" }
      ])
      expect(handlers.log.interrupted).toEqual([])
      expect(outcome.chain.failureCount).toBe(0)
    }))

  it.effect("a handler needing 2.1s is interrupted at exactly 2s and becomes a 'timeout' failure", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 2100 } }] }, { text: "Too slow." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1999 millis")
      expect(handlers.log.interrupted).toEqual([])
      expect(model.calls).toBe(1)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      // the finalizer ran and the model was called at once
      expect(handlers.log.interrupted).toEqual(["nap:2100"])
      expect(model.calls).toBe(2)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: true, result: "Tool 'nap' timed out after 2s" }
      ])
      expect(outcome.chain.lastToolResults[0].failureOrigin).toBe("timeout")
      // nothing keeps running in the background
      yield* TestClock.adjust("1 second")
      expect(handlers.log.finished).toEqual([])
    }))

  it.effect("toolTimeout applies to tools without an annotation; the annotation wins for tools that have one", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "fetch", params: { ms: 1500 } }, { name: "nap", params: { ms: 1500 } }] },
        { text: "One of two." }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: "1 second" }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("999 millis")
      expect(handlers.log.interrupted).toEqual([])
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.interrupted).toEqual(["fetch:1500"])
      // the round waits for nap (2s annotation) to finish at 1.5s
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("499 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(2)
      expect(handlers.log.finished).toEqual(["nap:1500"])
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: true, result: "Tool 'fetch' timed out after 1s" },
        { id: "call_1_2", name: "nap", isFailure: false, result: "nap slept 1500ms" }
      ])
    }))

  it.effect("an annotation shorter than toolTimeout wins too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "nap", params: { ms: 3000 } }] }, { text: "Slow." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: "10 seconds" }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("1999 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(handlers.log.interrupted).toEqual(["nap:3000"])
      expect(model.calls).toBe(2)
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "nap", isFailure: true, result: "Tool 'nap' timed out after 2s" }
      ])
    }))

  it.effect("without toolTimeout, a tool without an annotation is never timed out", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: { ms: 600000 } }] }, { text: "Done." }])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("599999 millis")
      expect(model.calls).toBe(1)
      expect(handlers.log.interrupted).toEqual([])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: false, result: "fetch slept 600000ms" }
      ])
    }))

  it.effect("toolTimeout as milliseconds: the message formats the duration", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: { ms: 1000 } }] }, { text: "Slow." }])
      const handlers = makeHandlers()
      const exit = yield* settleRun(
        Chain.run(userChain(), { mode: Mode.whileNeedsResponse, toolTimeout: 250 }).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(seenByModel(model, 1)).toEqual([
        { id: "call_1_1", name: "fetch", isFailure: true, result: "Tool 'fetch' timed out after 250ms" }
      ])
      expect(handlers.log.interrupted).toEqual(["fetch:1000"])
    }))
})

// -----------------------------------------------------------------------------
// Model retry
// -----------------------------------------------------------------------------

/** Two retries, 1 second apart. */
const twoRetriesOneSecondApart = Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(2)])

describe("model retry", () => {
  it.effect("retries at exactly 1s and 2s; a success after retries continues the loop", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { fail: "overloaded (1)" },
        { fail: "overloaded (2)" },
        { toolCalls: [{ name: "weather", params: { city: "Lisbon" } }] },
        { text: "21 degrees in Lisbon." }
      ])
      const handlers = makeHandlers()
      const start = userChain()
      const fiber = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, retry: twoRetriesOneSecondApart }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.forkChild
      )
      yield* TestClock.adjust("999 millis")
      expect(model.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(2)
      yield* TestClock.adjust("999 millis")
      expect(model.calls).toBe(2)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      // the third try succeeds at 2s: the tool runs and the model answers at once
      expect(model.calls).toBe(4)
      const outcome = asOk(yield* Fiber.join(fiber))
      expect(outcome.reason).toBe("done")
      expect(Chain.text(outcome.chain)).toBe("21 degrees in Lisbon.")
      expect(handlers.log.weather).toEqual(["Lisbon"])
      // retries are not model runs; every retry sent the same prompt
      expect(outcome.chain.runCount).toBe(2)
      expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(model.requests[1].prompt).toEqual(model.requests[0].prompt)
      expect(model.requests[2].prompt).toEqual(model.requests[0].prompt)
      expect(model.requests[0].prompt.content).toEqual(start.messages)
      expect(seenByModel(model, 3)).toEqual([
        { id: "call_3_1", name: "weather", isFailure: false, result: { celsius: 21 } }
      ])
    }))

  it.effect("exhausted retries: RunError with the last ModelCallFailed and the chain before the call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "weather", params: { city: "Oslo" } }] },
        { fail: "overloaded (1)" },
        { fail: "overloaded (2)" },
        { fail: "overloaded (3)" },
        { text: "never reached" }
      ])
      const handlers = makeHandlers()
      const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, retry: twoRetriesOneSecondApart })
        .pipe(Effect.provide([model.layer, handlers.layer]), Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("1999 millis")
      expect(model.calls).toBe(3)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(4)
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("RunError")
      expect(error.reason).toBeInstanceOf(LoopError.ModelCallFailed)
      expect(error.reason.message).toBe("The model call failed: overloaded (3)")
      expect(error.message).toBe("The model call failed: overloaded (3)")
      // the chain as it was before the failed call: no partial assistant message
      expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
      expect(error.chain.runCount).toBe(1)
      expect(error.chain.lastResponse?.toolCalls.map((call) => call.name)).toEqual(["weather"])
      expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([
        { id: "call_1_1", name: "weather", isFailure: false, result: { celsius: 4 } }
      ])
      expect(model.requests[3].prompt.content).toEqual(error.chain.messages)
      // no further attempt later
      yield* TestClock.adjust("1 minute")
      expect(model.calls).toBe(4)
    }))

  it.effect("without retry, a failed model call ends the run at once", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "overloaded" }, { text: "never reached" }])
      const handlers = makeHandlers()
      const start = userChain()
      const error = yield* Chain.run(start, { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason.message).toBe("The model call failed: overloaded")
      expect(model.calls).toBe(1)
      expect(error.chain.messages).toEqual(start.messages)
      expect(error.chain.runCount).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// Invalid options
// -----------------------------------------------------------------------------

interface InvalidRow {
  readonly name: string
  readonly options: Readonly<Record<string, unknown>>
  readonly field: string
  readonly message: string
}

const invalidRows: ReadonlyArray<InvalidRow> = [
  {
    name: "onToolFailure with an unknown kind",
    options: { onToolFailure: { nope: "fail" } },
    field: "onToolFailure.nope",
    message:
      "Invalid onToolFailure.nope: is not a failure kind; use one of unknown-tool, parameters, handler, result, timeout, rejected (or format) (got \"fail\")"
  },
  {
    name: "onToolFailure with an unknown policy",
    options: { onToolFailure: { handler: "explode" } },
    field: "onToolFailure.handler",
    message: "Invalid onToolFailure.handler: must be \"feed-back\", \"fail\" or a repair function (got \"explode\")"
  },
  {
    name: "onToolFailure.format that is not a function",
    options: { onToolFailure: { format: "text" } },
    field: "onToolFailure.format",
    message: "Invalid onToolFailure.format: must be a function of the failure (got \"text\")"
  },
  {
    name: "onToolFailure that is not an object",
    options: { onToolFailure: "fail" },
    field: "onToolFailure",
    message: "Invalid onToolFailure: must be an object of policies by failure kind (got \"fail\")"
  },
  {
    name: "a negative toolTimeout",
    options: { toolTimeout: -1 },
    field: "toolTimeout",
    message: "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got -1)"
  },
  {
    name: "a toolTimeout that is not a duration",
    options: { toolTimeout: "soon" },
    field: "toolTimeout",
    message:
      "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got \"soon\")"
  },
  {
    name: "a zero toolTimeout",
    options: { toolTimeout: "0 seconds" },
    field: "toolTimeout",
    message:
      "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got \"0 seconds\")"
  },
  {
    name: "retry that is not a Schedule",
    options: { retry: 3 },
    field: "retry",
    message: "Invalid retry: must be a Schedule (e.g. Schedule.recurs(3)) (got 3)"
  }
]

describe("invalid options", () => {
  for (const row of invalidRows) {
    it.effect(`${row.name} → RunError InvalidInput naming ${row.field}`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ toolCalls: [{ name: "teleport" }] }, { text: "never reached" }])
        const handlers = makeHandlers()
        const start = userChain()
        // options from outside the type system (e.g. JSON config)
        const options = { mode: Mode.whileNeedsResponse, ...row.options } as unknown as Chain.RunOptions<
          ChatModel.ChatModel
        >
        const error = yield* Chain.run(start, options).pipe(
          Effect.provide([model.layer, handlers.layer]),
          Effect.flip
        )
        expect(error._tag).toBe("RunError")
        const reason = error.reason
        if (!(reason instanceof LoopError.InvalidInput)) throw new globalThis.Error(`expected InvalidInput, got ${reason._tag}`)
        expect(reason.field).toBe(row.field)
        expect(reason.message).toBe(row.message)
        expect(error.message).toBe(row.message)
        expect(model.calls).toBe(0)
        expect(error.chain).toBe(start)
      }))
  }
})

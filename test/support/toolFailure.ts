/**
 * Fixtures of the failure-policy tests (ToolFailurePolicy, ToolTimeout, ModelRetry): tools that
 * fail in each way a call can fail (bad parameters, a failing handler, a defect, a timeout, an unknown
 * name), their handlers, scripts and helpers that run a chain and read its last tool results.
 * Also the scenario table of the acceptance matrix (kind × policy), shared by the policy tests.
 */
import { Duration, Effect, Exit, Fiber, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Chain, ChatModel, LoopError, ToolFailurePolicy, ToolTimeout } from "../../src/index.ts"
import type { Outcome, ToolCall } from "../../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** Fails for "Atlantis", dies for "Chernobyl", returns a bad result for "Mars". */
export const Weather = Tool.make("weather", {
  description: "Current temperature of a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ celsius: Schema.Number }),
  failure: Schema.String
})
/** Sleeps `ms`; declares a 2 second timeout. */
export const Nap = Tool.make("nap", {
  parameters: Schema.Struct({ ms: Schema.Number }),
  success: Schema.String
}).annotate(ToolTimeout.Annotation, "2 seconds")
/** Sleeps `ms`; declares no timeout. */
export const Fetch = Tool.make("fetch", {
  parameters: Schema.Struct({ ms: Schema.Number }),
  success: Schema.String
})
/** Needs a human's approval above 1000. */
export const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }) => amount > 1000
})

export const toolkit = Toolkit.make(Weather, Nap, Fetch, Transfer)
export const AVAILABLE = "weather, nap, fetch, transfer"

export const temperatures: Readonly<Record<string, number>> = { Lisbon: 21, Oslo: 4 }

/** Fresh handlers per test, with a log of what ran, finished and was interrupted. */
export const makeHandlers = () => {
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

export const userChain = () => Chain.make({ system: "You help.", user: "Go", toolkit })

export const roles = (chain: Chain.Chain): ReadonlyArray<string> => chain.messages.map((message) => message.role)

/** A tool result as the model sees it in a tool message. */
export interface Seen {
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  readonly result: unknown
}

export const toolResultsOf = (message: Prompt.Message | undefined): ReadonlyArray<Seen> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content
    .filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
    .map((part) => ({ id: part.id, name: part.name, isFailure: part.isFailure, result: part.result }))
}

/** The tool results at the end of the prompt of the model's request `index` (0-based). */
export const seenByModel = (model: ChatModel.ScriptedModel, index: number): ReadonlyArray<Seen> => {
  const request = model.requests[index]
  if (request === undefined) throw new globalThis.Error(`the model received no request #${index + 1}`)
  return toolResultsOf(request.prompt.content.at(-1))
}

/** The tool calls (id, name, params) of the last assistant message that made any. */
export const callsInTranscript = (chain: Chain.Chain): ReadonlyArray<ToolCall.ToolCall> => {
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

export const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

export const asToolCallFailed = (reason: LoopError.StepFailure): LoopError.ToolCallFailed => {
  if (!(reason instanceof LoopError.ToolCallFailed)) {
    throw new globalThis.Error(`expected ToolCallFailed, got ${reason._tag}: ${reason.message}`)
  }
  return reason
}

export const policyMessage = (tool: string, callId: string, kind: string, detail: string): string =>
  `Tool '${tool}' (call ${callId}) failed (${kind}): ${detail.replace(/\.$/, "")}. The run's onToolFailure policy for "${kind}" is "fail"; use "feed-back" to let the model see the failure instead`

/**
 * Runs `chain` to its end in a forked fiber, moving the TestClock far enough
 * for every sleep and timeout of these tests.
 */
export const settleRun = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(Effect.exit(effect))
    yield* TestClock.adjust("1 minute")
    return yield* Fiber.join(fiber)
  })

// -----------------------------------------------------------------------------
// The acceptance table: kind × policy
// -----------------------------------------------------------------------------

export type Kind = ToolFailurePolicy.Kind

/** How each kind is triggered: the call the model makes (id "call_1_1"). */
export interface Scenario {
  readonly call: { readonly name: string; readonly params: unknown }
  /** `ToolFailure.message` (and ToolCallFailed.detail). */
  readonly message: string
  /** What the model is shown when the failure is fed back (default text). */
  readonly shown: Seen
  readonly origin: ToolCall.FailureOrigin | undefined
}

export const CALL_ID = "call_1_1"

export const PARAMS_MESSAGE = "Invalid arguments for tool 'weather': Expected string\n  at [\"city\"]"
export const RESULT_MESSAGE =
  "Tool 'weather' returned a result that does not match its success schema: Expected number\n  at [\"celsius\"]"

export const scenarios: Readonly<Record<Kind, Scenario>> = {
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

export type RowPolicy = "feed-back" | "fail" | ToolFailurePolicy.Repair

export type Expected =
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

export interface KindRow {
  readonly name: string
  readonly kind: Kind
  readonly policy: RowPolicy
  readonly expected: Expected
  /** What the handlers logged. */
  readonly log: Partial<ReturnType<typeof makeHandlers>["log"]>
}

export const fedBack = (kind: Kind): Expected => {
  const scenario = scenarios[kind]
  return kind === "rejected"
    ? { _tag: "Answered", seen: scenario.shown, origin: undefined, rejected: true, params: scenario.call.params }
    : { _tag: "Answered", seen: scenario.shown, origin: scenario.origin, params: scenario.call.params }
}
export const failed = (kind: Kind): Expected => ({ _tag: "Failed", seen: scenarios[kind].shown })
export const succeeded = (kind: Kind, result: unknown, params: unknown = scenarios[kind].call.params): Expected => ({
  _tag: "Answered",
  seen: { id: CALL_ID, name: scenarios[kind].call.name, isFailure: false, result },
  origin: undefined,
  params
})

export const kindRows: ReadonlyArray<KindRow> = [
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

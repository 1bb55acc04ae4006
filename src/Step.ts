/**
 * Steps: the pieces a loop is made of.
 *
 * A step takes the incoming `Effect<Outcome>` and returns a new one. It acts
 * only on `Continue` and passes every terminal outcome (`Ok`, `Pause`,
 * `Error`) through unchanged, so a pipeline short-circuits by itself:
 *
 * ```ts
 * const loop = (chain: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
 *   Step.start(chain).pipe(
 *     Step.executeTools,
 *     Step.callLlm,
 *     Step.checkMaxRuns({ maxRuns: 10 }),
 *     Step.continueOrDone(loop)
 *   )
 * ```
 *
 * Steps never fail: model and tool failures become `Error` outcomes (or
 * failed tool results the model can answer) carrying the chain.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Prompt } from "effect/ai"
import type { Response } from "effect/ai"
import type { Chain, ModelResponse } from "./Chain.ts"
import { ChatModel, type ToolChoice } from "./ChatModel.ts"
import { defaults } from "./internal/options.ts"
import { compile, runCalls } from "./internal/toolExecutor.ts"
import { MaxFailuresExceeded, MaxRunsExceeded } from "./LoopError.ts"
import * as Outcome from "./Outcome.ts"
import * as ReturnBehavior from "./ReturnBehavior.ts"
import type { ToolCall, ToolResult } from "./ToolCall.ts"

/**
 * A step: `Effect<Outcome>` in, `Effect<Outcome>` out; `R` is what it needs
 * from the Effect context.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const twice = (step: Step.Step): Step.Step => (self) => step(step(self))
 * ```
 *
 * @since 0.1.0
 */
export interface Step<R = never> {
  <R0>(self: Effect.Effect<Outcome.Outcome, never, R0>): Effect.Effect<Outcome.Outcome, never, R0 | R>
}

/**
 * Starts a pipeline: `Continue` with `chain`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * const begin = Step.start(Chain.make({ user: "Hi" }))
 * ```
 *
 * @since 0.1.0
 */
export const start = (chain: Chain): Effect.Effect<Outcome.Outcome> => Effect.succeed(new Outcome.Continue(chain))

/**
 * Lifts a function of the chain into a step: it runs on `Continue` and
 * terminal outcomes pass it by.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Outcome, Step } from "loopwork"
 *
 * const logRuns = Step.make((chain) =>
 *   Effect.as(Effect.log(`model calls so far: ${chain.runCount}`), new Outcome.Continue(chain))
 * )
 * ```
 *
 * @since 0.1.0
 */
export const make = <R = never>(f: (chain: Chain) => Effect.Effect<Outcome.Outcome, never, R>): Step<R> => (self) =>
  Effect.flatMap(self, (outcome) => outcome._tag === "Continue" ? f(outcome.chain) : Effect.succeed(outcome))

const continued = (chain: Chain): Effect.Effect<Outcome.Outcome> => Effect.succeed(new Outcome.Continue(chain))

// -----------------------------------------------------------------------------
// callLlm
// -----------------------------------------------------------------------------

/**
 * Options of {@link callLlm}.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.CallOptions = { toolChoice: "required" }
 * ```
 *
 * @since 0.1.0
 */
export interface CallOptions {
  readonly toolChoice?: ToolChoice | undefined
}

const toAssistant = (
  chain: Chain,
  parts: ReadonlyArray<Response.AnyPart>
): Chain => {
  const content: Array<Prompt.AssistantMessagePart> = []
  const toolCalls: Array<ToolCall> = []
  let text = ""
  let finishReason: Response.FinishReason = "unknown"
  let usage: Response.Usage | undefined
  let other = false
  for (const part of parts) {
    switch (part.type) {
      case "text":
        text += part.text
        content.push(Prompt.makePart("text", { text: part.text, options: part.metadata }))
        break
      case "reasoning":
        content.push(Prompt.makePart("reasoning", { text: part.text, options: part.metadata }))
        break
      case "tool-call":
        content.push(Prompt.makePart("tool-call", {
          id: part.id,
          name: part.name,
          params: part.params,
          providerExecuted: part.providerExecuted,
          options: part.metadata
        }))
        if (!part.providerExecuted) toolCalls.push({ id: part.id, name: part.name, params: part.params })
        break
      case "finish":
        finishReason = part.reason
        usage = part.usage
        break
      case "response-metadata":
      case "source":
      case "error":
        break
      default:
        other = true
    }
  }
  // Streamed deltas, files and provider-executed results: let effect/ai
  // assemble the messages.
  const messages = other ? Prompt.fromResponseParts(parts).content : [Prompt.assistantMessage({ content })]
  if (other) {
    text = ""
    for (const message of messages) {
      if (message.role !== "assistant") continue
      for (const part of message.content) if (part.type === "text") text += part.text
    }
  }
  const lastResponse: ModelResponse = usage === undefined
    ? { text, toolCalls, finishReason }
    : { text, toolCalls, finishReason, usage }
  return chain.copy({
    messages: [...chain.messages, ...messages],
    lastResponse,
    pendingToolCalls: toolCalls,
    runCount: chain.runCount + 1
  })
}

const callLlmStep = (options: CallOptions): Step<ChatModel> => {
  const toolChoice = options.toolChoice ?? "auto"
  return make((chain) =>
    Effect.flatMap(
      Effect.service(ChatModel),
      (model) =>
        Effect.match(
          model.generate({
            prompt: Prompt.fromMessages(chain.messages),
            tools: compile(chain.toolkit).tools,
            toolChoice
          }),
          {
            onFailure: (error): Outcome.Outcome => new Outcome.Error(chain, error),
            onSuccess: (parts): Outcome.Outcome => new Outcome.Continue(toAssistant(chain, parts))
          }
        )
    )
  )
}

/**
 * One model turn. The response is appended as an assistant message, its tool
 * calls become the chain's pending calls, and `runCount` goes up by one. A
 * model failure becomes an `Error` outcome carrying the chain as it was
 * before the call. Use {@link callLlmWith} to set a tool choice.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * const oneTurn = Step.start(Chain.make({ user: "Hi" })).pipe(Step.callLlm)
 * ```
 *
 * @since 0.1.0
 */
export const callLlm: Step<ChatModel> = callLlmStep({})

/**
 * {@link callLlm} with options.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const forced = Step.callLlmWith({ toolChoice: "required" })
 * ```
 *
 * @since 0.1.0
 */
export const callLlmWith: (options: CallOptions) => Step<ChatModel> = callLlmStep

// -----------------------------------------------------------------------------
// executeTools
// -----------------------------------------------------------------------------

/**
 * Options of {@link executeTools}.
 *
 * - `concurrency`: how many calls of a round run at once (default
 *   `"unbounded"`); results are appended in call order either way.
 * - `maxFailures`: consecutive failed rounds that end the loop (default 3).
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.ToolOptions = { concurrency: 1, maxFailures: 5 }
 * ```
 *
 * @since 0.1.0
 */
export interface ToolOptions {
  readonly concurrency?: number | "unbounded" | undefined
  readonly maxFailures?: number | undefined
}

const toolMessage = (results: ReadonlyArray<ToolResult>): Prompt.ToolMessage => {
  const content: Array<Prompt.ToolResultPart> = new Array(results.length)
  for (let i = 0; i < results.length; i++) {
    const result = results[i]
    content[i] = Prompt.makePart("tool-result", {
      id: result.id,
      name: result.name,
      isFailure: result.isFailure,
      result: result.encoded,
      providerExecuted: false
    })
  }
  return Prompt.toolMessage({ content })
}

const executeToolsStep = (options: ToolOptions): Step => {
  const concurrency = options.concurrency ?? defaults.concurrency
  const maxFailures = options.maxFailures ?? defaults.maxFailures
  return make((chain) => {
    if (chain.pendingToolCalls.length === 0) return continued(chain)
    return Effect.map(runCalls(compile(chain.toolkit), chain.pendingToolCalls, concurrency), (results) => {
      let anyFailed = false
      for (const result of results) if (result.isFailure) anyFailed = true
      const failureCount = anyFailed ? chain.failureCount + 1 : 0
      const next = chain.copy({
        messages: [...chain.messages, toolMessage(results)],
        pendingToolCalls: [],
        lastToolResults: results,
        failureCount
      })
      return failureCount >= maxFailures
        ? new Outcome.Error(next, new MaxFailuresExceeded({ failures: failureCount, maxFailures }))
        : new Outcome.Continue(next)
    })
  })
}

/**
 * Runs the pending tool calls (a no-op when there are none) and appends one
 * tool message with their results in call order. Calls of a round run
 * concurrently. An unknown tool, arguments that fail the tool's schema, or a
 * failing handler each become a failed result the model sees (the message
 * names the tool, and for bad arguments what was wrong). `failureCount` goes
 * up by one for a round with any failure and back to 0 after a clean round;
 * reaching `maxFailures` (default 3) ends the loop with `MaxFailuresExceeded`.
 * Use {@link executeToolsWith} to set `concurrency` or `maxFailures`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const ran = Step.start(chain).pipe(Step.executeTools)
 * ```
 *
 * @since 0.1.0
 */
export const executeTools: Step = executeToolsStep({})

/**
 * {@link executeTools} with options.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const oneAtATime = Step.executeToolsWith({ concurrency: 1 })
 * ```
 *
 * @since 0.1.0
 */
export const executeToolsWith: (options: ToolOptions) => Step = executeToolsStep

// -----------------------------------------------------------------------------
// checks
// -----------------------------------------------------------------------------

/**
 * Options of {@link checkMaxRuns}.
 *
 * - `maxRuns`: model calls allowed (default 25).
 * - `since`: the chain's `runCount` when the budget started. The built-in
 *   modes pass the `runCount` at the start of each run, so `maxRuns` is a
 *   budget per run (a follow-up question gets a fresh one). The default 0
 *   counts the chain's whole life.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.MaxRunsOptions = { maxRuns: 10, since: 4 }
 * ```
 *
 * @since 0.1.0
 */
export interface MaxRunsOptions {
  readonly maxRuns?: number | undefined
  readonly since?: number | undefined
}

/**
 * Ends the loop with `MaxRunsExceeded` ("Exceeded maximum number of runs
 * (25/25)") when `maxRuns` model calls have been made and the next thing the
 * loop would do is another model call (the chain needs a response and no tool
 * calls are pending). A final answer on the last allowed run is not an error,
 * and pending tool calls still run first, so a chain that fails here has a
 * result for every tool call.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const atMostFive = Step.checkMaxRuns({ maxRuns: 5 })
 * ```
 *
 * @since 0.1.0
 */
export const checkMaxRuns = (options?: MaxRunsOptions): Step => {
  const maxRuns = options?.maxRuns ?? defaults.maxRuns
  const since = options?.since ?? 0
  return make((chain) => {
    const runs = chain.runCount - since
    return runs >= maxRuns && chain.pendingToolCalls.length === 0 && chain.needsResponse
      ? Effect.succeed(new Outcome.Error(chain, new MaxRunsExceeded({ runs, maxRuns })))
      : continued(chain)
  })
}

/** True when the chain's last message is the tool round that just ran. */
const justRanTools = (chain: Chain): boolean =>
  chain.lastToolResults.length > 0 && chain.messages[chain.messages.length - 1]?.role === "tool"

/**
 * Applies the ReturnBehavior rule to the tool round that just ran: `Ok` with
 * reason `"return-behavior"` and the round's results (call order) as `extra`
 * when no call failed and (the last call's tool is `IMMEDIATE_IF_LAST` or
 * every call's tool is `IMMEDIATE`/`IMMEDIATE_IF_LAST`). Place it right after
 * `executeTools`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkReturnBehavior)
 * ```
 *
 * @since 0.1.0
 */
export const checkReturnBehavior: Step = make((chain) => {
  if (!justRanTools(chain)) return continued(chain)
  const results = chain.lastToolResults
  const compiled = compile(chain.toolkit)
  const behaviors: Array<ReturnBehavior.Kind> = new Array(results.length)
  let anyFailed = false
  for (let i = 0; i < results.length; i++) {
    anyFailed = anyFailed || results[i].isFailure
    behaviors[i] = compiled.byName.get(results[i].name)?.behavior ?? "TO_LLM"
  }
  return ReturnBehavior.returnsImmediately(behaviors, anyFailed)
    ? Effect.succeed(new Outcome.Ok(chain, "return-behavior", results))
    : continued(chain)
})

/**
 * Pauses (a clean, resumable checkpoint) when `predicate` says so. The
 * predicate may be a plain function or return an Effect; `reason` defaults to
 * `StopRequested`.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * let draining = false
 * const drain = Step.checkPause(() => draining)
 * ```
 *
 * @since 0.1.0
 */
export const checkPause = <R = never>(
  predicate: (chain: Chain) => boolean | Effect.Effect<boolean, never, R>,
  reason: Outcome.PauseReason = { _tag: "StopRequested" }
): Step<R> =>
  make((chain) => {
    const decided = predicate(chain)
    const pause = (yes: boolean): Outcome.Outcome =>
      yes ? new Outcome.Pause(chain, reason) : new Outcome.Continue(chain)
    return typeof decided === "boolean" ? Effect.succeed(pause(decided)) : Effect.map(decided, pause)
  })

/**
 * Ends the loop with `Ok` (reason `"tool-used"`, `extra` = the result) when
 * the tool round that just ran has a successful call to one of `names`
 * (the first such call in call order). A failed call to a watched tool does
 * not end the loop: the model sees the failure and may try again.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const untilSubmitted = Step.checkUntilTool(["submit"])
 * ```
 *
 * @since 0.1.0
 */
export const checkUntilTool = (names: string | ReadonlyArray<string>): Step => {
  const watched = new Set(typeof names === "string" ? [names] : names)
  return make((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    for (const result of chain.lastToolResults) {
      if (!result.isFailure && watched.has(result.name)) {
        return Effect.succeed(new Outcome.Ok(chain, "tool-used", result))
      }
    }
    return continued(chain)
  })
}

/**
 * Ends the loop with `Ok` (reason `"tools-succeeded"`) when the tool round
 * that just ran had no failure, and with `Ok` (reason `"done"`) when the
 * chain needs no response. Used by `untilSuccess`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkToolSuccess)
 * ```
 *
 * @since 0.1.0
 */
export const checkToolSuccess: Step = make((chain) => {
  if (justRanTools(chain)) {
    for (const result of chain.lastToolResults) if (result.isFailure) return continued(chain)
    return Effect.succeed(new Outcome.Ok(chain, "tools-succeeded"))
  }
  return chain.needsResponse ? continued(chain) : Effect.succeed(new Outcome.Ok(chain, "done"))
})

/**
 * The end of a loop body: while the chain needs a response, run `loop` again;
 * otherwise finish with `Ok` (reason `"done"`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Outcome, Step } from "loopwork"
 *
 * const loop = (chain: Chain.Chain): Effect.Effect<Outcome.Outcome, never, ChatModel.ChatModel> =>
 *   Step.start(chain).pipe(Step.executeTools, Step.callLlm, Step.continueOrDone(loop))
 * ```
 *
 * @since 0.1.0
 */
export const continueOrDone = <O, R>(
  loop: (chain: Chain, options: O) => Effect.Effect<Outcome.Outcome, never, R>,
  options?: O
): Step<R> =>
  make((chain) =>
    chain.needsResponse ? loop(chain, options as O) : Effect.succeed(new Outcome.Ok(chain, "done"))
  )

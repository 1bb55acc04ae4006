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
 * Step factories never throw either. Options or arguments from JSON or
 * JavaScript that break a rule (`Step.callLlmWith(null)`,
 * `Step.checkMaxRuns({ maxRuns: "5" })`, `Step.checkNoTool(5)`) give a step
 * that ends the loop with `Error` and an `InvalidInput` naming the field, on
 * the first `Continue` it sees; the rules are those `Chain.run` applies to
 * its options.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Option, Schedule } from "effect"
import { Prompt } from "effect/ai"
import type { Response, Tool } from "effect/ai"
import type { Chain, ModelResponse } from "./internal/chain.ts"
import { addUser } from "./internal/chainInput.ts"
import { ChatModel, type ChatModelError, type ToolChoice } from "./ChatModel.ts"
import * as DirectReturn from "./DirectReturn.ts"
import * as Arrival from "./internal/arrival.ts"
import * as CallIds from "./internal/callIds.ts"
import type { Limits } from "./internal/jsonBounds.ts"
import {
checkFunction,
checkNoTool as noToolProblem,
checkObject,
checkPauseReason,
checkReturnMemory,
checkSince,
checkStop as stopProblem,
checkToolNames,
defaults,
type Options,
validateOptions
} from "./internal/options.ts"
import { budgetStart } from "./internal/budget.ts"
import { guarded } from "./internal/guarded.ts"
import { CurrentRunBudget, exhausted } from "./internal/runBudget.ts"
import { callModel } from "./internal/modelCall.ts"
import * as Parts from "./internal/parts.ts"
import { inCallOrder, withEdits } from "./internal/round.ts"
import { compile, Cut, Held, type RoundLog, runRound, storable } from "./internal/toolExecutor.ts"
import { InvalidInput, MaxFailuresExceeded, MaxRunsExceeded, ToolCallFailed } from "./LoopError.ts"
import * as MaxRunsPolicy from "./MaxRunsPolicy.ts"
import * as NoToolPolicy from "./NoToolPolicy.ts"
import * as Outcome from "./Outcome.ts"
import * as ReturnBehavior from "./ReturnBehavior.ts"
import { Observer } from "./RunEvent.ts"
import * as StopSignal from "./StopSignal.ts"
import type { StopSignal as Signal } from "./StopSignal.ts"
import type { CallState, ToolCall, ToolResult } from "./ToolCall.ts"

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
export const make = <R = never>(f: (chain: Chain) => Effect.Effect<Outcome.Outcome, never, R>): Step<R> => {
  const invalid = checkFunction(f, "Step.make argument", "must be a function (chain) => Effect<Outcome>")
  if (invalid !== undefined) return refused(invalid)
  return (self) => Effect.flatMap(self, (outcome) => outcome._tag === "Continue" ? f(outcome.chain) : Effect.succeed(outcome))
}

/** A step that ends the loop with `problem` on the first `Continue` (a factory given bad input). */
function refused(problem: InvalidInput): Step {
  return (self) =>
    Effect.map(self, (outcome) => outcome._tag === "Continue" ? new Outcome.Error(outcome.chain, problem) : outcome)
}

/** The first problem of a factory's options: not an object, or a field that breaks its rule. */
const optionsProblem = (options: unknown, field: string, optional = false): InvalidInput | undefined =>
  checkObject(options, field, optional) ?? (options === undefined ? undefined : validateOptions(options as CallOptions))

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
 * // or, retrying a failed call twice, 1 second apart:
 * // { retry: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 })) }
 * ```
 *
 * @since 0.1.0
 */
export interface CallOptions
  extends Pick<Options, "toolChoice" | "retry" | "stop" | "maxArgumentDepth" | "maxArgumentSize">
{}

/** The argument limits of `options`, with the defaults. */
const limitsOf = (options: CallOptions): Limits =>
  options.maxArgumentDepth === undefined && options.maxArgumentSize === undefined
    ? Arrival.defaultLimits
    : {
      maxDepth: options.maxArgumentDepth ?? Arrival.defaultLimits.maxDepth,
      maxSize: options.maxArgumentSize ?? Arrival.defaultLimits.maxSize
    }

const toAssistant = (
  chain: Chain,
  parts: ReadonlyArray<Response.AnyPart>,
  used: CallIds.Used
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
        content.push(Parts.textPart(part.text, part.metadata))
        break
      case "reasoning":
        content.push(Prompt.makePart("reasoning", { text: part.text, options: part.metadata }))
        break
      case "tool-call":
        content.push(Parts.toolCallPart(part.id, part.name, part.params, part.providerExecuted, part.metadata))
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
  const messages = other ? Prompt.fromResponseParts(parts).content : [Parts.assistantMessage(content)]
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
  const next = chain.copy({
    messages: [...chain.messages, ...messages],
    lastResponse,
    pendingToolCalls: toolCalls,
    runCount: chain.runCount + 1
  })
  CallIds.extend(used, next)
  return next
}

/** One model turn on `chain`: the new chain, or the error with `chain` as it was. */
const generate = (
  chain: Chain,
  tools: ReadonlyArray<Tool.Any>,
  toolChoice: ToolChoice,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  limits: Limits,
  bounded: boolean
): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
  Effect.flatMap(
    Effect.context<ChatModel>(),
    (context): Effect.Effect<Outcome.Outcome, never, ChatModel> => {
      // The run's budget bounds every model call, whatever the mode's pipeline (the final-answer call
      // that the budget itself asks for is not bounded again).
      const budget = bounded ? Context.get(context, CurrentRunBudget) : undefined
      if (exhausted(budget, chain)) return budget.atLimit(chain)
      const request = { prompt: Prompt.fromMessages(chain.messages), tools, toolChoice }
      const turn = chain.runCount + 1
      const used = CallIds.usedIn(chain)
      const call = callModel(context, Context.get(context, ChatModel), request, Context.get(context, Observer), retry, turn, limits, used)
      return Effect.match(call, {
        onFailure: (error) => new Outcome.Error(chain, error),
        // Checked here rather than in callModel (no extra step per call); an observed call was checked
        // already, before its events, and passes again unchanged.
        onSuccess: (parts) => new Outcome.Continue(toAssistant(chain, Arrival.normalize(parts, turn, limits, used), used))
      })
    }
  )

/**
 * What to do instead of a model call while the current round is open (tool
 * calls without results): pause for the calls that wait for a decision or a
 * result, and refuse when calls have not been run yet. Calling the model now
 * would send it a tool call without its result and lose the round.
 */
const roundOpen = (chain: Chain): Outcome.Outcome =>
  waiting(chain) ?? new Outcome.Error(
    chain,
    new InvalidInput({
      field: "chain.pendingToolCalls",
      rule: "the model cannot be called while tool calls of the last turn have no result; run Step.executeTools first",
      value: chain.pendingToolCalls.map((call) => call.id)
    })
  )

const stopRequested: Outcome.PauseReason = { _tag: "StopRequested" }

/** `work`, unless `stop` is interrupted first: then `cut` (the work is interrupted). */
const unlessInterrupted = <R>(
  stop: Signal | undefined,
  work: Effect.Effect<Outcome.Outcome, never, R>,
  cut: () => Outcome.Outcome
): Effect.Effect<Outcome.Outcome, never, R> => {
  if (stop === undefined) return work
  if (StopSignal.isInterrupted(stop)) return Effect.sync(cut)
  // `cut` runs once the race is over, after the interrupted work has finished its finalizers.
  return Effect.map(StopSignal.raceInterrupt(stop, work), Option.getOrElse(cut))
}

const callLlmStep = (options: CallOptions): Step<ChatModel> => {
  const toolChoice = options.toolChoice ?? "auto"
  const retry = options.retry
  const stop = options.stop
  const limits = limitsOf(options)
  return make((chain) =>
    chain.pendingToolCalls.length > 0 || chain.roundResults.length > 0
      ? Effect.succeed(roundOpen(chain))
      : unlessInterrupted(
        stop,
        generate(chain, compile(chain.toolkit).tools, toolChoice, retry, limits, true),
        () => new Outcome.Pause(chain, stopRequested)
      )
  )
}

/**
 * One model turn. The response is appended as an assistant message, its tool
 * calls become the chain's pending calls, and `runCount` goes up by one. A
 * model failure becomes an `Error` outcome carrying the chain as it was
 * before the call. While the last turn's tool calls have no results, it does
 * not call the model: it pauses for calls waiting for approval or an external
 * result (as {@link checkAwaiting}), and otherwise ends with `InvalidInput`
 * (run `executeTools` first). Use {@link callLlmWith} to set a tool choice or a retry
 * schedule.
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
export const callLlmWith = (options: CallOptions): Step<ChatModel> => {
  const invalid = optionsProblem(options, "callLlmWith options")
  return invalid === undefined ? callLlmStep(options) : refused(invalid)
}

// -----------------------------------------------------------------------------
// executeTools
// -----------------------------------------------------------------------------

/**
 * Options of {@link executeTools}.
 *
 * - `concurrency`: how many calls of a round run at once (default
 *   `"unbounded"`); results are appended in call order either way.
 * - `maxFailures`: consecutive failed rounds that end the loop (default 3).
 * - `toolTimeout`: timeout of each call of a tool that declares none.
 * - `onToolFailure`: policies per kind of failure (see `ToolFailurePolicy`).
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
export interface ToolOptions extends Pick<Options, "concurrency" | "maxFailures" | "toolTimeout" | "onToolFailure" | "stop"> {}

const toolMessage = (results: ReadonlyArray<ToolResult>): Prompt.ToolMessage => {
  const content: Array<Prompt.ToolResultPart> = new Array(results.length)
  for (let i = 0; i < results.length; i++) {
    const result = results[i]
    content[i] = Parts.toolResultPart(result.id, result.name, result.isFailure, result.encoded)
  }
  return Parts.toolMessage(content)
}

const noStates: ReadonlyMap<string, CallState> = new Map()
const noResults: ReadonlyArray<ToolResult> = Object.freeze([]) as ReadonlyArray<ToolResult>

/** The first failure (in call order) whose policy is "fail", as an error. */
const policyFailure = (log: RoundLog, results: ReadonlyArray<ToolResult>): ToolCallFailed | undefined => {
  if (log.fails.length === 0) return undefined
  const rank = new Map(results.map((result, index) => [result.id, index]))
  let first = log.fails[0]
  for (const failure of log.fails) {
    if ((rank.get(failure.call.id) ?? Infinity) < (rank.get(first.call.id) ?? Infinity)) first = failure
  }
  return new ToolCallFailed({ kind: first.kind, callId: first.call.id, tool: first.call.name, detail: first.message })
}

/**
 * The messages with the round's tool message right after the assistant
 * message that made the calls (user messages added while the round was open,
 * e.g. with `Chain.addUser` during a pause, come after it), so the transcript
 * stays valid for providers.
 */
const withToolMessage = (
  messages: ReadonlyArray<Prompt.Message>,
  tool: Prompt.ToolMessage
): ReadonlyArray<Prompt.Message> => {
  let at = messages.length
  while (at > 0 && messages[at - 1].role !== "assistant") at--
  if (at === 0 || at === messages.length) return [...messages, tool]
  return [...messages.slice(0, at), tool, ...messages.slice(at)]
}

/** Writes a complete round: one tool message with every result in call order. */
const completeRound = (
  chain: Chain,
  messages: ReadonlyArray<Prompt.Message>,
  results: ReadonlyArray<ToolResult>,
  log: RoundLog | undefined,
  maxFailures: number
): Outcome.Outcome => {
  let anyFailed = false
  for (const result of results) if (result.isFailure) anyFailed = true
  const failureCount = anyFailed ? chain.failureCount + 1 : 0
  const next = chain.copy({
    messages: withToolMessage(messages, toolMessage(results)),
    pendingToolCalls: [],
    lastToolResults: results,
    roundResults: noResults,
    callStates: noStates,
    failureCount
  })
  const failed = log === undefined ? undefined : policyFailure(log, results)
  if (failed !== undefined) return new Outcome.Error(next, failed)
  return failureCount >= maxFailures
    ? new Outcome.Error(next, new MaxFailuresExceeded({ failures: failureCount, maxFailures }))
    : new Outcome.Continue(next)
}

const executeToolsStep = (options: ToolOptions): Step => {
  const maxFailures = options.maxFailures ?? defaults.maxFailures
  const policy = {
    concurrency: options.concurrency ?? defaults.concurrency,
    timeout: options.toolTimeout === undefined ? undefined : Duration.fromInputUnsafe(options.toolTimeout),
    onFailure: options.onToolFailure,
    stop: options.stop
  }
  return make((chain) => {
    const pending = chain.pendingToolCalls
    if (pending.length === 0) {
      // A round completed outside the loop (external results, rejections): write it.
      return chain.roundResults.length === 0
        ? continued(chain)
        : Effect.succeed(
          completeRound(chain, chain.messages, inCallOrder(chain.messages, chain.roundResults), undefined, maxFailures)
        )
    }
    return Effect.map(
      runRound(compile(chain.toolkit), pending, chain.callStates, chain.messages, policy),
      ({ log, settled }) => {
        const earlier = chain.roundResults
        const results: Array<ToolResult> = earlier.length === 0 ? [] : earlier.slice()
        let held: Array<Held | Cut> | undefined
        let cut = false
        for (const one of settled) {
          if (one instanceof Held) (held ??= []).push(one)
          else if (one instanceof Cut) {
            ;(held ??= []).push(one)
            cut = true
          } else results.push(storable(one) as ToolResult)
        }
        const edited = withEdits(chain, log.edits)
        const messages = edited.messages
        if (held === undefined) {
          return completeRound(
            edited,
            messages,
            earlier.length === 0 ? results : inCallOrder(messages, results),
            log,
            maxFailures
          )
        }
        // Some calls wait for a decision or an external result: keep the round open.
        const callStates = new Map<string, CallState>()
        const waiting: Array<ToolCall> = []
        for (const { call, state } of held) {
          if (state !== undefined) callStates.set(call.id, state)
          waiting.push(log.edits.has(call.id) ? { id: call.id, name: call.name, params: log.edits.get(call.id) } : call)
        }
        const next = edited.copy({ pendingToolCalls: waiting, roundResults: results, callStates })
        const failed = log.fails.length === 0 ? undefined : policyFailure(log, inCallOrder(messages, results))
        if (failed !== undefined) return new Outcome.Error(next, failed)
        // Calls cut short by StopSignal.interrupt run again on resume.
        return cut ? new Outcome.Pause(next, stopRequested) : new Outcome.Continue(next)
      }
    )
  })
}


/**
 * Runs the pending tool calls (a no-op when there are none) and appends one
 * tool message with their results in call order. Calls of a round run
 * concurrently. An unknown tool, arguments that fail the tool's schema, a
 * failing handler or a timeout each become a failed result the model sees
 * (the message names the tool, and for bad arguments what was wrong), unless
 * the `onToolFailure` policy says otherwise. `failureCount` goes up by one
 * for a round with any failure and back to 0 after a clean round; reaching
 * `maxFailures` (default 3) ends the loop with `MaxFailuresExceeded`.
 *
 * Calls whose tool needs approval (and that nobody approved), and calls to
 * external tools, are not run: they stay pending with their state, the
 * round's other results are kept, and the tool message is written once every
 * call of the round has its result. Follow this step with
 * {@link checkAwaiting} to pause for them.
 *
 * Use {@link executeToolsWith} to set `concurrency`, `maxFailures`,
 * `toolTimeout` or `onToolFailure`.
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
export const executeToolsWith = (options: ToolOptions): Step => {
  const invalid = optionsProblem(options, "executeToolsWith options")
  return invalid === undefined ? executeToolsStep(options) : refused(invalid)
}

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
 * - `onMaxRuns`: what to do at the limit (see `MaxRunsPolicy`; default
 *   `"fail"`).
 * - `retry`: retry schedule of the final-answer call.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.MaxRunsOptions = { maxRuns: 10, since: 4, onMaxRuns: "final-answer" }
 * ```
 *
 * @since 0.1.0
 */
export interface MaxRunsOptions extends Pick<Options, "maxRuns" | "onMaxRuns" | "retry" | "stop"> {
  /**
   * The chain's `runCount` when the budget started (default 0: the chain's
   * whole life). `Step.forRun` passes the start of the run.
   */
  readonly since?: number | undefined
}

const finalAnswer = (
  chain: Chain,
  text: string,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  info: MaxRunsPolicy.Info,
  stop: Signal | undefined
): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
  // The tool definitions are sent with toolChoice "none": providers such as Anthropic reject a prompt
  // holding tool calls and results without them.
  Effect.map(
    unlessInterrupted(
      stop,
      generate(addUser(text)(chain), compile(chain.toolkit).tools, "none", retry, Arrival.defaultLimits, false),
      () => new Outcome.Pause(chain, stopRequested)
    ),
    (outcome) => {
    if (outcome._tag === "Pause") return outcome
    if (outcome._tag === "Error") return new Outcome.Error(chain, outcome.error)
    const answered = outcome.chain
    if (answered.pendingToolCalls.length > 0) {
      return new Outcome.Error(chain, new MaxRunsExceeded({ runs: info.runs, maxRuns: info.maxRuns }))
    }
    return new Outcome.Ok(answered, "final-answer", answered.lastResponse?.text ?? "")
  })

type MaxRunsHandler = (chain: Chain, info: MaxRunsPolicy.Info) => Effect.Effect<Outcome.Terminal>

/**
 * Acts when `maxRuns` model calls have been made and the next thing the loop
 * would do is another model call (the chain needs a response and no tool
 * calls are pending). By default it ends the loop with `MaxRunsExceeded`
 * ("Exceeded maximum number of runs (25/25)"); `onMaxRuns` can stop quietly,
 * ask for a final answer, or hand over to your function (see
 * `MaxRunsPolicy`). A final answer on the last allowed run is not an error,
 * and pending tool calls still run first, so a chain stopped here has a
 * result for every tool call. The step needs a `ChatModel` only for the
 * final-answer policy.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const atMostFive = Step.checkMaxRuns({ maxRuns: 5 })
 * const answerAtTen = Step.checkMaxRuns({ maxRuns: 10, onMaxRuns: "final-answer" })
 * ```
 *
 * @since 0.1.0
 */
export function checkMaxRuns(
  options?: MaxRunsOptions & { readonly onMaxRuns?: "fail" | "stop" | MaxRunsHandler | undefined }
): Step
export function checkMaxRuns(options?: MaxRunsOptions): Step<ChatModel>
export function checkMaxRuns(options?: MaxRunsOptions): Step<ChatModel> {
  const invalid = optionsProblem(options, "checkMaxRuns options", true) ?? checkSince(options?.since)
  if (invalid !== undefined) return refused(invalid)
  const maxRuns = options?.maxRuns ?? defaults.maxRuns
  const since = options?.since ?? 0
  const policy = options?.onMaxRuns ?? "fail"
  const retry = options?.retry
  const stop = options?.stop
  return make((chain) => {
    const runs = chain.runCount - since
    if (!(runs >= maxRuns && chain.pendingToolCalls.length === 0 && chain.needsResponse)) return continued(chain)
    if (policy === "fail") return Effect.succeed(new Outcome.Error(chain, new MaxRunsExceeded({ runs, maxRuns })))
    if (policy === "stop") return Effect.succeed(new Outcome.Ok(chain, "max-runs", chain.lastResponse?.text ?? ""))
    if (policy === "final-answer") return finalAnswer(chain, MaxRunsPolicy.instruction, retry, { runs, maxRuns }, stop)
    if (typeof policy === "function") {
      return guarded(chain, "onMaxRuns", () => policy(chain, { runs, maxRuns }), (outcome) => outcome)
    }
    return finalAnswer(chain, policy.instruction, retry, { runs, maxRuns }, stop)
  })
}

/** The pause for calls waiting for approval (first) or an external result, if any. */
function waiting(chain: Chain): Outcome.Pause | undefined {
  const approvals: Array<ToolCall> = []
  const external: Array<ToolCall> = []
  for (const call of chain.pendingToolCalls) {
    const state = chain.callStates.get(call.id)?._tag
    if (state === "AwaitingApproval") approvals.push(call)
    else if (state === "AwaitingResult") external.push(call)
  }
  if (approvals.length > 0) return new Outcome.Pause(chain, { _tag: "ApprovalPending", calls: approvals })
  if (external.length > 0) return new Outcome.Pause(chain, { _tag: "ExternalPending", calls: external })
  return undefined
}

/** True when the chain's last message is the tool round that just ran. */
const justRanTools = (chain: Chain): boolean =>
  chain.lastToolResults.length > 0 && chain.messages[chain.messages.length - 1]?.role === "tool"

/** A result that stops an early return: a failure, or a call a human rejected. */
const blocksReturn = (result: ToolResult): boolean => result.isFailure || result.rejected === true

const show = (encoded: unknown): string => {
  if (typeof encoded === "string") return encoded
  try {
    return JSON.stringify(encoded) ?? String(encoded)
  } catch {
    return String(encoded)
  }
}

/** Applies the `returnMemory` policy to a chain ending with a returned round. */
const remember = (chain: Chain, results: ReadonlyArray<ToolResult>, memory: DirectReturn.Memory): Chain => {
  if (memory === "results") return chain
  const answer = Prompt.assistantMessage({
    content: [Prompt.textPart({ text: results.map((result) => show(result.encoded)).join("\n\n") })]
  })
  let messages = chain.messages
  if (memory === "placeholder") {
    const last = messages[messages.length - 1]
    if (last?.role === "tool") {
      const content = last.content.map((part) =>
        part.type === "tool-result"
          ? Prompt.makePart("tool-result", {
            id: part.id,
            name: part.name,
            isFailure: false,
            result: DirectReturn.placeholderNote,
            providerExecuted: part.providerExecuted
          })
          : part
      )
      messages = [...messages.slice(0, -1), Prompt.toolMessage({ content, options: last.options })]
    }
  }
  return chain.copy({ messages: [...messages, answer] })
}

/**
 * Options of {@link checkReturnBehaviorWith} and {@link checkDirectReturn}.
 *
 * - `returnMemory`: what the chain keeps when the round ends the loop (see
 *   `DirectReturn.Memory`; default `"results"`).
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.ReturnOptions = { returnMemory: "answer" }
 * ```
 *
 * @since 0.1.0
 */
export interface ReturnOptions extends Pick<Options, "returnMemory"> {
  /** @deprecated since 0.2.0: use `returnMemory`, the name `Chain.run` takes. */
  readonly memory?: DirectReturn.Memory | undefined
}

/** The memory of `options` (the old name `memory` still read). */
const memoryOf = (options: ReturnOptions | undefined): DirectReturn.Memory =>
  options?.returnMemory ?? options?.memory ?? defaults.returnMemory

const checkReturnBehaviorStep = (options: ReturnOptions): Step => {
  const memory = memoryOf(options)
  return make((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    const results = chain.lastToolResults
    const compiled = compile(chain.toolkit)
    const behaviors: Array<ReturnBehavior.Kind> = new Array(results.length)
    let anyFailed = false
    for (let i = 0; i < results.length; i++) {
      anyFailed = anyFailed || blocksReturn(results[i])
      behaviors[i] = compiled.byName.get(results[i].name)?.behavior ?? "TO_LLM"
    }
    return ReturnBehavior.returnsImmediately(behaviors, anyFailed)
      ? Effect.succeed(new Outcome.Ok(remember(chain, results, memory), "return-behavior", results))
      : continued(chain)
  })
}

/**
 * Applies the ReturnBehavior rule to the tool round that just ran: `Ok` with
 * reason `"return-behavior"` and the round's results (call order) as `extra`
 * when no call failed or was rejected and (the last call's tool is
 * `IMMEDIATE_IF_LAST` or every call's tool is `IMMEDIATE`/`IMMEDIATE_IF_LAST`).
 * Place it right after `executeTools`. {@link checkReturnBehaviorWith} sets
 * what the chain keeps.
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
export const checkReturnBehavior: Step = checkReturnBehaviorStep({})

/**
 * {@link checkReturnBehavior} with options.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const withAnswer = Step.checkReturnBehaviorWith({ returnMemory: "answer" })
 * ```
 *
 * @since 0.1.0
 */
export const checkReturnBehaviorWith = (options: ReturnOptions): Step => {
  const invalid = checkObject(options, "checkReturnBehaviorWith options") ?? (checkReturnMemory(options.returnMemory, "returnMemory") ?? checkReturnMemory(options.memory, "memory"))
  return invalid === undefined ? checkReturnBehaviorStep(options) : refused(invalid)
}

/**
 * Ends the loop with `Ok` (reason `"direct-return"`, `extra` = the round's
 * results in call order) when a handler of the tool round that just ran
 * marked its result as the final answer (`DirectReturn.final`) and no call of
 * the round failed or was rejected. See `DirectReturn` for the rules.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkDirectReturn())
 * ```
 *
 * @since 0.1.0
 */
export const checkDirectReturn = (options?: ReturnOptions): Step => {
  const invalid = checkObject(options, "checkDirectReturn options", true) ?? (checkReturnMemory(options?.returnMemory, "returnMemory") ?? checkReturnMemory(options?.memory, "memory"))
  if (invalid !== undefined) return refused(invalid)
  const memory = memoryOf(options)
  return make((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    const results = chain.lastToolResults
    let marked = false
    for (const result of results) {
      if (blocksReturn(result)) return continued(chain)
      if (result.directReturn === true) marked = true
    }
    return marked ? Effect.succeed(new Outcome.Ok(remember(chain, results, memory), "direct-return", results)) : continued(chain)
  })
}

/**
 * Pauses with reason `StopRequested` when `signal` has been raised. Place it
 * after `executeTools`: the loop then stops between rounds, never between a
 * tool call and its result, and a stop raised during a model call takes
 * effect once that call's tools have run.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Step, StopSignal } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Effect.gen(function*() {
 *   const stop = yield* StopSignal.make
 *   return yield* Step.start(chain).pipe(Step.executeTools, Step.checkStop(stop))
 * })
 * ```
 *
 * @since 0.1.0
 */
export const checkStop = (signal: Signal): Step => {
  const invalid = stopProblem(signal, "checkStop signal")
  if (invalid !== undefined) return refused(invalid)
  return make((chain) =>
    signal.requested ? Effect.succeed(new Outcome.Pause(chain, { _tag: "StopRequested" })) : continued(chain)
  )
}

/**
 * Pauses when calls of the current round wait: `ApprovalPending` (listing the
 * calls) when any waits for approval, otherwise `ExternalPending` when any
 * waits for an external result. Place it after `executeTools`.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkAwaiting)
 * ```
 *
 * @since 0.1.0
 */
export const checkAwaiting: Step = make((chain) => {
  if (chain.pendingToolCalls.length === 0) return continued(chain)
  return Effect.succeed(waiting(chain) ?? new Outcome.Continue(chain))
})

const applyNoTool = (chain: Chain, response: ModelResponse, decision: NoToolPolicy.Decision): Outcome.Outcome => {
  if (typeof decision === "string" && decision.length > 0) {
    if (decision === "done") return new Outcome.Ok(chain, "done", response.text)
    if (decision === "user") return new Outcome.Pause(chain, { _tag: "UserInputWanted" })
    return new Outcome.Continue(addUser(decision)(chain))
  }
  if (typeof decision !== "string" && NoToolPolicy.isDecision(decision)) {
    return decision._tag === "Remind"
      ? new Outcome.Continue(addUser(decision.text)(chain))
      : new Outcome.Ok(chain, "no-tool-result", decision.result)
  }
  return new Outcome.Error(
    chain,
    new InvalidInput({
      field: "noTool",
      rule:
        "the policy (or its function) must give \"done\", \"user\", a non-empty reminder string, NoToolPolicy.remind(text) or NoToolPolicy.result(value)",
      value: decision
    })
  )
}

/**
 * The no-tool fallback: when the model has just answered without any tool
 * call, `policy` decides what happens (see `NoToolPolicy`): `"done"` ends with
 * the answer's text as `extra`, `"user"` pauses for user input, a reminder
 * string is appended as a user message so the loop calls the model again,
 * `NoToolPolicy.result(value)` ends with `value`, and a function decides per
 * answer. Place it right after `callLlm`.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const nudge = Step.checkNoTool("Please answer by calling the submit tool.")
 * ```
 *
 * @since 0.1.0
 */
export const checkNoTool = (policy: NoToolPolicy.Policy): Step => {
  const invalid = noToolProblem(policy, "checkNoTool policy")
  if (invalid !== undefined) return refused(invalid)
  return make((chain) => {
    const response = chain.lastResponse
    if (
      response === undefined || response.toolCalls.length > 0 || chain.pendingToolCalls.length > 0 ||
      chain.messages[chain.messages.length - 1]?.role !== "assistant"
    ) return continued(chain)
    if (typeof policy !== "function") return Effect.succeed(applyNoTool(chain, response, policy))
    return guarded(chain, "noTool", () => policy(response, chain), (decision) => applyNoTool(chain, response, decision))
  })
}

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
): Step<R> => {
  const invalid = checkFunction(predicate, "checkPause predicate", "must be a function of the chain") ??
    checkPauseReason(reason, "checkPause reason")
  if (invalid !== undefined) return refused(invalid)
  return make((chain) =>
    guarded(
      chain,
      "checkPause",
      () => predicate(chain),
      (yes): Outcome.Outcome => yes ? new Outcome.Pause(chain, reason) : new Outcome.Continue(chain)
    )
  )
}

/**
 * Ends the loop with `Ok` (reason `"tool-used"`, `extra` = the result) when
 * the tool round that just ran has a successful call to one of `names`
 * (the first such call in call order). A failed (or rejected) call to a
 * watched tool does not end the loop: the model sees the failure and may try
 * again.
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
  const invalid = checkToolNames(names, "checkUntilTool names")
  if (invalid !== undefined) return refused(invalid)
  const watched = new Set(typeof names === "string" ? [names] : names)
  return make((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    for (const result of chain.lastToolResults) {
      if (!blocksReturn(result) && watched.has(result.name)) {
        return Effect.succeed(new Outcome.Ok(chain, "tool-used", result))
      }
    }
    return continued(chain)
  })
}

/**
 * Ends the loop with `Ok` (reason `"tools-succeeded"`) when the tool round
 * that just ran had no failure (and no rejected call), and with `Ok` (reason
 * `"done"`) when the chain needs no response. Used by `untilSuccess`.
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
    for (const result of chain.lastToolResults) if (blocksReturn(result)) return continued(chain)
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
): Step<R> => {
  const invalid = checkFunction(loop, "continueOrDone loop", "must be a function (chain, options) => Effect<Outcome>")
  if (invalid !== undefined) return refused(invalid)
  return make((chain) =>
    chain.needsResponse ? loop(chain, options as O) : Effect.succeed(new Outcome.Ok(chain, "done"))
  )
}

// -----------------------------------------------------------------------------
// forRun
// -----------------------------------------------------------------------------

/**
 * The built-in steps bound to one run's options: what every built-in mode is
 * made of, so a custom mode made of them does everything a built-in does.
 *
 * - `executeTools`: `concurrency`, `maxFailures`, `toolTimeout`,
 *   `onToolFailure`, `stop`.
 * - `checkStop`, `checkDirectReturn`, `checkReturnBehavior`: the checks after
 *   a tool round, in the priority order (with `checkAwaiting` between stop and
 *   direct return); `returnMemory`.
 * - `checkMaxRuns`: `maxRuns` counted from the start of the run (a run resumed
 *   after a pause continues its budget), `onMaxRuns`, `retry`, `stop`.
 * - `callLlm`: `toolChoice`, `retry`, `stop`, `maxArgumentDepth`,
 *   `maxArgumentSize`.
 * - `checkNoTool`: `noTool`, or the mode's default (`modeDefaults.noTool`);
 *   passes everything through when neither is set.
 *
 * @example
 * ```ts
 * import { Chain, ChatModel, Mode, Step } from "loopwork"
 *
 * const steps = (chain: Chain.Chain, options: Mode.Options) => Step.forRun(chain, options)
 * ```
 *
 * @since 0.2.0
 */
export const forRun = (
  chain: Chain,
  options: Options,
  modeDefaults?: { readonly noTool?: NoToolPolicy.Policy | undefined }
): RunSteps => {
  const noTool = options.noTool ?? modeDefaults?.noTool
  return {
    executeTools: executeToolsWith(options),
    checkStop: options.stop === undefined ? passThrough : checkStop(options.stop),
    checkDirectReturn: checkDirectReturn({ returnMemory: options.returnMemory }),
    checkReturnBehavior: checkReturnBehaviorWith({ returnMemory: options.returnMemory }),
    checkMaxRuns: checkMaxRuns({
      maxRuns: options.maxRuns,
      since: budgetStart(chain),
      onMaxRuns: options.onMaxRuns,
      retry: options.retry,
      stop: options.stop
    }),
    callLlm: callLlmWith(options),
    checkNoTool: noTool === undefined ? passThrough : checkNoTool(noTool)
  }
}

/**
 * The steps {@link forRun} returns.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const roundChecks = (s: Step.RunSteps): ReadonlyArray<Step.Step> => [s.checkStop, s.checkDirectReturn]
 * ```
 *
 * @since 0.2.0
 */
export interface RunSteps {
  readonly executeTools: Step
  readonly checkStop: Step
  readonly checkDirectReturn: Step
  readonly checkReturnBehavior: Step
  readonly checkMaxRuns: Step<ChatModel>
  readonly callLlm: Step<ChatModel>
  readonly checkNoTool: Step<ChatModel>
}

const passThrough: Step = (self) => self

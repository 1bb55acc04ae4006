/**
 * `executeTools`: the pending tool calls run, and one tool message with their results in call order (a round waiting for approvals or external results stays open).
 *
 * @internal
 */
import { type Context, Duration, Effect } from "effect"
import * as Prompt from "effect/ai/Prompt"
import type { Chain } from "../chain.ts"
import { defaults, type Options } from "../options.ts"
import { appended } from "../appended.ts"
import * as Parts from "../parts.ts"
import { inCallOrder, withEdits } from "../round.ts"
import { compile } from "../tools/compile.ts"
import type { RoundLog } from "../tools/roundContext.ts"
import { runRound } from "../tools/round.ts"
import { contextNow } from "../contextNow.ts"
import { Cut, Held, isHeld, type Settled } from "../tools/settled.ts"
import { MaxFailuresExceeded, ToolCallFailed } from "../../LoopError.ts"
import * as Outcome from "../../Outcome.ts"
import type { CallState, ToolCall, ToolResult } from "../../ToolCall.ts"
import { limitsOf, stopRequested } from "./callLlm.ts"
import { boundedCalls } from "../arrival.ts"
import { continued, lift, optionsProblem, refused, type Step } from "../step.ts"

/**
 * Options of {@link executeTools}.
 *
 * - `concurrency`: how many calls of a round run at once (default
 *   `"unbounded"`); results are appended in call order either way.
 * - `maxFailures`: consecutive failed rounds that end the loop (default 3).
 * - `toolTimeout`: timeout of each call of a tool that declares none.
 * - `onToolFailure`: policies per kind of failure (see `ToolFailurePolicy`).
 * - `maxArgumentDepth`, `maxArgumentSize`: the arguments a call may run
 *   with (defaults 64 levels, 1,000,000 characters of JSON), as for the
 *   model's answers: an edit or a stored chain's pending call past them
 *   fails as a "parameters" failure, and its handler never runs.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.ToolOptions = { concurrency: 1, maxFailures: 5 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolOptions
  extends Pick<Options, "concurrency" | "maxFailures" | "toolTimeout" | "onToolFailure" | "stop" | "maxArgumentDepth" | "maxArgumentSize">
{}

/** @internal */
export const toolMessage = (results: ReadonlyArray<ToolResult>): Prompt.ToolMessage => {
  const content: Array<Prompt.ToolResultPart> = new Array(results.length)
  for (let i = 0; i < results.length; i++) {
    const result = results[i]
    content[i] = Parts.toolResultPart(result.id, result.name, result.isFailure, result.encoded)
  }
  return Parts.toolMessage(content)
}

/** @internal */
export const noStates: ReadonlyMap<string, CallState> = new Map()
/** @internal */
export const noResults: ReadonlyArray<ToolResult> = Object.freeze([]) as ReadonlyArray<ToolResult>

/** @internal The first failure (in call order) whose policy is "fail", as an error. */
export const policyFailure = (log: RoundLog, results: ReadonlyArray<ToolResult>): ToolCallFailed | undefined => {
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
 *
 * @internal
 */
export const withToolMessage = (
  messages: ReadonlyArray<Prompt.Message>,
  tool: Prompt.ToolMessage
): ReadonlyArray<Prompt.Message> => {
  let at = messages.length
  while (at > 0 && messages[at - 1].role !== "assistant") at--
  if (at === 0 || at === messages.length) return appended(messages, [tool])
  return [...messages.slice(0, at), tool, ...messages.slice(at)]
}

/** @internal Writes a complete round: one tool message with every result in call order. */
export const completeRound = (
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

/**
 * The outcome of a round that ran its pending calls, from what each call
 * settled to: the round written when every call has its result; otherwise
 * kept open with the calls that wait (a decision, an external result, or a
 * stop that cut them short).
 */
const roundOutcome = (chain: Chain, maxFailures: number) => (settled: ReadonlyArray<Settled>, log: RoundLog): Outcome.Outcome => {
  const earlier = chain.roundResults
  const results: Array<ToolResult> = earlier.length === 0 ? [] : earlier.slice()
  let held: Array<Held | Cut> | undefined
  let cut = false
  for (const one of settled) {
    if (one instanceof Held) (held ??= []).push(one)
    else if (one instanceof Cut) {
      ;(held ??= []).push(one)
      cut = true
    } else results.push(one)
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

/** @internal */
export const executeToolsStep = (options: ToolOptions): Step => {
  const maxFailures = options.maxFailures ?? defaults.maxFailures
  const policy = {
    concurrency: options.concurrency ?? defaults.concurrency,
    timeout: options.toolTimeout === undefined ? undefined : Duration.fromInputUnsafe(options.toolTimeout),
    onFailure: options.onToolFailure,
    stop: options.stop
  }
  const limits = limitsOf(options)
  return lift((chain) => {
    const pending = chain.pendingToolCalls
    if (pending.length === 0) {
      // A round completed outside the loop (external results, rejections): write it.
      return chain.roundResults.length === 0
        ? continued(chain)
        : Effect.succeed(
          completeRound(chain, chain.messages, inCallOrder(chain.messages, chain.roundResults), undefined, maxFailures)
        )
    }
    // In the step's own fiber, whose context it reads now (../contextNow.ts).
    return contextNow((services: Context.Context<never>) => runRound(
      services,
      compile(chain.toolkit),
      boundedCalls(pending, limits, (id) => isHeld(chain.callStates.get(id))),
      chain.callStates,
      chain.messages,
      policy,
      roundOutcome(chain, maxFailures)
    ))
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
 * @category steps
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
 * @category steps
 * @since 0.1.0
 */
export const executeToolsWith = (options: ToolOptions): Step => {
  const invalid = optionsProblem(options, "executeToolsWith options")
  return invalid === undefined ? executeToolsStep(options) : refused(invalid)
}

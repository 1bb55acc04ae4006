/**
 * `callLlm`: one model turn appended to the chain (its tool calls become pending), bounded by the run's budget, checked on arrival.
 *
 * @internal
 */
import { Context, Effect, Option, Schedule } from "effect"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import type { Chain } from "../chain.ts"
import { ChatModel, type ChatModelError, type ToolChoice } from "../../ChatModel.ts"
import * as Arrival from "../arrival.ts"
import { unusableAnswer } from "../safeModelCall.ts"
import * as CallIds from "../callIds.ts"
import type { Limits } from "../jsonBounds.ts"
import { type Options } from "../options.ts"
import { exhausted } from "../runBudget.ts"
import { runContextOf } from "../runContext.ts"
import { contextNow } from "../contextNow.ts"
import { callModel } from "../modelCall.ts"
import { appendTurn, type Turn, turnOf } from "../turn.ts"
import { compile } from "../tools/compile.ts"
import { InvalidInput } from "../../LoopError.ts"
import * as Outcome from "../../Outcome.ts"
import { isInterrupted, raceInterrupt, type StopSignal as Signal } from "../stopSignal.ts"
import { waiting } from "./roundState.ts"
import { lift, optionsProblem, refused, type Step } from "../step.ts"

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
 * @category models
 * @since 0.1.0
 */
export interface CallOptions
  extends Pick<Options, "toolChoice" | "retry" | "stop" | "maxArgumentDepth" | "maxArgumentSize">
{}

/** @internal The argument limits of `options`, with the defaults. */
export const limitsOf = (options: CallOptions): Limits =>
  options.maxArgumentDepth === undefined && options.maxArgumentSize === undefined
    ? Arrival.defaultLimits
    : {
      maxDepth: options.maxArgumentDepth ?? Arrival.defaultLimits.maxDepth,
      maxSize: options.maxArgumentSize ?? Arrival.defaultLimits.maxSize
    }

const same = (parts: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> | string => parts

/**
 * The turn of `parts`, once `check` has kept them, or why it cannot be
 * used: what `check` says, or that a part threw when read (a JavaScript
 * model's getter).
 */
const turnIn = (
  parts: ReadonlyArray<Response.AnyPart>,
  check: (parts: ReadonlyArray<Response.AnyPart>) => ReadonlyArray<Response.AnyPart> | string
): Turn | string => {
  const kept = check(parts)
  if (typeof kept === "string") return kept
  try {
    return turnOf(kept)
  } catch (error) {
    return Arrival.unreadable(error)
  }
}

/**
 * @internal One model turn on `chain`: the new chain, or the error with
 * `chain` as it was. For a step's function: it reads the running fiber's
 * context now (../contextNow.ts).
 */
export const generate = (
  chain: Chain,
  tools: ReadonlyArray<Tool.Any>,
  toolChoice: ToolChoice,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  limits: Limits,
  bounded: boolean
): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
  contextNow(
    (context: Context.Context<ChatModel>): Effect.Effect<Outcome.Outcome, never, ChatModel> => {
      // The run's budget bounds every model call, whatever the mode's pipeline (the final-answer call
      // that the budget itself asks for is not bounded again).
      const run = runContextOf(context)
      const budget = bounded ? run.budget : undefined
      if (exhausted(budget, chain)) return budget.atLimit(chain)
      const request = { prompt: Prompt.fromMessages(chain.messages), tools, toolChoice }
      const turn = chain.runCount + 1
      const used = CallIds.usedIn(chain)
      // Made when it runs: callModel calls the model's generate now, for a caller that runs it at once.
      const call = () => callModel(context, run, Context.get(context, ChatModel), request, retry, turn, limits, used)
      // Checked here rather than in callModel (no extra step per call); an observed call was checked
      // already, before its events.
      const checked = run.report !== undefined ? same : (parts: ReadonlyArray<Response.AnyPart>) => Arrival.received(parts, turn, limits, used)
      const durability = run.durability
      if (durability === undefined) {
        // Eager: a call that completed at once (an Exit) is branched on now, with no step of the runtime.
        return Effect.matchEager(call(), {
          onFailure: (error) => new Outcome.Error(chain, error),
          onSuccess: (parts) => {
            const read = turnIn(parts, checked)
            return typeof read === "string" ? new Outcome.Error(chain, unusableAnswer(read)) : new Outcome.Continue(appendTurn(chain, read, used))
          }
        })
      }
      // A replayed call is never made: the model is not asked, and an ensemble's budget counts it once.
      const made = Effect.suspend(() =>
        Effect.flatMap(call(), (parts) => {
          const read = turnIn(parts, checked)
          return typeof read === "string" ? Effect.fail(unusableAnswer(read)) : Effect.succeed(read)
        })
      )
      return Effect.match(durability.modelCall(made), {
        onFailure: (error) => new Outcome.Error(chain, error),
        onSuccess: (recorded) =>
          recorded === undefined ? new Outcome.Pause(chain, stopRequested) : new Outcome.Continue(appendTurn(chain, recorded, used))
      })
    }
  )

/**
 * What to do instead of a model call while the current round is open (tool
 * calls without results): pause for the calls that wait for a decision or a
 * result, and refuse when calls have not been run yet. Calling the model now
 * would send it a tool call without its result and lose the round.
 *
 * @internal
 */
export const roundOpen = (chain: Chain): Outcome.Outcome =>
  waiting(chain) ?? new Outcome.Error(
    chain,
    new InvalidInput({
      field: "chain.pendingToolCalls",
      rule: "the model cannot be called while tool calls of the last turn have no result; run Step.executeTools first",
      value: chain.pendingToolCalls.map((call) => call.id)
    })
  )

/** @internal */
export const stopRequested: Outcome.PauseReason = { _tag: "StopRequested" }

/**
 * @internal `work()`, unless `stop` is interrupted first: then `cut` (the
 * work is interrupted). `work` is made only when it is to run: making a
 * model call may already take it from a budget (see generateNow.ts).
 */
export const unlessInterrupted = <R>(
  stop: Signal | undefined,
  work: () => Effect.Effect<Outcome.Outcome, never, R>,
  cut: () => Outcome.Outcome
): Effect.Effect<Outcome.Outcome, never, R> => {
  if (stop === undefined) return work()
  if (isInterrupted(stop)) return Effect.sync(cut)
  // `cut` runs once the race is over, after the interrupted work has finished its finalizers.
  return Effect.map(raceInterrupt(stop, work()), Option.getOrElse(cut))
}

/** @internal */
export const callLlmStep = (options: CallOptions): Step<ChatModel> => {
  const toolChoice = options.toolChoice ?? "auto"
  const retry = options.retry
  const stop = options.stop
  const limits = limitsOf(options)
  return lift((chain) =>
    chain.pendingToolCalls.length > 0 || chain.roundResults.length > 0
      ? Effect.succeed(roundOpen(chain))
      : unlessInterrupted(
        stop,
        () => generate(chain, compile(chain.toolkit).tools, toolChoice, retry, limits, true),
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
 * @category steps
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
 * @category steps
 * @since 0.1.0
 */
export const callLlmWith = (options: CallOptions): Step<ChatModel> => {
  const invalid = optionsProblem(options, "callLlmWith options")
  return invalid === undefined ? callLlmStep(options) : refused(invalid)
}

/**
 * Modes: whole loops, each a pipeline of steps.
 *
 * A mode is `(chain, options) => Effect<Outcome>` ending in a terminal
 * outcome. The built-ins:
 *
 * | mode | loop | ends |
 * |---|---|---|
 * | `whileNeedsResponse` | run pending tools, call the model, repeat | the model answers without tools, or a tool round ends it (direct return, ReturnBehavior) |
 * | `untilSuccess` | call the model, run its tools, repeat | a tool round without failures, or a plain answer |
 * | `step` | one step: run pending tools *or* call the model | after one step, or when `shouldContinue(chain)` is false |
 * | `untilToolUsed(names)` | call the model, run its tools, repeat | a successful call to one of `names` (`extra` = its result) |
 *
 * Every looping mode is bounded by `maxRuns` (model calls, default 25) and
 * `maxFailures` (consecutive failed tool rounds, default 3), and applies the
 * priority checks after each tool round (stop, approvals, external results,
 * direct return, ReturnBehavior) and the run's policies (`Options`). Write
 * your own mode the same way; see `examples/custom-mode.ts`.
 *
 * Bad input never throws: a built-in mode called with options that break a
 * rule (or `untilToolUsed` given names that are not names) ends with `Error`
 * and an `InvalidInput` naming the field, before any model call.
 *
 * @since 0.1.0
 */
import { Context, Effect, Fiber, Scheduler } from "effect"
import type { Chain } from "./internal/chain.ts"
import type { ChatModel } from "./ChatModel.ts"
import { type Options as RunOptionsBase, validateOptions } from "./internal/options.ts"
import { checkObject, checkToolNames, readably } from "./internal/checks.ts"
import { checkToolsExist } from "./internal/steps/toolChecks.ts"
import { sharedSteps } from "./internal/steps/forRun.ts"
import * as NoToolPolicy from "./NoToolPolicy.ts"
import * as Outcome from "./Outcome.ts"
import * as Step from "./Step.ts"
import { type Body, lift, type Round, roundFor, runSteps, stepsOf, type Then } from "./internal/step.ts"
import { type Contract, heldToContract } from "./internal/contract.ts"

/**
 * Options every built-in mode reads (declared, defaulted and checked in one
 * place). A custom mode may take its own options too: `Mode<R, O>` with
 * `O extends Options`, and `Chain.run(chain, { mode, ...O })` type-checks
 * them.
 *
 * @example
 * ```ts
 * import { Mode } from "loopwork"
 *
 * const options: Mode.Options = { maxRuns: 10, concurrency: 4, onMaxRuns: "final-answer" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Options = RunOptionsBase

/**
 * A mode.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Mode, Outcome } from "loopwork"
 *
 * const doNothing: Mode.Mode = (chain) => Effect.succeed(new Outcome.Ok(chain, "done"))
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Mode<R = never, O extends Options = Options> = (
  chain: Chain,
  options: O
) => Effect.Effect<Outcome.Outcome, never, R>

const done = (chain: Chain): Effect.Effect<Outcome.Outcome> => Effect.succeed(new Outcome.Ok(chain, "done"))

/**
 * `mode`, after a check of its options: a built-in mode called directly (not
 * through `Chain.run`, which checks them first) with options from JavaScript
 * that break a rule ends with `Error` and the `InvalidInput`, before any step.
 */
const checked = <R>(mode: Mode<R>): Mode<R> => (chain, options) => {
  // From JavaScript, reading an option may throw: that is a problem of the options, not a defect.
  const invalid = readably("options", () => checkObject(options, "options") ?? validateOptions(options))
  return invalid === undefined ? mode(chain, options) : Effect.succeed(new Outcome.Error(chain, invalid))
}

/** What a {@link loop} body is held to (see ./internal/contract.ts). */
const bodyContract: Contract = { field: "Mode.loop body", rule: "must be a function (self: Effect<Outcome>) => Effect<Outcome>" }

/** Rounds of {@link loop} running inside one another on the JavaScript stack, all runs together. */
let nested = 0
const maxNested = 16

/**
 * Rounds of one {@link loop} between two in which it lets other fibers run.
 * Rounds whose model and tool calls complete at once (a scripted or
 * replayed model, synchronous tools) take no step of effect's runtime, so
 * the fiber would never reach its budget of operations and yield: timers,
 * I/O and other fibers would wait for the whole run.
 */
const roundsBeforeYield = 64

/** Whether the fiber running now asks not to yield (`Scheduler.PreventSchedulerYield`), which effect's runtime honours too. */
const yieldPrevented = (): boolean => {
  const fiber = Fiber.getCurrent()
  return fiber !== undefined && Context.get(fiber.context, Scheduler.PreventSchedulerYield)
}

/**
 * A loop: while the chain needs a response, `body` on it, and again
 * (`Step.continueOrDone`); a chain that needs none ends `Ok` (reason
 * `"done"`) with no model call. A mode is then its pipeline and nothing else.
 * Every model call of a run is bounded by the run's `maxRuns`, whatever the
 * pipeline (`Step.callLlm` honours the run's budget). A body made of steps
 * alone (`Step.make` and the built-in steps) is built once per run and run
 * for every round, so `body` should only put steps together: a step's own
 * work belongs in its function, which runs each round. Every 64 rounds the
 * loop lets other fibers run, also when its rounds complete at once (unless
 * `Scheduler.PreventSchedulerYield` is on).
 *
 * @example
 * ```ts
 * import { Mode, Step } from "loopwork"
 *
 * const audited: Mode.Mode<import("loopwork").ChatModel.ChatModel> = (chain, options) => {
 *   const s = Step.forRun(chain, options)
 *   return Mode.loop(chain, (self) => self.pipe(s.executeTools, s.checkMaxRuns, s.callLlm))
 * }
 * ```
 *
 * @category modes
 * @since 0.2.0
 */
export const loop = <R>(
  chain: Chain,
  body: (self: Effect.Effect<Outcome.Outcome>) => Effect.Effect<Outcome.Outcome, never, R>
): Effect.Effect<Outcome.Outcome, never, R> => loopRound(chain, { body, steps: stepsOf(body) })

/** {@link loop} of a body whose steps are known already. */
const loopRound = <R>(chain: Chain, { body, steps }: Round<R>): Effect.Effect<Outcome.Outcome, never, R> => {
  if (steps === undefined) {
    const again = Step.continueOrDone((c: Chain) => go(c))
    // A body that is not made of steps alone is held to its contract each round (from JavaScript it may break it).
    const go = (c: Chain): Effect.Effect<Outcome.Outcome, never, R> =>
      again(heldToContract<R>(c, bodyContract, () => body(Step.start(c))))
    return chain.needsResponse ? go(chain) : done(chain)
  }
  // The body built once for the run, and the loop's own end after it.
  const round: ReadonlyArray<Then> = [...steps, (outcome) =>
    outcome._tag !== "Continue" ? Effect.succeed(outcome) : outcome.chain.needsResponse ? next(outcome) : done(outcome.chain)]
  // The next round at once, unless rounds that completed at once are already nested deep on the stack
  // (then suspended, which unwinds it), or it is time to let other fibers run.
  let rounds = 0
  const next = (outcome: Outcome.Outcome): Effect.Effect<Outcome.Outcome, never, R> => {
    if (++rounds % roundsBeforeYield === 0 && !yieldPrevented()) return Effect.andThen(Effect.yieldNow, Effect.suspend(() => runSteps(round, outcome)))
    if (nested >= maxNested) return Effect.suspend(() => runSteps(round, outcome))
    nested++
    try {
      return runSteps(round, outcome)
    } finally {
      nested--
    }
  }
  // The first round suspended: it runs when the loop runs, in that fiber's context.
  return chain.needsResponse ? Effect.suspend(() => runSteps(round, new Outcome.Continue(chain))) : done(chain)
}

/**
 * Loops while the chain needs a response: runs pending tool calls, applies
 * the priority checks to that round (a stop, calls waiting for approval or an
 * external result, a direct return, the ReturnBehavior rule), calls the
 * model, checks `maxRuns`, and goes round again. Unless one of those checks
 * or a policy ends it, the loop ends when the model answers without tools. A chain that needs no response returns
 * `Ok` at once, with no model call; a chain paused with pending tool calls
 * resumes by running them.
 *
 * @example
 * ```ts
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 10 })
 * ```
 *
 * @category modes
 * @since 0.1.0
 */
export const whileNeedsResponse: Mode<ChatModel> = checked((chain, options) =>
  loopRound(chain, whileNeedsResponseRound(sharedSteps(chain, options)))
)

const whileNeedsResponseRound = roundFor((s: Step.RunSteps): Body<ChatModel> => (self) =>
  self.pipe(
    s.executeTools,
    s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior, // the round's priority checks
    s.checkMaxRuns,
    s.callLlm, s.checkNoTool
  )
)

/**
 * Loops until a tool round succeeds (no failed call) or the model answers
 * without tools. The model does not get a turn after a successful round.
 * Failed rounds are retried until `maxFailures`.
 *
 * @example
 * ```ts
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.untilSuccess, maxFailures: 2 })
 * ```
 *
 * @category modes
 * @since 0.1.0
 */
export const untilSuccess: Mode<ChatModel> = checked((chain, options) =>
  loopRound(chain, untilSuccessRound(sharedSteps(chain, options)))
)

const untilSuccessRound = roundFor((s: Step.RunSteps): Body<ChatModel> => (self) =>
  self.pipe(
    s.executeTools,
    s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior, Step.checkToolSuccess,
    s.checkMaxRuns,
    s.callLlm, s.checkNoTool
  )
)

/**
 * One step per run: if tool calls are pending, run them; otherwise call the
 * model once. Then `Ok` (reason `"step"`), so the caller can inspect or edit
 * the chain and run again. With `shouldContinue`, steps repeat while it
 * returns true for the updated chain (bounded by `maxRuns`).
 *
 * @example
 * ```ts
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * // stop before any call to a tool that moves money
 * const program = Chain.run(chain, {
 *   mode: Mode.step,
 *   shouldContinue: (c) => c.needsResponse && !c.pendingToolCalls.some((call) => call.name === "wire_transfer")
 * })
 * ```
 *
 * @category modes
 * @since 0.1.0
 */
export const step: Mode<ChatModel> = checked((chain, options) => {
  const s = sharedSteps(chain, options)
  const once = (c: Chain): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
    Step.start(c).pipe(
      s.executeTools, s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior,
      hasRound(c) ? skip : s.callLlm, hasRound(c) ? skip : s.checkNoTool, // one step: the tools, or else the model
      s.checkShouldContinue, s.checkMaxRuns, lift(once))
  return once(chain)
})

/** Whether the chain has a tool round to run or to finish (then a step of `step` is that round). */
const hasRound = (chain: Chain): boolean => chain.pendingToolCalls.length > 0 || chain.roundResults.length > 0

/** A step that does nothing. */
const skip: Step.Step = (self) => self

/**
 * Loops until the model successfully calls one of `names`; ends with `Ok`
 * (reason `"tool-used"`, `extra` = that call's `ToolResult`). The names are
 * checked against the chain's toolkit before any model call ("Tool name 'x'
 * not found in available tools"). A watched tool reached on the last allowed
 * run still succeeds; `maxRuns` model calls without it fail with
 * `MaxRunsExceeded` (or what `onMaxRuns` says). When the model answers in
 * plain text, the default no-tool policy reminds it of the tools it must
 * call ("You answered without calling a tool. To finish, call submit_answer.")
 * and loops, bounded by `maxRuns`; set `noTool: "done"` to end on a plain
 * answer instead (Elixir LangChain's behaviour).
 *
 * `names` from JSON or JavaScript that is not a name or an array of names
 * does not throw here: the mode ends with `InvalidInput` (field
 * `untilToolUsed names`) when it runs, before any model call.
 *
 * @example
 * ```ts
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.untilToolUsed("submit_answer"), maxRuns: 5 })
 * ```
 *
 * @category modes
 * @since 0.1.0
 */
export const untilToolUsed = (names: string | ReadonlyArray<string>): Mode<ChatModel> => {
  const [checkNames, round] = [checkToolsExist(names, "untilToolUsed names"), untilToolRound(Step.checkUntilTool(names))]
  const modeDefaults = { noTool: reminderOf(names) }
  return checked((chain, options) => {
    const s = sharedSteps(chain, options, modeDefaults)
    return Step.start(chain).pipe(checkNames, s.checkNoTool, lift((c) => loopRound(c, round(s))))
  })
}

/** The round of `untilToolUsed`, which `checkUntilTool` ends. */
const untilToolRound = (checkUntilTool: Step.Step) =>
  roundFor((s: Step.RunSteps): Body<ChatModel> => (self) =>
    self.pipe(
      s.executeTools,
      s.checkStop, Step.checkAwaiting, s.checkDirectReturn, s.checkReturnBehavior, checkUntilTool,
      s.checkMaxRuns, s.callLlm, s.checkNoTool
    )
  )

/** The no-tool reminder of `untilToolUsed(names)`; none for names that are not names (the mode then ends first). */
const reminderOf = (names: string | ReadonlyArray<string>): string | undefined =>
  typeof names === "string" ? NoToolPolicy.reminderFor([names])
  : checkToolNames(names, "names") === undefined ? NoToolPolicy.reminderFor(names) : undefined

/**
 * Modes: whole loops, each a pipeline of steps.
 *
 * A mode is `(chain, options) => Effect<Outcome>` ending in a terminal
 * outcome. The built-ins:
 *
 * | mode | loop | ends |
 * |---|---|---|
 * | `whileNeedsResponse` | run pending tools, call the model, repeat | the model answers without tools (the model has the last word), or a ReturnBehavior round |
 * | `untilSuccess` | call the model, run its tools, repeat | a tool round without failures, or a plain answer |
 * | `step` | one step: run pending tools *or* call the model | after one step, or when `shouldContinue(chain)` is false |
 * | `untilToolUsed(names)` | call the model, run its tools, repeat | a successful call to one of `names` (`extra` = its result) |
 *
 * Every looping mode is bounded by `maxRuns` (model calls, default 25) and
 * `maxFailures` (consecutive failed tool rounds, default 3). Write your own
 * mode the same way; see `examples/custom-mode.ts`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Chain } from "./Chain.ts"
import type { ChatModel, ToolChoice } from "./ChatModel.ts"
import { compile } from "./internal/toolExecutor.ts"
import { InvalidInput, ToolNamesNotFound } from "./LoopError.ts"
import * as Outcome from "./Outcome.ts"
import * as Step from "./Step.ts"

/**
 * Options every built-in mode reads. Custom modes may extend it with their
 * own fields.
 *
 * - `maxRuns`: model calls allowed (default 25).
 * - `maxFailures`: consecutive tool rounds with a failure allowed (default 3).
 * - `concurrency`: tool calls of one round run at once (default `"unbounded"`).
 * - `toolChoice`: passed to the model (default `"auto"`).
 * - `shouldContinue`: `step` mode only; keep stepping while it returns true.
 *
 * @example
 * ```ts
 * import { Mode } from "loopwork"
 *
 * const options: Mode.Options = { maxRuns: 10, concurrency: 4 }
 * ```
 *
 * @since 0.1.0
 */
export interface Options {
  readonly maxRuns?: number | undefined
  readonly maxFailures?: number | undefined
  readonly concurrency?: number | "unbounded" | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly shouldContinue?: ((chain: Chain) => boolean) | undefined
}

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
 * @since 0.1.0
 */
export type Mode<R = never, O extends Options = Options> = (
  chain: Chain,
  options: O
) => Effect.Effect<Outcome.Outcome, never, R>

const done = (chain: Chain): Effect.Effect<Outcome.Outcome> => Effect.succeed(new Outcome.Ok(chain, "done"))

/**
 * The option-bound built-in steps of one run, built once per run (not per
 * iteration). `maxRuns` counts from the chain's `runCount` at the start of
 * the run, so it is a budget per run.
 */
const stepsFor = (chain: Chain, options: Options) => ({
  executeTools: Step.executeToolsWith(options),
  callLlm: Step.callLlmWith(options),
  checkMaxRuns: Step.checkMaxRuns({ maxRuns: options.maxRuns, since: chain.runCount })
})

/**
 * Loops while the chain needs a response: runs pending tool calls, applies
 * the ReturnBehavior rule to that round, calls the model, checks `maxRuns`,
 * and goes round again. The model always has the last word, unless a
 * ReturnBehavior round ends the loop. A chain that needs no response returns
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
 * @since 0.1.0
 */
export const whileNeedsResponse: Mode<ChatModel> = (chain, options) => {
  if (!chain.needsResponse) return done(chain)
  const { callLlm, checkMaxRuns, executeTools } = stepsFor(chain, options)
  const next = Step.continueOrDone((c: Chain) => loop(c))
  const loop = (c: Chain): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
    Step.start(c).pipe(executeTools, Step.checkReturnBehavior, checkMaxRuns, callLlm, next)
  return loop(chain)
}

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
 * @since 0.1.0
 */
export const untilSuccess: Mode<ChatModel> = (chain, options) => {
  const { callLlm, checkMaxRuns, executeTools } = stepsFor(chain, options)
  const next = Step.continueOrDone((c: Chain) => loop(c))
  const loop = (c: Chain): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
    Step.start(c).pipe(executeTools, Step.checkToolSuccess, checkMaxRuns, callLlm, next)
  return loop(chain)
}

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
 * @since 0.1.0
 */
export const step: Mode<ChatModel> = (chain, options) => {
  const { callLlm, checkMaxRuns, executeTools } = stepsFor(chain, options)
  const shouldContinue = options.shouldContinue
  const decide = Step.make((c: Chain) =>
    shouldContinue !== undefined && shouldContinue(c)
      ? Step.start(c).pipe(checkMaxRuns, Step.make(once))
      : Effect.succeed(new Outcome.Ok(c, "step"))
  )
  const once = (c: Chain): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
    (c.pendingToolCalls.length > 0 ? Step.start(c).pipe(executeTools) : Step.start(c).pipe(callLlm)).pipe(decide)
  return once(chain)
}

/**
 * Loops until the model successfully calls one of `names`; ends with `Ok`
 * (reason `"tool-used"`, `extra` = that call's `ToolResult`). The names are
 * checked against the chain's toolkit before any model call ("Tool name 'x'
 * not found in available tools"). A watched tool reached on the last allowed
 * run still succeeds; `maxRuns` model calls without it fail with
 * `MaxRunsExceeded`. A plain answer without tool calls ends with `Ok` (reason
 * `"done"`, no `extra`).
 *
 * @example
 * ```ts
 * import { Chain, Mode } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.untilToolUsed("submit_answer"), maxRuns: 5 })
 * ```
 *
 * @since 0.1.0
 */
export const untilToolUsed = (names: string | ReadonlyArray<string>): Mode<ChatModel> => {
  const list = typeof names === "string" ? [names] : [...names]
  const checkUntilTool = Step.checkUntilTool(list)
  return (chain, options) => {
    if (list.length === 0) {
      return Effect.succeed(new Outcome.Error(
        chain,
        new InvalidInput({ field: "untilToolUsed names", rule: "must name at least one tool", value: list })
      ))
    }
    const compiled = compile(chain.toolkit)
    const missing = list.filter((name) => !compiled.byName.has(name))
    if (missing.length > 0) {
      return Effect.succeed(new Outcome.Error(
        chain,
        new ToolNamesNotFound({ names: missing, available: [...compiled.byName.keys()] })
      ))
    }
    const { callLlm, checkMaxRuns, executeTools } = stepsFor(chain, options)
    const next = Step.continueOrDone((c: Chain) => loop(c))
    const loop = (c: Chain): Effect.Effect<Outcome.Outcome, never, ChatModel> =>
      Step.start(c).pipe(callLlm, executeTools, checkUntilTool, checkMaxRuns, next)
    // Resume: run tool calls left pending by an earlier run before the first model call.
    return Step.start(chain).pipe(executeTools, checkUntilTool, next)
  }
}

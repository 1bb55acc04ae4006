/**
 * The step contract: a step is `Effect<Outcome>` in, `Effect<Outcome>` out; `make` lifts a function of the chain into one, `start` begins a pipeline, `continueOrDone` ends a loop body.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Chain } from "./chain.ts"
import { type Options, validateOptions } from "./options.ts"
import { checkFunction, checkObject } from "./checks.ts"
import { InvalidInput } from "../LoopError.ts"
import * as Outcome from "../Outcome.ts"

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
 * @category models
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
 * @category steps
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
 * @category steps
 * @since 0.1.0
 */
export const make = <R = never>(f: (chain: Chain) => Effect.Effect<Outcome.Outcome, never, R>): Step<R> => {
  const invalid = checkFunction(f, "Step.make argument", "must be a function (chain) => Effect<Outcome>")
  if (invalid !== undefined) return refused(invalid)
  return (self) => Effect.flatMap(self, (outcome) => outcome._tag === "Continue" ? f(outcome.chain) : Effect.succeed(outcome))
}

/** @internal A step that ends the loop with `problem` on the first `Continue` (a factory given bad input). */
export function refused(problem: InvalidInput): Step {
  return (self) =>
    Effect.map(self, (outcome) => outcome._tag === "Continue" ? new Outcome.Error(outcome.chain, problem) : outcome)
}

/** @internal The first problem of a factory's options: not an object, or a field that breaks its rule. */
export const optionsProblem = (options: unknown, field: string, optional = false): InvalidInput | undefined =>
  checkObject(options, field, optional) ?? (options === undefined ? undefined : validateOptions(options as Options))

/** @internal */
export const continued = (chain: Chain): Effect.Effect<Outcome.Outcome> => Effect.succeed(new Outcome.Continue(chain))

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
 * @category steps
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

/**
 * The step contract: a step is `Effect<Outcome>` in, `Effect<Outcome>` out; `make` lifts a function of the chain into one, `start` begins a pipeline, `continueOrDone` ends a loop body.
 *
 * @internal
 */
import { Effect } from "effect"
import { isComplete } from "./complete.ts"
import type { Chain } from "./chain.ts"
import { type Options, validateOptions } from "./options.ts"
import { checkFunction, checkObject } from "./checks.ts"
import { type Contract, heldToContract } from "./contract.ts"
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
 * terminal outcomes pass it by. A function that throws, returns no Effect
 * or succeeds with something that is not an Outcome (possible from
 * JavaScript) ends the loop with `Error` and an `InvalidInput` saying what
 * it did, keeping the chain.
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
  return lift((chain) => heldToContract<R>(chain, stepContract, () => f(chain)))
}

const stepContract: Contract = { field: "Step.make argument", rule: "must be a function (chain) => Effect<Outcome>" }

/**
 * @internal {@link make} for the library's own steps, whose functions keep
 * the contract: nothing is checked
 */
export const lift = <R = never>(f: (chain: Chain) => Effect.Effect<Outcome.Outcome, never, R>): Step<R> => {
  const then = (outcome: Outcome.Outcome) => outcome._tag === "Continue" ? f(outcome.chain) : Effect.succeed(outcome)
  return (self) => joined(self, then)
}

/** @internal What a step does with the outcome before it. */
export type Then = (outcome: Outcome.Outcome) => Effect.Effect<Outcome.Outcome, never, any>

/** The effect `make` returned last: its source, and the steps made on it since. */
let last: {
  readonly effect: Effect.Effect<Outcome.Outcome, never, any>
  readonly source: Effect.Effect<Outcome.Outcome, never, any>
  readonly steps: ReadonlyArray<Then>
} | undefined

/** The most steps joined into one continuation. */
const maxJoined = 32

/**
 * `Effect.flatMap(self, then)`. When `self` is what the previous step made
 * (a pipeline being built), `then` joins that step's continuation instead:
 * `flatMap(flatMap(source, a), b)` is `flatMap(source, (x) => flatMap(a(x), b))`,
 * and `b` runs at once when `a`'s result is already complete, so a check
 * that passes the chain on costs a function call, not a step of the
 * runtime. Steps still run one after the other, when the pipeline runs.
 */
const joined = <R0, R>(self: Effect.Effect<Outcome.Outcome, never, R0>, then: Then): Effect.Effect<Outcome.Outcome, never, R0 | R> => {
  const prior = last !== undefined && last.effect === self && last.steps.length < maxJoined ? last : undefined
  const source = prior === undefined ? self : prior.source
  const steps = prior === undefined ? [then] : [...prior.steps, then]
  const effect = Effect.flatMap(source, (outcome) => runFrom(steps, 0, outcome))
  last = { effect, source, steps }
  return effect
}

/**
 * `steps[from]` on `outcome`, then each later step on the outcome of the one
 * before: at once while results are complete (Exits), with the rest as one
 * continuation of the first result that is still to come.
 */
const runFrom = (steps: ReadonlyArray<Then>, from: number, outcome: Outcome.Outcome): Effect.Effect<Outcome.Outcome, never, any> => {
  let result = steps[from](outcome)
  for (let i = from + 1; i < steps.length; i++) {
    if (!isComplete(result)) return Effect.flatMap(result, (next) => runFrom(steps, i, next))
    if (result._tag === "Failure") return result
    result = steps[i](result.value)
  }
  return result
}

/**
 * The steps `body` adds to the effect it is given, when it adds nothing but
 * steps made with {@link make} (otherwise `undefined`): a loop can then
 * build its body once and run it for every round with {@link runSteps}.
 *
 * @internal
 */
export const stepsOf = <R>(
  body: (self: Effect.Effect<Outcome.Outcome>) => Effect.Effect<Outcome.Outcome, never, R>
): ReadonlyArray<Then> | undefined => {
  const probe: Effect.Effect<Outcome.Outcome> = Effect.suspend(() => Effect.die(new Error("a probe, never run")))
  const built = body(probe)
  return last !== undefined && last.effect === built && last.source === probe ? last.steps : undefined
}

/** @internal A loop's body: what it adds to the effect of the round before. */
export type Body<R> = (self: Effect.Effect<Outcome.Outcome>) => Effect.Effect<Outcome.Outcome, never, R>

/** @internal A loop's body, and its steps when it is made of steps alone ({@link stepsOf}). */
export interface Round<R> {
  readonly body: Body<R>
  readonly steps: ReadonlyArray<Then> | undefined
}

/**
 * The round `bodyOf` makes of a run's steps, made once for each steps
 * object: `Step.forRun` hands runs with the same options the same one, so a
 * mode made this way builds its round once, not once per run.
 *
 * @internal
 */
export const roundFor = <S, R>(bodyOf: (steps: S) => Body<R>): (steps: S) => Round<R> => {
  let made: { readonly of: S; readonly round: Round<R> } | undefined
  return (of) => {
    if (made === undefined || made.of !== of) {
      const body = bodyOf(of)
      made = { of, round: { body, steps: stepsOf(body) } }
    }
    return made.round
  }
}

/** @internal `steps` run on `outcome`, one after the other (see {@link stepsOf}). */
export const runSteps = (steps: ReadonlyArray<Then>, outcome: Outcome.Outcome): Effect.Effect<Outcome.Outcome, never, any> =>
  runFrom(steps, 0, outcome)

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
  return lift((chain) =>
    chain.needsResponse ? loop(chain, options as O) : Effect.succeed(new Outcome.Ok(chain, "done"))
  )
}

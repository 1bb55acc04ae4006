/**
 * Running a chain in a mode: `run` (ends in `Ok` or `Pause`, or fails with a
 * `RunError` carrying the chain) and `stream` (the same run as a `Stream` of
 * its events).
 *
 * @internal
 */
import { Context, Effect, Stream } from "effect"
import type * as Tool from "effect/ai/Tool"
import type { ChatModel } from "../ChatModel.ts"
import * as Step from "../Step.ts"
import { limitsOf } from "./steps/callLlm.ts"
import { budgetStart, clearBudget, keepBudget } from "./budget.ts"
import { CurrentRunBudget, type RunBudget } from "./runBudget.ts"
import { enterRun, entryContextOf } from "./runContext.ts"
import { CurrentCall, Slot } from "./directReturn.ts"
import { runServices } from "./tools/handlerContext.ts"
import { compile } from "./tools/compile.ts"
import { eventStream } from "./eventStream.ts"
import { StreamObserver } from "./streamObserver.ts"
import { defaults, validateOptions, whileChecked } from "./options.ts"
import { checkFunction, checkObject, isPositiveInt, readably, validateToolkit } from "./checks.ts"
import { withRunSpanIn } from "./tracing.ts"
import { agentSpan } from "./telemetry/agentSpan.ts"
import { InvalidInput, MaxRunsExceeded, ModeDidNotFinish, reasonOf, RunError } from "../LoopError.ts"
import type { External } from "../ExternalTool.ts"
import type { Mode, Options } from "../Mode.ts"
import * as Outcome from "../Outcome.ts"
import { emitTo, isActive, Observer, type RunEvent } from "../RunEvent.ts"
import { bareChain, type Chain, isChain, text } from "./chain.ts"
import { chainProblem, isRecord } from "./chainInput.ts"
import { type Contract, heldToContract } from "./contract.ts"
import { encode } from "./chainCodec.ts"
import { structuredRun } from "./structured/run.ts"
import { type OutputJson, outputJson } from "./structured/outputJson.ts"
import type * as StructuredOutput from "../StructuredOutput.ts"


/**
 * Options of {@link run}: the mode plus the options it reads.
 *
 * @example
 * ```ts
 * import { Chain, type ChatModel, Mode } from "loopwork"
 *
 * const options: Chain.RunOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse, maxRuns: 10 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type RunOptions<R = never, O extends Options = Options> = O & {
  readonly mode: Mode<R, O>
  /**
   * End the run in a typed value: the `Ok` outcome's `output`, decoded by
   * this Schema (`StructuredOutput`).
   */
  readonly output?: StructuredOutput.Spec | undefined
}

/**
 * The handler services the tools of a chain need: one per tool, except
 * external tools (`ExternalTool.mark`), which the caller executes.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * type None = Chain.HandlersOf<{}> // never
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersOf<Tools extends Record<string, Tool.Any>> = Tool.HandlersFor<
  { readonly [Name in keyof Tools as Tools[Name] extends External ? never : Name]: Tools[Name] }
>

/**
 * Runs a chain in a mode. Succeeds with `Ok` (finished) or `Pause` (a clean
 * checkpoint); fails with a `RunError` that carries the error and the chain as
 * it stood. The chain and the options are checked before any model call:
 * bad input (a chain made from bad options, a chain or options that are not
 * one, a mode that is not a function, an option that breaks its rule) fails
 * with a `RunError` whose reason is an `InvalidInput` naming the field (when
 * `chain` is not a chain, the error carries an empty chain). The check is
 * cheap: a look at each message's kind, not its content (`make` and `decode`
 * check that).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello!" }])
 * const program = Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.map((outcome) => Chain.text(outcome.chain)),
 *   Effect.provide(model.layer)
 * )
 * // Effect.runPromise(program) resolves to "Hello!"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const run: {
  <Tools extends Record<string, Tool.Any>, S extends StructuredOutput.Spec, R = ChatModel, O extends Options = Options>(
    chain: Chain<Tools>,
    options: RunOptions<R, O> & { readonly output: S }
  ): Effect.Effect<StructuredOutput.Final<StructuredOutput.ValueOf<S>, Tools>, RunError, R | ChatModel | HandlersOf<Tools>>
  <Tools extends Record<string, Tool.Any>, R = ChatModel, O extends Options = Options>(
    chain: Chain<Tools>,
    options: RunOptions<R, O>
  ): Effect.Effect<Outcome.Final<Tools>, RunError, R | HandlersOf<Tools>>
} = <Tools extends Record<string, Tool.Any>, R, O extends Options>(
  chain: Chain<Tools>,
  options: RunOptions<R, O>
): Effect.Effect<Outcome.Final<Tools>, RunError, R | HandlersOf<Tools>> =>
  // contextWith: one step of the runtime, where flatMap of Effect.context() takes three.
  Effect.contextWith((context: Context.Context<never>) => {
    const entry = entryContextOf(context)
    const observer = entry.observer
    const erased: Chain = isChain(chain) ? chain : noChain
    const core = runCore(chain, erased, options)
    const traced = withRunSpanIn(
      context,
      entry.traced,
      isActive(observer) ? (run) => reported(erased, run, observer, outputEncoder(options)) : undefined,
      core,
      () => agentSpan(context, erased.runCount)
    )
    // The outcome's chain continues the chain that ran (same toolkit), so it keeps its tool types.
    return traced as Effect.Effect<Outcome.Final<Tools>, RunError>
  })

/** What a `RunError` carries when `run` was not given a chain. */
const noChain: Chain = bareChain([])

const modeRule = "must be a Mode: a function (chain, options) => Effect<Outcome>, e.g. Mode.whileNeedsResponse"

/** The first problem of `run`'s input, in the order a reader fixes them: the chain, then the options. */
const runProblem = (input: unknown, chain: Chain, options: unknown): InvalidInput | undefined =>
  chainProblem(input, true) ??
    readably("options", () =>
      checkObject(options, "options") ??
        checkFunction((options as RunOptions<unknown>).mode, "mode", modeRule) ??
        validateOptions(options as Options)
    ) ??
    validateToolkit(chain.toolkit) ??
    (chain.messages.length === 0
      ? new InvalidInput({ field: "chain.messages", rule: "a chain needs at least one message to run", value: [] })
      : undefined)

const runCore = <R, O extends Options>(
  input: unknown,
  erased: Chain,
  options: RunOptions<R, O>
): Effect.Effect<Outcome.Final, RunError, R> => {
  let budget: Budget | undefined
  const invalid = runProblem(input, erased, options) ??
    // Read after the check: from JavaScript, reading an option again may throw.
    readably("options", () => {
      budget = budgetOf(options)
      return undefined
    })
  if (invalid !== undefined) return Effect.fail(new RunError({ reason: invalid, chain: erased }))
  const limits = budget as Budget // read: readably ran the read to its end
  const output = (options as { readonly output?: unknown }).output
  return output === undefined
    ? runMode(erased, options, limits)
    : structuredRun(erased, output, (chain) => runMode(chain, options, limits), limitsOf(options)) as Effect.Effect<Outcome.Final, RunError, R>
}

/** What a mode is held to (see ./contract.ts). */
const modeContract: Contract = { field: "mode", rule: modeRule }

/** `mode`'s outcome for `chain`, held to its contract: a mode that breaks it ends the run with `InvalidInput`. */
const modeOutcome = <R, O extends Options>(mode: Mode<R, O>, chain: Chain, options: O): Effect.Effect<Outcome.Outcome, never, R> =>
  heldToContract(chain, modeContract, () => mode(chain, options))

/** The mode's run on a checked chain, its outcome as `run` gives it. */
const runMode = <R, O extends Options>(erased: Chain, options: RunOptions<R, O>, limits: Budget): Effect.Effect<Outcome.Final, RunError, R> => {
  const since = budgetStart(erased)
  const body = whileChecked(options, () => modeOutcome(options.mode, erased, options))
  // One switch of context for the run: its budget, its direct-return slot and its handlers' services
  // (./directReturn.ts, runServices), so that a tool call needs no switch of its own.
  const budget = runBudget(limits, since)
  const mode = Effect.updateContext(body, (context: Context.Context<R>) => {
    let next = context
    for (const [key, service] of runServices(context as Context.Context<never>, compile(erased.toolkit))) next = Context.add(next, key, service)
    next = Context.add(Context.add(next, CurrentRunBudget, budget), CurrentCall, new Slot())
    enterRun(next as Context.Context<never>, entryContextOf(context as Context.Context<never>), budget)
    return next
  })
  return Effect.flatMap(mode, (outcome): Effect.Effect<Outcome.Final, RunError> => {
    switch (outcome._tag) {
      case "Ok": {
        const chain = clearBudget(outcome.chain)
        return Effect.succeed(chain === outcome.chain ? outcome : new Outcome.Ok(chain, outcome.reason, outcome.extra) as Outcome.AnyOk)
      }
      case "Pause": {
        const chain = keepBudget(outcome.chain, since)
        return Effect.succeed(chain === outcome.chain ? outcome : new Outcome.Pause(chain, outcome.reason))
      }
      case "Error":
        return Effect.fail(new RunError({ reason: reasonOf(outcome.error), chain: clearBudget(outcome.chain) }))
      case "Continue":
        return Effect.fail(new RunError({ reason: new ModeDidNotFinish({}), chain: clearBudget(outcome.chain) }))
    }
  })
}

/** The options the run's budget reads, read once. */
interface Budget {
  readonly maxRuns: number
  readonly onMaxRuns: Options["onMaxRuns"]
  readonly retry: Options["retry"]
  readonly stop: Options["stop"]
}

const budgetOf = (options: Options): Budget => ({
  maxRuns: options.maxRuns ?? defaults.maxRuns,
  onMaxRuns: options.onMaxRuns,
  retry: options.retry,
  stop: options.stop
})

/**
 * The run's `maxRuns` budget, which every `Step.callLlm` of the run honours
 * (whatever the mode's pipeline): at the limit, the run's `onMaxRuns` policy.
 */
const runBudget = ({ maxRuns, onMaxRuns, retry, stop }: Budget, since: number): RunBudget => ({
  since,
  maxRuns,
  atLimit: (chain) =>
    Effect.map(
      Step.checkMaxRuns({ maxRuns, since, onMaxRuns, retry, stop })(Step.start(chain)),
      // The policy applies to a chain that needs a response; any other still gets no model call.
      (outcome) =>
        outcome._tag === "Continue"
          ? new Outcome.Error(outcome.chain, new MaxRunsExceeded({ runs: chain.runCount - since, maxRuns }))
          : outcome
    )
})

/** The chain's JSON document for an event; `null` if it cannot be encoded (the event still goes out). */
const documentOf = (chain: Chain): Effect.Effect<unknown> => Effect.orElseSucceed(encode(chain), () => null)

/** How `RunFinished` shows the output of a run with the `output` option (none without it). */
const outputEncoder = (options: unknown): OutputJson | undefined =>
  // Options from JavaScript may be anything: runCore reports them; here they only may hold an output.
  outputJson(isRecord(options) ? options.output : undefined)

/** The `RunFinished` event of `outcome`, with the encoded output when there is one. */
const finished = (outcome: Outcome.AnyOk, document: unknown, encoder: OutputJson | undefined): Effect.Effect<RunEvent> => {
  const event = { _tag: "RunFinished", reason: outcome.reason, text: text(outcome.chain), chain: document } as const
  if (encoder === undefined || outcome.output === undefined) return Effect.succeed(event)
  return Effect.map(encoder(outcome.output), (output) => output === undefined ? event : { ...event, output })
}

/** A run reported to `observer`: started, then paused, finished or failed (with the chain). */
const reported = <R>(
  chain: Chain,
  core: Effect.Effect<Outcome.Final, RunError, R>,
  observer: Observer,
  encoder: OutputJson | undefined
): Effect.Effect<Outcome.Final, RunError, R> =>
  emitTo(observer, { _tag: "RunStarted", messages: chain.messages.length, runCount: chain.runCount }).pipe(
    Effect.andThen(core),
    Effect.tap((outcome) =>
      Effect.flatMap(documentOf(outcome.chain), (document) =>
        outcome._tag === "Pause"
          ? emitTo(observer, { _tag: "RunPaused", reason: outcome.reason, chain: document })
          : Effect.flatMap(finished(outcome, document, encoder), (event) => emitTo(observer, event)))
    ),
    Effect.tapError((error) =>
      Effect.flatMap(documentOf(error.chain), (document) =>
        emitTo(observer, { _tag: "RunFailed", error: error.reason._tag, message: error.message, chain: document }))
    )
  )

/**
 * Options of {@link stream}: those of {@link run}, and the size of the event
 * buffer (default 256; when the consumer falls this far behind, the run waits
 * for it).
 *
 * @example
 * ```ts
 * import { Chain, type ChatModel, Mode } from "loopwork"
 *
 * const options: Chain.StreamOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse, bufferSize: 64 }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type StreamOptions<R = never, O extends Options = Options> = RunOptions<R, O> & {
  readonly bufferSize?: number | undefined
}

/**
 * Runs a chain as {@link run} does, as a `Stream` of its events
 * (`RunEvent`): the run started, each model call (with its text deltas, as
 * the model streams them), each tool call, and the end — `RunFinished` or
 * `RunPaused` with the chain's JSON document, or `RunFailed`, after which the
 * stream fails with the same `RunError` `run` fails with. Model calls use
 * `ChatModel.stream`; the streamed response is assembled into the same chain
 * `run` produces. Interrupting the stream interrupts the run. Bad input is
 * refused as by `run` (after `RunStarted` and `RunFailed`), before any model
 * call; a bad `bufferSize` fails the stream at once.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Chain, ChatModel, Mode } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello there!" }])
 * const printed = Chain.stream(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Stream.runForEach((event) => event._tag === "TextDelta" ? Effect.sync(() => process.stdout.write(event.delta)) : Effect.void),
 *   Effect.provide(model.layer)
 * )
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const stream = <Tools extends Record<string, Tool.Any>, R = ChatModel, O extends Options = Options>(
  chain: Chain<Tools>,
  options: StreamOptions<R, O>
): Stream.Stream<RunEvent, RunError, R | HandlersOf<Tools>> => {
  let bufferSize: unknown
  const unreadable = readably("options", () => {
    bufferSize = (isRecord(options) ? options.bufferSize : undefined) ?? 256
    return undefined
  })
  if (unreadable !== undefined) return Stream.fail(new RunError({ reason: unreadable, chain: isChain(chain) ? chain : noChain }))
  if (!isPositiveInt(bufferSize)) {
    return Stream.fail(
      new RunError({
        reason: new InvalidInput({ field: "bufferSize", rule: "must be a whole number of events, at least 1", value: bufferSize }),
        chain: isChain(chain) ? chain : noChain
      })
    )
  }
  return eventStream(bufferSize, (offer) => Effect.provideService(run(chain, options), Observer, new StreamObserver(offer)))
}

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
export { continueOrDone, make, start, type Step } from "./internal/step.ts"
export { callLlm, callLlmWith, type CallOptions } from "./internal/steps/callLlm.ts"
export { executeTools, executeToolsWith, type ToolOptions } from "./internal/steps/executeTools.ts"
export { checkMaxRuns, type MaxRunsOptions } from "./internal/steps/maxRuns.ts"
export { checkDirectReturn, checkReturnBehavior, checkReturnBehaviorWith, type ReturnOptions } from "./internal/steps/returns.ts"
export { checkAwaiting, checkPause, checkStop } from "./internal/steps/pauses.ts"
export { checkNoTool } from "./internal/steps/noTool.ts"
export { checkToolSuccess, checkUntilTool } from "./internal/steps/toolChecks.ts"
export { forRun, type RunSteps } from "./internal/steps/forRun.ts"

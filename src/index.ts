/**
 * loopwork: composable agent loops for Effect.
 *
 * @since 0.1.0
 */

/** Tool approval: pending calls and decisions by call id. @since 0.1.0 */
export * as Approval from "./Approval.ts"
/** Immutable loop state, its JSON codec, and `run`. @since 0.1.0 */
export * as Chain from "./Chain.ts"
/** The model port and the effect/ai adapter (the scripted model: `loopwork/testing`). @since 0.1.0 */
export * as ChatModel from "./ChatModel.ts"
/** A tool handler's run-time signal that its result is the final answer. @since 0.1.0 */
export * as DirectReturn from "./DirectReturn.ts"
/** Tools the caller executes: marking them and supplying their results. @since 0.1.0 */
export * as ExternalTool from "./ExternalTool.ts"
/** The typed failures a loop can end with. @since 0.1.0 */
export * as LoopError from "./LoopError.ts"
/** What happens when maxRuns is reached. @since 0.1.0 */
export * as MaxRunsPolicy from "./MaxRunsPolicy.ts"
/** Retrying failed model calls with backoff, honouring retry-after. @since 0.1.0 */
export * as ModelRetry from "./ModelRetry.ts"
/** Whole loops: the built-in modes and the mode contract. @since 0.1.0 */
export * as Mode from "./Mode.ts"
/** What a model answer without tool calls means. @since 0.1.0 */
export * as NoToolPolicy from "./NoToolPolicy.ts"
/** Continue | Ok | Pause | Error. @since 0.1.0 */
export * as Outcome from "./Outcome.ts"
/** Keeping credentials and personal data out of what the library writes. @since 0.1.0 */
export * as Privacy from "./Privacy.ts"
/** What happens during a run, as Schema data: model calls, text deltas, tool calls, the end. @since 0.1.0 */
export * as RunEvent from "./RunEvent.ts"
/** TO_LLM / IMMEDIATE / IMMEDIATE_IF_LAST as a tool annotation. @since 0.1.0 */
export * as ReturnBehavior from "./ReturnBehavior.ts"
/** The step contract, combinators and built-in steps. @since 0.1.0 */
export * as Step from "./Step.ts"
/** The caller's signal to pause a running chain at a clean point. @since 0.1.0 */
export * as StopSignal from "./StopSignal.ts"
/** A run that ends in a typed value: the `output` option, its strategies and OpenAI's strict JSON Schema form. @since 0.3.0 */
export * as StructuredOutput from "./StructuredOutput.ts"
/** What the loop tells tracing and metrics backends: message capture, agent names, metrics. @since 0.3.0 */
export * as Telemetry from "./Telemetry.ts"
/** Tool calls and tool results as data. @since 0.1.0 */
export * as ToolCall from "./ToolCall.ts"
/** Policies for failed tool calls: feed back, fail, or repair. @since 0.1.0 */
export * as ToolFailurePolicy from "./ToolFailurePolicy.ts"
/** A tool's timeout, as an annotation. @since 0.1.0 */
export * as ToolTimeout from "./ToolTimeout.ts"

/**
 * loopwork: composable agent loops for Effect.
 *
 * @since 0.1.0
 */

/** Immutable loop state, its JSON codec, and `run`. @since 0.1.0 */
export * as Chain from "./Chain.ts"
/** The model port, the effect/ai adapter and the scripted model. @since 0.1.0 */
export * as ChatModel from "./ChatModel.ts"
/** The typed failures a loop can end with. @since 0.1.0 */
export * as LoopError from "./LoopError.ts"
/** Whole loops: the built-in modes and the mode contract. @since 0.1.0 */
export * as Mode from "./Mode.ts"
/** Continue | Ok | Pause | Error. @since 0.1.0 */
export * as Outcome from "./Outcome.ts"
/** TO_LLM / IMMEDIATE / IMMEDIATE_IF_LAST as a tool annotation. @since 0.1.0 */
export * as ReturnBehavior from "./ReturnBehavior.ts"
/** The step contract, combinators and built-in steps. @since 0.1.0 */
export * as Step from "./Step.ts"
/** Tool calls and tool results as data. @since 0.1.0 */
export * as ToolCall from "./ToolCall.ts"

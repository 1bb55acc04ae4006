/**
 * loopwork/ai-sdk: real models through the Vercel AI SDK's provider
 * specification. Loading this entry point loads nothing of the AI SDK;
 * `@ai-sdk/provider` is an optional peer used for types only.
 *
 * @since 0.1.0
 */

/** The AI SDK bridge: mapping, errors, `make` and `fromAiSdk`. @since 0.1.0 */
export * as AiSdkModel from "./AiSdkModel.ts"
/** `ChatModel` with `fromAiSdk`. @since 0.1.0 */
export * as ChatModel from "./ChatModel.ts"

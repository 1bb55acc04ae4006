/**
 * `loopwork`'s `ChatModel` module with `fromAiSdk`, the layer for AI SDK
 * providers, added: `import { ChatModel } from "loopwork/ai-sdk"` gives both.
 *
 * @since 0.1.0
 */
export * from "../ChatModel.ts"
export { fromAiSdk } from "./AiSdkModel.ts"

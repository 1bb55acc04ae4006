/**
 * The request side of the AI SDK bridge: an `effect/ai` prompt, tool list and
 * tool choice mapped to the provider's call options (specification v4).
 * `AiSdkModel` re-exports `toProviderPrompt` and `toProviderTools`.
 *
 * @internal
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput
} from "@ai-sdk/provider"
import type { JsonSchema } from "effect"
import * as Tool from "effect/ai/Tool"
import type * as Prompt from "effect/ai/Prompt"
import { NotStrict, strictJsonSchema } from "../../internal/structured/strict.ts"
import type { GenerateRequest, ResponseFormat } from "../../ChatModel.ts"

/** @internal the call options a caller may set (`AiSdkModel.Options["callOptions"]`): all but those the bridge sets */
export type CallSettings = Omit<LanguageModelV4CallOptions, "prompt" | "tools" | "toolChoice" | "abortSignal">

const toolOutput = (isFailure: boolean, result: unknown): LanguageModelV4ToolResultOutput =>
  typeof result === "string"
    ? { type: isFailure ? "error-text" : "text", value: result }
    : { type: isFailure ? "error-json" : "json", value: toJson(result) }

/** The JSON value of `u` (tool results are stored encoded, so this is a copy only for odd values). */
const toJson = (u: unknown): NonNullable<LanguageModelV4ToolResultOutput & { type: "json" }>["value"] =>
  u === undefined ? null : JSON.parse(JSON.stringify(u))

const fileData = (data: string | Uint8Array | URL) =>
  data instanceof URL ? { type: "url" as const, url: data } : { type: "data" as const, data }

const userMessage = (message: Prompt.UserMessage): LanguageModelV4Message => ({
  role: "user",
  content: typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content.map((part) =>
      part.type === "text"
        ? { type: "text" as const, text: part.text }
        : {
          type: "file" as const,
          mediaType: part.mediaType,
          data: fileData(part.data),
          ...(part.fileName === undefined ? {} : { filename: part.fileName })
        }
    )
})

const assistantMessage = (message: Prompt.AssistantMessage): LanguageModelV4Message => {
  if (typeof message.content === "string") return { role: "assistant", content: [{ type: "text", text: message.content }] }
  const content: Array<Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number]> = []
  for (const part of message.content) {
    switch (part.type) {
      case "text":
        content.push({ type: "text", text: part.text })
        break
      case "reasoning":
        content.push({ type: "reasoning", text: part.text })
        break
      case "tool-call":
        if (!part.providerExecuted) {
          content.push({ type: "tool-call", toolCallId: part.id, toolName: part.name, input: part.params })
        }
        break
      case "file":
        content.push({ type: "file", mediaType: part.mediaType, data: fileData(part.data) })
        break
      default:
        break // provider-executed results and approval requests stay with their provider
    }
  }
  return { role: "assistant", content }
}

/**
 * The provider's tool message: tool results only, or `undefined` when none is
 * left. effect/ai's `tool-approval-response` parts are dropped: a provider
 * reads them as a human's decision (`@ai-sdk/openai` sends
 * `mcp_approval_response`, approving a hosted MCP call), and a transcript —
 * which may come from a client or a stored document — never grants one.
 */
const toolMessage = (message: Prompt.ToolMessage): LanguageModelV4Message | undefined => {
  const content: Array<Extract<LanguageModelV4Message, { role: "tool" }>["content"][number]> = []
  for (const part of message.content) {
    if (part.type !== "tool-result") continue
    content.push({
      type: "tool-result",
      toolCallId: part.id,
      toolName: part.name,
      output: toolOutput(part.isFailure, part.result)
    })
  }
  return content.length === 0 ? undefined : { role: "tool", content }
}

/**
 * @internal the provider message of one `effect/ai` message, or `undefined`
 * when nothing of it goes to the provider (a tool message with no results left)
 */
export const toProviderMessage = (message: Prompt.Message): LanguageModelV4Message | undefined => {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content }
    case "user":
      return userMessage(message)
    case "assistant":
      return assistantMessage(message)
    case "tool":
      return toolMessage(message)
  }
}

/**
 * @internal the provider prompt of an `effect/ai` prompt; provider-executed
 * tool calls and results, approval parts and emptied tool messages left out
 * (public, documented, as `AiSdkModel.toProviderPrompt`)
 */
export const toProviderPrompt = (prompt: Prompt.Prompt): LanguageModelV4Prompt => {
  const messages: Array<LanguageModelV4Message> = []
  for (const message of prompt.content) {
    const converted = toProviderMessage(message)
    if (converted !== undefined) messages.push(converted)
  }
  return messages
}

const toolDefinitions = new WeakMap<ReadonlyArray<Tool.Any>, ReadonlyArray<LanguageModelV4FunctionTool>>()
const strictDefinitions = new WeakMap<ReadonlyArray<Tool.Any>, ReadonlyArray<LanguageModelV4FunctionTool>>()

/** @internal a tool whose parameters have no strict form, asked for with `strictTools` */
export class NotStrictTool extends Error {
  readonly tool: string
  readonly reason: string
  constructor(tool: string, reason: string) {
    super(`tool '${tool}' has no strict form: ${reason}`)
    this.name = "NotStrictTool"
    this.tool = tool
    this.reason = reason
  }
}

const definitionOf = (tool: Tool.Any, strict: boolean): LanguageModelV4FunctionTool => {
  let inputSchema = Tool.getJsonSchema(tool) as LanguageModelV4FunctionTool["inputSchema"]
  if (strict) {
    const form = strictJsonSchema(inputSchema as JsonSchema.JsonSchema)
    if (form instanceof NotStrict) throw new NotStrictTool(tool.name, form.reason)
    inputSchema = form as LanguageModelV4FunctionTool["inputSchema"]
  }
  return {
    type: "function",
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema,
    ...(strict ? { strict: true } : {})
  }
}

/**
 * @internal the provider's function tools for `tools`, computed once per tool
 * list (public, documented, as `AiSdkModel.toProviderTools`); with `strict`,
 * in OpenAI's strict form and marked `strict: true`, or a `NotStrictTool`
 * thrown for a tool that has no such form
 */
export const toProviderTools = (tools: ReadonlyArray<Tool.Any>, strict = false): ReadonlyArray<LanguageModelV4FunctionTool> => {
  const cache = strict ? strictDefinitions : toolDefinitions
  let defined = cache.get(tools)
  if (defined === undefined) {
    defined = tools.filter((tool) => !Tool.isProviderDefined(tool)).map((tool) => definitionOf(tool, strict))
    cache.set(tools, defined)
  }
  return defined
}

/**
 * @internal the provider call of `request`: its prompt (through `convert`),
 * its tools (only those a `oneOf` choice allows; in strict form with
 * `strictTools`) with the tool choice, on top of `settings`
 */
export const callOptions = (
  request: GenerateRequest,
  settings: CallSettings | undefined,
  convert: (prompt: Prompt.Prompt) => LanguageModelV4Prompt = toProviderPrompt,
  strictTools = false
): LanguageModelV4CallOptions => {
  const prompt = convert(request.prompt)
  let tools = toProviderTools(request.tools, strictTools)
  const choice = request.toolChoice
  let toolChoice: LanguageModelV4ToolChoice
  if (typeof choice === "string") {
    toolChoice = { type: choice }
  } else if ("tool" in choice) {
    toolChoice = { type: "tool", toolName: choice.tool }
  } else {
    const allowed = new Set<string>(choice.oneOf)
    tools = tools.filter((tool) => allowed.has(tool.name))
    toolChoice = { type: choice.mode ?? "auto" }
  }
  const format = request.responseFormat
  return {
    ...settings,
    prompt,
    ...(tools.length === 0 ? {} : { tools: [...tools], toolChoice }),
    ...(format === undefined ? {} : { responseFormat: responseFormatOf(format), providerOptions: strictness(settings, format) })
  }
}

/**
 * The provider options with OpenAI told whether to enforce the schema:
 * `@ai-sdk/openai` enforces it by default (`strictJsonSchema: true`), and
 * OpenAI refuses a schema that is not in strict form (`additionalProperties`
 * not false, optional keys). The caller's own `strictJsonSchema` wins.
 */
const strictness = (settings: CallSettings | undefined, format: ResponseFormat): NonNullable<CallSettings["providerOptions"]> => {
  const given = settings?.providerOptions
  const openai: unknown = given?.openai
  // From JavaScript `openai` may be anything: only an object can hold the caller's own choice.
  const object = typeof openai === "object" && openai !== null
  if (given !== undefined && object && Object.hasOwn(openai, "strictJsonSchema")) return given
  return { ...given, openai: { ...(object ? openai : {}), strictJsonSchema: format.strict === true } }
}

/** The provider's JSON response format for a run's output (`StructuredOutput`'s `"native"` strategy). */
const responseFormatOf = (format: ResponseFormat): NonNullable<LanguageModelV4CallOptions["responseFormat"]> => ({
  type: "json",
  schema: format.schema as NonNullable<LanguageModelV4FunctionTool["inputSchema"]>,
  name: format.name,
  ...(format.description === undefined ? {} : { description: format.description })
})

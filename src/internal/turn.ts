/**
 * One model turn as the chain records it: the assistant messages the
 * response adds and the response itself (text, tool calls, finish reason,
 * usage). `turnOf` reads it from the response's parts; `appendTurn` adds it
 * to a chain, making its tool calls the pending ones. Split so a durable run
 * records the turn, not the whole chain.
 *
 * @internal
 */
import { Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import { type Chain, ModelResponse } from "./chain.ts"
import { appended } from "./appended.ts"
import * as CallIds from "./callIds.ts"
import * as Parts from "./parts.ts"
import type { ToolCall } from "../ToolCall.ts"

/** @internal */
export const Turn = Schema.Struct({
  messages: Schema.Array(Prompt.Message),
  response: ModelResponse
}).annotate({ identifier: "ModelTurn" })

/** @internal */
export interface Turn {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly response: ModelResponse
}

/** @internal the turn of a checked response */
export const turnOf = (parts: ReadonlyArray<Response.AnyPart>): Turn => {
  const content: Array<Prompt.AssistantMessagePart> = []
  const toolCalls: Array<ToolCall> = []
  let text = ""
  let finishReason: Response.FinishReason = "unknown"
  let usage: Response.Usage | undefined
  let other = false
  for (const part of parts) {
    switch (part.type) {
      case "text":
        text += part.text
        content.push(Parts.textPart(part.text, part.metadata))
        break
      case "reasoning":
        content.push(Prompt.makePart("reasoning", { text: part.text, options: part.metadata }))
        break
      case "tool-call":
        content.push(Parts.toolCallPart(part.id, part.name, part.params, part.providerExecuted, part.metadata))
        if (!part.providerExecuted) toolCalls.push({ id: part.id, name: part.name, params: part.params })
        break
      case "finish":
        finishReason = part.reason
        usage = part.usage
        break
      case "response-metadata":
      case "source":
      case "error":
        break
      default:
        other = true
    }
  }
  // Streamed deltas, files and provider-executed results: let effect/ai
  // assemble the messages.
  const messages = other ? Prompt.fromResponseParts(parts).content : [Parts.assistantMessage(content)]
  if (other) {
    text = ""
    for (const message of messages) {
      if (message.role !== "assistant") continue
      for (const part of message.content) if (part.type === "text") text += part.text
    }
  }
  const response: ModelResponse = usage === undefined
    ? { text, toolCalls, finishReason }
    : { text, toolCalls, finishReason, usage }
  return { messages, response }
}

/** @internal `chain` with `turn` appended: its tool calls pending, `runCount` one more; `used` learns the new call ids */
export const appendTurn = (chain: Chain, turn: Turn, used: CallIds.Used): Chain => {
  const next = chain.copy({
    messages: appended(chain.messages, turn.messages),
    lastResponse: turn.response,
    pendingToolCalls: turn.response.toolCalls,
    runCount: chain.runCount + 1
  })
  CallIds.extend(used, next)
  return next
}

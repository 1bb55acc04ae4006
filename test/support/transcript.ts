/**
 * Readable views of conversations, shared by the tests: one line per message,
 * tool calls and results with their ids, and the text of a message.
 */
import type { Prompt } from "effect/ai"
import type { ChatModel } from "../../src/index.ts"

/** One line per message: `role: part | part`, tool calls and results with name, id and JSON. */
export const transcript = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> =>
  messages.map((message) => {
    if (typeof message.content === "string") return `${message.role}: ${message.content}`
    const parts = message.content.map((part) => {
      switch (part.type) {
        case "text":
          return part.text
        case "tool-call":
          return `call ${part.name}#${part.id} ${JSON.stringify(part.params)}`
        case "tool-result":
          return `${part.isFailure ? "failed" : "ok"} ${part.name}#${part.id} ${JSON.stringify(part.result)}`
        default:
          return part.type
      }
    })
    return `${message.role}: ${parts.join(" | ")}`
  })

/** The transcript of every request a scripted model received. */
export const requestTranscripts = (model: ChatModel.ScriptedModel): ReadonlyArray<ReadonlyArray<string>> =>
  model.requests.map((request) => transcript(request.prompt.content))

/** The text of a message ("" for none). */
export const textOf = (message: Prompt.Message | undefined): string =>
  message === undefined ? "" : typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : "")).join("")

/** The agent role a request is for, read from its system prompt ("You are Role."). */
export const roleOf = (request: ChatModel.GenerateRequest): string | undefined =>
  /^You are (\w+)\./.exec(textOf(request.prompt.content[0]))?.[1]

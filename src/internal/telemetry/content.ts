/**
 * A model call's messages as the OpenTelemetry GenAI conventions record them
 * on a `chat` span (opt-in, `Telemetry.CaptureContent`):
 * `gen_ai.system_instructions` (the prompt's leading system messages),
 * `gen_ai.input.messages` (the rest, in order) and `gen_ai.output.messages`
 * (the answer, with its finish reason), each a JSON string of the
 * conventions' shape (`{ role, parts: [{ type: "text", content }, …] }`).
 *
 * Bounded and redacted: every text, tool argument and tool result passes
 * through the credential redactor and is cut to 4,096 characters (a value
 * that no longer fits is kept as cut JSON text); inline file bytes are left
 * out (a URL is kept, redacted); an attribute keeps at most 65,536
 * characters — the newest input messages, the first parts of a message.
 *
 * @internal
 */
import type * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import { safeString } from "../describe.ts"
import { redactSecrets } from "../redact.ts"
import { conventionalReason, finishOf } from "./response.ts"

type Part = Readonly<Record<string, unknown>>

const maxText = 4_096
const maxAttribute = 65_536

/** `text` redacted, then cut to {@link maxText} characters. */
const bounded = (text: string): string => {
  const safe = redactSecrets(text)
  return safe.length <= maxText ? safe : `${safe.slice(0, maxText)}…`
}

/** A tool's arguments or result: as it is when its JSON is short and holds no credential, else redacted (cut JSON text if too long). */
const valueOf = (value: unknown): unknown => {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    return "[a value that cannot be shown as JSON]"
  }
  if (json === undefined) return null
  const safe = redactSecrets(json)
  if (safe.length > maxText) return `${safe.slice(0, maxText)}…`
  if (safe === json) return value
  try {
    return JSON.parse(safe) as unknown
  } catch {
    return safe
  }
}

/**
 * A tool call's arguments or result as a span attribute
 * (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): its JSON text,
 * credentials redacted, cut to 4,096 characters.
 *
 * @internal
 */
export const toolValueText = (value: unknown): string => {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    return "[a value that cannot be shown as JSON]"
  }
  return bounded(json ?? "null")
}

const filePart = (mediaType: unknown, data: unknown): Part => {
  const mime = typeof mediaType === "string" ? bounded(mediaType) : "application/octet-stream"
  const modality = mime.split("/")[0]
  const uri = data instanceof URL ? data.href : typeof data === "string" && /^https?:\/\//i.test(data) ? data : undefined
  return uri === undefined
    ? { type: "blob", modality, mime_type: mime, content: "" }
    : { type: "uri", modality, mime_type: mime, uri: bounded(uri) }
}

/** A prompt or response part in the conventions' shape; `undefined` for parts the conventions have no place for. */
const partOf = (part: { readonly type: string } & Record<string, unknown>): Part | undefined => {
  switch (part.type) {
    case "text":
      return { type: "text", content: bounded(safeString(part.text)) }
    case "reasoning":
      return { type: "reasoning", content: bounded(safeString(part.text)) }
    case "tool-call":
      return { type: "tool_call", id: bounded(safeString(part.id)), name: bounded(safeString(part.name)), arguments: valueOf(part.params) }
    case "tool-result":
      return { type: "tool_call_response", id: bounded(safeString(part.id)), response: valueOf(part.result) }
    case "file":
      return filePart(part.mediaType, part.data)
    default:
      return undefined
  }
}

const partsOf = (content: ReadonlyArray<{ readonly type: string }>): Array<Part> => {
  const parts: Array<Part> = []
  for (const part of content) {
    const converted = partOf(part as { readonly type: string } & Record<string, unknown>)
    if (converted !== undefined) parts.push(converted)
  }
  return parts
}

/** `parts` as JSON, the first ones that fit in `budget` characters. */
const fittingParts = (parts: ReadonlyArray<Part>, budget: number, wrap: (parts: ReadonlyArray<Part>) => unknown): string => {
  let kept = parts.length
  let json = JSON.stringify(wrap(parts))
  while (json.length > budget && kept > 0) {
    kept = Math.max(0, Math.min(kept - 1, Math.floor(kept * budget / json.length)))
    json = JSON.stringify(wrap(parts.slice(0, kept)))
  }
  return json
}

const messageOf = (message: Prompt.Message): { readonly role: string; readonly parts: Array<Part> } =>
  message.role === "system"
    ? { role: "system", parts: [{ type: "text", content: bounded(message.content) }] }
    : { role: message.role, parts: partsOf(message.content) }

/**
 * `gen_ai.system_instructions` and `gen_ai.input.messages` of a prompt (no
 * system instructions when it starts with none).
 *
 * @internal
 */
export const inputAttributes = (prompt: Prompt.Prompt): Record<string, string> => {
  const messages = prompt.content
  let first = 0
  const instructions: Array<Part> = []
  while (first < messages.length && messages[first].role === "system") {
    instructions.push({ type: "text", content: bounded((messages[first] as Prompt.SystemMessage).content) })
    first++
  }
  // The newest messages that fit: each message's JSON, from the last one back.
  const kept: Array<string> = []
  let size = 2
  for (let i = messages.length - 1; i >= first; i--) {
    const message = messageOf(messages[i])
    // Only the newest message is cut to fit; an older one is kept whole or not at all.
    const json = kept.length === 0
      ? fittingParts(message.parts, maxAttribute - size - 1, (parts) => ({ role: message.role, parts }))
      : JSON.stringify(message)
    if (size + json.length + 1 > maxAttribute) break
    kept.push(json)
    size += json.length + 1
  }
  const attributes: Record<string, string> = { "gen_ai.input.messages": `[${kept.reverse().join(",")}]` }
  if (instructions.length > 0) attributes["gen_ai.system_instructions"] = fittingParts(instructions, maxAttribute, (parts) => parts)
  return attributes
}

/**
 * `gen_ai.output.messages` of a model turn: one assistant message with its
 * finish reason.
 *
 * @internal
 */
export const outputAttribute = (parts: ReadonlyArray<Response.AnyPart>): string => {
  const finish = conventionalReason(finishOf(parts).reason)
  return fittingParts(partsOf(parts), maxAttribute, (kept) => [{ role: "assistant", parts: kept, finish_reason: finish }])
}

/**
 * An MCP tool result as the text the model gets: text blocks as they are,
 * embedded text resources by their text, resource links as
 * `title: uri` (and description), binary content (images, audio, blobs) as a
 * short note of its kind and size (never its bytes), blocks joined by a
 * newline; a result with no content but `structuredContent` as that JSON.
 *
 * @internal
 */
import type * as McpSchema from "effect/ai/McpSchema"
import * as JsonBounds from "../../internal/jsonBounds.ts"

const size = (bytes: Uint8Array): string => `${bytes.length.toLocaleString("en-US")} bytes`

const blockText = (block: McpSchema.ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${size(block.data)}, not shown]`
    case "resource":
      return "text" in block.resource
        ? block.resource.text
        : `[resource ${block.resource.uri}${block.resource.mimeType === undefined ? "" : ` (${block.resource.mimeType})`}, ${
          size(block.resource.blob)
        }, not shown]`
    case "resource_link":
      return `${block.title ?? block.name}: ${block.uri}${block.description === undefined ? "" : `\n${block.description}`}`
  }
}

/** Structured content as JSON, or why it cannot be. */
const structured = (value: unknown): { readonly text: string } | { readonly problem: string } => {
  const problem = JsonBounds.check(value, JsonBounds.storedLimits)
  return problem === undefined
    ? { text: JSON.stringify(value) }
    : { problem: `its structuredContent is ${JsonBounds.describe(problem)}` }
}

/**
 * The text of `result`, or the problem that keeps it from having one.
 *
 * @internal
 */
export const textOf = (result: McpSchema.CallToolResult): { readonly text: string } | { readonly problem: string } =>
  result.content.length === 0 && result.structuredContent !== undefined
    ? structured(result.structuredContent)
    : { text: result.content.map(blockText).join("\n") }

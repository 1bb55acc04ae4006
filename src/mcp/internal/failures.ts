/**
 * effect's `McpClientError` as loopwork's MCP errors: its reason's tag, and
 * a bounded detail made of its message and the message of its cause.
 *
 * @internal
 */
import type * as McpClientError from "effect/ai/McpClientError"
import { messageOf } from "../../internal/describe.ts"
import { redactSecrets } from "../../internal/redact.ts"
import { type CallFailureReason, McpCallFailed, McpConnectionError } from "../McpError.ts"
import { scrub, type Secrets } from "./secrets.ts"

/** The most characters of a detail kept. */
const maxDetail = 2_000

/**
 * `text` cut to `max` characters, saying how many were left out.
 *
 * @internal
 */
export const bounded = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${(text.length - max).toLocaleString("en-US")} more characters)`

const detailOf = (error: McpClientError.McpClientError, secrets: Secrets): string => {
  const reason = error.reason
  const own = messageOf(reason)
  const cause: unknown = "cause" in reason ? reason.cause : undefined
  const extra = cause === undefined ? "" : messageOf(cause)
  // Redacted here: a detail is kept in the error and, for a failed call, shown to the model.
  return bounded(redactSecrets(scrub(extra === "" || own.includes(extra) ? own : `${own}: ${extra}`, secrets)), maxDetail)
}

/**
 * A failure to connect or list tools.
 *
 * @internal
 */
export const connectionError = (
  operation: "connect" | "list-tools",
  error: McpClientError.McpClientError,
  secrets: Secrets
): McpConnectionError => new McpConnectionError({ operation, reason: error.reason._tag, detail: detailOf(error, secrets) })

/**
 * A failure of a call of tool `tool`.
 *
 * @internal
 */
export const callFailed = (tool: string, error: McpClientError.McpClientError, secrets: Secrets): McpCallFailed =>
  new McpCallFailed({ tool, reason: error.reason._tag satisfies CallFailureReason, detail: detailOf(error, secrets) })

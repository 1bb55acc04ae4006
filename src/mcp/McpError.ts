/**
 * What can go wrong with an MCP server, as typed errors.
 *
 * Two places, two channels:
 *
 * - **Connecting, listing and refreshing** (`McpTools.connect`,
 *   `refresh`) happen outside any run, so they fail their Effect:
 *   {@link McpConnectionError} when the server cannot be reached or answers
 *   wrongly, {@link McpToolRejected} when its tool list breaks a rule
 *   (`InvalidInput` from `loopwork` for bad options).
 * - **Calls** happen inside a run, so they fail the *tool call*, never the
 *   run: {@link McpToolFailed} when the server's tool answered
 *   `isError: true`, {@link McpCallFailed} when the call could not complete
 *   (connection lost, JSON-RPC error, timeout, bad arguments, a result too
 *   large). The loop turns both into failed tool results and applies the
 *   run's `onToolFailure` policy for `"handler"`: by default the model sees
 *   the failure and may try something else; `"fail"` ends the run with
 *   `ToolCallFailed`. Failing the run directly would bypass those policies
 *   (and a JSON-RPC error such as "invalid params" is often the model's to
 *   fix).
 *
 * Messages are redacted (bearer tokens, keys) and bounded; the fields keep
 * what the server sent, bounded too.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { redactedShort, redactSecrets } from "../internal/redact.ts"

/** `name` for a message: redacted, cut to 80 characters, quoted and escaped. */
const shown = (name: string): string => JSON.stringify(redactedShort(name, 80))

/**
 * Connecting to an MCP server or listing its tools failed. `operation` says
 * which; `reason` is the kind of failure (effect's `McpClientError` reason:
 * `"TransportError"`, `"HttpError"`, `"ProtocolError"`, `"TimeoutError"`,
 * `"ClosedError"`, `"LimitError"`, `"UnsupportedError"`, `"ValidationError"`,
 * …); `detail` what the client or server said.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * new McpError.McpConnectionError({ operation: "connect", reason: "TransportError", detail: "MCP server closed stdout" }).message
 * // "MCP connect failed (TransportError): MCP server closed stdout. Check that the server starts …"
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class McpConnectionError extends Schema.TaggedError<McpConnectionError>()("McpConnectionError", {
  operation: Schema.Literals(["connect", "list-tools"]),
  reason: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return redactSecrets(`MCP ${this.operation} failed (${this.reason}): ${this.detail}. ${hintFor(this.reason)}`)
  }
}

const hintFor = (reason: string): string => {
  switch (reason) {
    case "TimeoutError":
      return "The server did not answer in time: raise the `timeout` option or check the server"
    case "LimitError":
      return "The server sent more than the client accepts: raise `limits.messageBytes` if you trust it"
    case "HttpError":
      return "Check the URL and the headers (authorization) the server expects"
    case "ProtocolError":
    case "ValidationError":
    case "UnsupportedError":
      return "The server's answers are not valid MCP, or not in the protocol version asked for (see the `protocol` option)"
    default:
      return "Check that the server starts (stdio: command, args, env, cwd) or is reachable (HTTP: url), and that it speaks MCP"
  }
}

/**
 * A tool (or the whole tool list) an MCP server offered broke a rule of
 * `loopwork/mcp`: a name that is not a valid tool name
 * (`^[a-zA-Z0-9_-]{1,64}$`, prefix included) or that another tool of the
 * list already has, a description or input schema over its limit, a schema
 * with a `__proto__` key, more tools than `limits.tools`. `tool` is the
 * server's name for it, cut to 100 characters (absent for the list).
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * new McpError.McpToolRejected({ tool: "bad name!", rule: "its name is not a valid tool name" }).message
 * // "MCP tool \"bad name!\" refused: its name is not a valid tool name. Connect with `invalidTools: \"skip\"` …"
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class McpToolRejected extends Schema.TaggedError<McpToolRejected>()("McpToolRejected", {
  tool: Schema.optionalKey(Schema.String),
  rule: Schema.String
}) {
  override get message(): string {
    const subject = this.tool === undefined ? "MCP tool list" : `MCP tool ${shown(this.tool)}`
    return redactSecrets(
      `${subject} refused: ${this.rule}. Connect with \`invalidTools: "skip"\` to leave refused tools out (or list ` +
        "the tools you want in `include`)"
    )
  }
}

/**
 * The MCP server's tool ran and reported an error (`isError: true` in its
 * result). `text` is the result's content as text (bounded by
 * `limits.resultLength`). As a tool failure the model sees
 * `{ _tag: "McpToolFailed", tool, text }` unless `onToolFailure.format`
 * says otherwise.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * new McpError.McpToolFailed({ tool: "divide", text: "Cannot divide by zero" }).message
 * // "MCP tool 'divide' reported an error: Cannot divide by zero"
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class McpToolFailed extends Schema.TaggedError<McpToolFailed>()("McpToolFailed", {
  tool: Schema.String,
  text: Schema.String
}) {
  override get message(): string {
    return redactSecrets(`MCP tool '${this.tool}' reported an error: ${this.text}`)
  }
}

/**
 * Why an MCP call could not complete: a reason of effect's `McpClientError`,
 * or `"InvalidArguments"` (the arguments were not a JSON object) or
 * `"ResultTooLarge"` (the result's text passed `limits.resultLength`) or
 * `"UnsupportedResult"` (the result could not be read as text).
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * const reason: McpError.CallFailureReason = "TransportError"
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const CallFailureReason = Schema.Literals([
  "TransportError",
  "ProtocolError",
  "HttpError",
  "UnsupportedError",
  "ClosedError",
  "TimeoutError",
  "LimitError",
  "ConfigurationError",
  "ValidationError",
  "ToolError",
  "InvalidArguments",
  "ResultTooLarge",
  "UnsupportedResult"
])

/**
 * A reason of {@link CallFailureReason}.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * const retryable = (reason: McpError.CallFailureReason) => reason === "TransportError" || reason === "TimeoutError"
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type CallFailureReason = typeof CallFailureReason.Type

/**
 * A call of an MCP tool could not complete: the connection was lost, the
 * server answered with a JSON-RPC error, the arguments were not an object, or
 * the result was too large or unreadable. See {@link CallFailureReason}.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * new McpError.McpCallFailed({ tool: "search", reason: "ProtocolError", detail: "the database is down (code -32603)" }).message
 * // "MCP call of tool 'search' failed (ProtocolError): the database is down (code -32603)"
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class McpCallFailed extends Schema.TaggedError<McpCallFailed>()("McpCallFailed", {
  tool: Schema.String,
  reason: CallFailureReason,
  detail: Schema.String
}) {
  override get message(): string {
    return redactSecrets(`MCP call of tool '${this.tool}' failed (${this.reason}): ${this.detail}`)
  }
}

/**
 * How a call of an MCP tool fails: the failure schema of every tool of an
 * MCP toolkit.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * const isServerError = (error: McpError.CallError) => error._tag === "McpToolFailed"
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export const CallError = Schema.Union([McpToolFailed, McpCallFailed])

/**
 * {@link McpToolFailed} or {@link McpCallFailed}.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * const describe = (error: McpError.CallError): string => error.message
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type CallError = McpToolFailed | McpCallFailed

/**
 * How connecting, listing or refreshing fails.
 *
 * @example
 * ```ts
 * import { McpError } from "loopwork/mcp"
 *
 * const unreachable = (error: McpError.ConnectError) => error._tag === "McpConnectionError"
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type ConnectError = McpConnectionError | McpToolRejected

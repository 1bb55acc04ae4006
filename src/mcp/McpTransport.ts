/**
 * How to reach an MCP server: a command to start and talk to over stdio, or
 * a Streamable HTTP endpoint. A transport is a description (plain data);
 * `McpTools.connect` checks it and opens the connection.
 *
 * - **stdio** starts the command as a child process (no shell) and speaks
 *   newline-delimited JSON-RPC on its stdin/stdout; stderr is read and
 *   dropped. The child gets *only* the environment you pass in `env`, plus
 *   `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `TMPDIR` (and on
 *   Windows `SYSTEMROOT`, `APPDATA`, …) from this process: your API keys do
 *   not leak to a third-party server unless you hand them over. When the
 *   connection's scope closes, its stdin is closed, then it is sent SIGTERM
 *   after 5 seconds and SIGKILL after 5 more.
 * - **http** posts JSON-RPC to `url` (`http:` or `https:`), reading JSON or
 *   SSE answers, with your `headers` (e.g. an `Authorization` header; pass a
 *   `Redacted` value to keep it out of logs). Sessions the server assigns are
 *   kept and ended when the scope closes.
 *
 * @since 0.2.0
 */
import type { Redacted } from "effect"

/**
 * A server started as a child process, spoken to over stdio.
 *
 * @example
 * ```ts
 * import { McpTransport } from "loopwork/mcp"
 *
 * const files: McpTransport.Stdio = McpTransport.stdio({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface Stdio {
  readonly _tag: "Stdio"
  /** The program to run (looked up on `PATH`); no shell is involved. */
  readonly command: string
  /** Its arguments, passed as they are. */
  readonly args: ReadonlyArray<string>
  /** Environment variables for the child, on top of the few listed in the module's notes. */
  readonly env: Readonly<Record<string, string>>
  /** The child's working directory (default: this process's). */
  readonly cwd?: string | undefined
}

/**
 * A server reached over Streamable HTTP.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { McpTransport } from "loopwork/mcp"
 *
 * const remote: McpTransport.Http = McpTransport.http({
 *   url: "https://mcp.example.com/mcp",
 *   headers: { authorization: Redacted.make(`Bearer ${process.env.MCP_TOKEN ?? ""}`) }
 * })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface Http {
  readonly _tag: "Http"
  /** The endpoint, `http:` or `https:`. */
  readonly url: string
  /** Headers sent with every request. */
  readonly headers: Readonly<Record<string, string | Redacted.Redacted<string>>>
}

/**
 * A way to reach an MCP server.
 *
 * @example
 * ```ts
 * import { McpTransport } from "loopwork/mcp"
 *
 * const where = (transport: McpTransport.Transport): string =>
 *   transport._tag === "Stdio" ? transport.command : transport.url
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type Transport = Stdio | Http

/**
 * Describes a server to start and talk to over stdio. Nothing starts until
 * `McpTools.connect`, which also checks the options (a wrong value fails
 * there with `InvalidInput`, never throws).
 *
 * @example
 * ```ts
 * import { McpTransport } from "loopwork/mcp"
 *
 * const github = McpTransport.stdio({
 *   command: "docker",
 *   args: ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
 *   env: { GITHUB_PERSONAL_ACCESS_TOKEN: process.env.GITHUB_TOKEN ?? "" }
 * })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const stdio = (options: {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}): Stdio => ({
  _tag: "Stdio",
  command: options?.command,
  args: options?.args ?? [],
  env: options?.env ?? {},
  ...(options?.cwd === undefined ? {} : { cwd: options.cwd })
})

/**
 * Describes a server reached over Streamable HTTP. Nothing is sent until
 * `McpTools.connect`, which also checks the options.
 *
 * @example
 * ```ts
 * import { McpTransport } from "loopwork/mcp"
 *
 * const local = McpTransport.http({ url: "http://127.0.0.1:3000/mcp" })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const http = (options: {
  readonly url: string | URL
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
}): Http => ({
  _tag: "Http",
  url: options?.url instanceof URL ? options.url.href : options?.url,
  headers: options?.headers ?? {}
})

/**
 * An MCP server's tools as a loopwork toolkit, in one call.
 *
 * The loop runs tools itself: a chain's tools are an effect/ai `Toolkit`
 * and their handlers are read from the Effect context
 * (`toolkit.toLayer({ ... })`). effect's own `McpClient.toolkit` binds its
 * handlers inside the toolkit instead, which the loop cannot run (a chain
 * refuses it with `InvalidInput`). {@link connect} — or {@link fromClient}
 * over a client you have — gives both halves the loop needs: a `toolkit` for
 * `Chain.make` or `Agent.make`, and the `layer` of its handlers.
 *
 * **Built on effect's `McpClient`** (effect 4.1, `effect/ai`), not on
 * `@modelcontextprotocol/sdk`: it speaks both transports (stdio and
 * Streamable HTTP), bounds messages, pages and discovery, answers pings,
 * cancels interrupted calls and shuts a server down in steps, and it needs
 * no extra dependency. Its HTTP side runs on `fetch` (`effect/http`); its
 * stdio side needs a `ChildProcessSpawner`, whose Node implementation lives
 * in `@effect/platform-node` (not a dependency of loopwork), so
 * `loopwork/mcp` brings a small one of its own over `node:child_process`.
 * `loopwork/mcp` therefore loads no package besides `effect`.
 *
 * **Calls.** A call sends the model's arguments to the server and gives the
 * model the result as text (see `McpError` for how failures go: a tool's
 * `isError` result and a call that cannot complete are *failed tool results*,
 * so the run's `onToolFailure` policies apply). Arguments are checked by the
 * server against its schema, not by loopwork.
 *
 * **Hostile servers.** A server's tool list is treated as hostile input:
 * names must be valid tool names and unique, descriptions and schemas are
 * bounded, and the list is bounded (`limits`); names are only kept in `Map`s
 * and null-prototype records, so a tool named `__proto__` is just a tool. A refused tool fails `connect` with `McpToolRejected`,
 * or with `invalidTools: "skip"` is left out and listed in `rejected`.
 *
 * **Refreshing.** A connection's tools are a *snapshot*: `connect` lists
 * them once, and `refresh` lists them again over the same connection,
 * giving a new snapshot (a new toolkit and layer) and leaving the old one
 * as it was. Chains made with the old toolkit keep it, so a running or
 * paused chain never sees its tools change under it (the loop compiles a
 * toolkit once, and `Chain.run`'s type names the handlers it needs);
 * start the next run with the new toolkit. A snapshot's handlers call the
 * server by the tool's name, so a tool the server dropped since answers
 * with the server's own error, as a failed result.
 *
 * @since 0.2.0
 */
import { Effect, type Layer, type Scope } from "effect"
import * as McpClient from "effect/ai/McpClient"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import { InvalidInput } from "../LoopError.ts"
import type { ConnectError, McpToolRejected } from "./McpError.ts"
import type { Transport } from "./McpTransport.ts"
import { bounded, connectionError } from "./internal/failures.ts"
import { noSecrets, scrub, type Secrets, secretsOf } from "./internal/secrets.ts"
import * as Options from "./internal/options.ts"
import { screen } from "./internal/screen.ts"
import { build, type McpTool as Tool_, type McpToolRecord } from "./internal/toolkit.ts"
import * as Transports from "./internal/transport.ts"

/**
 * An MCP tool: its parameters are the server's JSON Schema, its result the
 * text of the server's answer, its failure an `McpError.CallError`.
 *
 * @example
 * ```ts
 * import type { McpTools } from "loopwork/mcp"
 *
 * const describe = (tool: McpTools.McpTool): string => `${tool.name}: ${tool.description ?? ""}`
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type McpTool = Tool_

/**
 * The tools of an MCP toolkit, by name (known only at run time).
 *
 * @example
 * ```ts
 * import type { Toolkit } from "effect/ai"
 * import type { McpTools } from "loopwork/mcp"
 *
 * type McpToolkit = Toolkit.Toolkit<McpTools.Tools>
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type Tools = McpToolRecord

/**
 * A tool of the snapshot: its name in the toolkit (`prefix` included), its
 * name on the server, and its description.
 *
 * @example
 * ```ts
 * import type { McpTools } from "loopwork/mcp"
 *
 * const names = (tools: ReadonlyArray<McpTools.ToolInfo>) => tools.map((tool) => tool.name)
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolInfo {
  readonly name: string
  readonly serverName: string
  readonly description: string | undefined
}

/**
 * The limits on what a server may send: `tools` (default 128, the most
 * tools a list may have), `descriptionLength` (8,192 characters),
 * `schemaDepth` (32 levels) and `schemaSize` (100,000 characters of JSON) for
 * each input schema, `resultLength` (1,000,000 characters of result text; an
 * error's text is cut there) and `messageBytes` (16 MiB, any one message).
 *
 * @example
 * ```ts
 * import type { McpTools } from "loopwork/mcp"
 *
 * const strict: Partial<McpTools.Limits> = { tools: 20, schemaSize: 20_000 }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type Limits = Options.Limits

/**
 * Options of {@link connect}: the client's `name` and `version` (sent to
 * the server; default "loopwork"), a `prefix` for every tool name (to tell
 * servers apart in one toolkit), `include` (the server's names of the tools
 * to keep; default all), `invalidTools` (`"fail"`, the default, or
 * `"skip"`), `protocol` (`"2025-11-25"`, the default, or `"2026-07-28"`),
 * `timeout` (connecting and each listing, default 30 seconds), `callTimeout`
 * (each call, as a `ToolTimeout`; when none is given, a call the server
 * never answers fails after 5 minutes, and a shorter `toolTimeout` of the
 * run applies) and `limits`.
 *
 * @example
 * ```ts
 * import type { McpTools } from "loopwork/mcp"
 *
 * const options: McpTools.ConnectOptions = { prefix: "files_", include: ["read_file"], callTimeout: "20 seconds" }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface ConnectOptions extends Options.Options {}

/**
 * A snapshot of a connected server's tools: the `toolkit` to give a chain
 * or an agent, the `layer` of its handlers to provide to the run, what
 * they are (`tools`), what was refused (`rejected`, with
 * `invalidTools: "skip"`), the server's name and version, and `refresh`,
 * which lists the tools again over the same connection.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 * import type { McpTools } from "loopwork/mcp"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const ask = (mcp: McpTools.McpTools, question: string) =>
 *   Chain.run(Chain.make({ user: question, toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
 *     Effect.provide([ScriptedModel.make([{ text: "…" }]).layer, mcp.layer])
 *   )
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface McpTools {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly layer: Layer.Layer<Tool.HandlersFor<Tools>>
  readonly tools: ReadonlyArray<ToolInfo>
  readonly rejected: ReadonlyArray<McpToolRejected>
  readonly server: { readonly name: string; readonly version: string } | undefined
  /** Lists the server's tools again: a new snapshot; this one is left as it is. */
  readonly refresh: Effect.Effect<McpTools, ConnectError>
}

const snapshot = (client: McpClient.McpClient, options: Options.Resolved, secrets: Secrets): Effect.Effect<McpTools, ConnectError> =>
  Effect.flatMap(
    Effect.mapError(client.listTools({ timeout: options.timeout }), (error) => connectionError("list-tools", error, secrets)),
    (descriptors) => {
      const screened = screen(descriptors, { ...options, bounds: options.limits })
      if ("error" in screened) return Effect.fail(screened.error)
      const { layer, toolkit } = build(client, screened.accepted, {
        resultLength: options.limits.resultLength,
        callTimeout: options.callTimeout,
        secrets
      })
      // The server's own words: bounded like every other string it sends.
      const server = client.serverInfo === undefined
        ? undefined
        : { name: bounded(scrub(String(client.serverInfo.name), secrets), 200), version: bounded(scrub(String(client.serverInfo.version), secrets), 200) }
      return Effect.succeed<McpTools>({
        toolkit,
        layer,
        tools: screened.accepted.map(({ descriptor, name }) => ({ name, serverName: descriptor.name, description: descriptor.description })),
        rejected: screened.rejected,
        server,
        refresh: Effect.suspend(() => snapshot(client, options, secrets))
      })
    }
  )

/**
 * Connects to an MCP server and lists its tools: one call gives the
 * toolkit and its handler layer. The connection (and a stdio server's
 * process) lives as long as the `Scope`.
 *
 * Fails with `InvalidInput` for a wrong transport or option (before
 * anything starts), `McpConnectionError` when the server cannot be reached
 * or its answers are not MCP, and `McpToolRejected` when its tool list
 * breaks a rule (with `invalidTools: "fail"`, the default).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 * import { McpTools, McpTransport } from "loopwork/mcp"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const program = Effect.gen(function*() {
 *   const mcp = yield* McpTools.connect(McpTransport.stdio({ command: "node", args: ["calculator-server.mjs"] }))
 *   const model = ScriptedModel.make([
 *     { toolCalls: [{ name: "add", params: { a: 2, b: 3 } }] },
 *     { text: "2 + 3 = 5" }
 *   ])
 *   return yield* Chain.run(Chain.make({ user: "What is 2 + 3?", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
 *     .pipe(Effect.provide([model.layer, mcp.layer]))
 * }).pipe(Effect.scoped) // the server stops here
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const connect = (
  transport: Transport,
  options?: ConnectOptions
): Effect.Effect<McpTools, ConnectError | InvalidInput, Scope.Scope> =>
  Effect.suspend((): Effect.Effect<McpTools, ConnectError | InvalidInput, Scope.Scope> => {
    const problem = Transports.check(transport) ?? Options.check(options)
    if (problem !== undefined) return Effect.fail(problem)
    const resolved = Options.resolve(options, Transports.defaultTimeout)
    return Effect.flatMap(
      Transports.open(transport, { ...resolved, messageBytes: resolved.limits.messageBytes }),
      (client) => snapshot(client, resolved, secretsOf(transport))
    )
  })

/**
 * The tools of an effect `McpClient` you already have (built with
 * `McpClient.layerHttp`, `McpClient.layerStdio` or a transport of your
 * own): the same snapshot as {@link connect} gives — the toolkit, its handler
 * layer, `refresh` — over your client. The connection stays yours: it lives
 * as long as your client's scope, and the size of a whole message is
 * bounded by your transport, not by `limits.messageBytes`.
 *
 * Fails with `InvalidInput` when `client` is not an `McpClient` or an
 * option is wrong, `McpConnectionError` when the tool list cannot be read,
 * and `McpToolRejected` as {@link connect} does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpClient } from "effect/ai"
 * import { McpTools } from "loopwork/mcp"
 *
 * const tools = Effect.flatMap(McpClient.McpClient, (client) => McpTools.fromClient(client, { callTimeout: "20 seconds" }))
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromClient = (
  client: McpClient.McpClient,
  options?: ConnectOptions
): Effect.Effect<McpTools, ConnectError | InvalidInput> =>
  Effect.suspend((): Effect.Effect<McpTools, ConnectError | InvalidInput> => {
    // The brand alone can be forged from JavaScript: the methods used are checked too.
    const usable = McpClient.isMcpClient(client) && typeof client.listTools === "function" && typeof client.callTool === "function"
    if (!usable) {
      return Effect.fail(new InvalidInput({ field: "client", rule: "must be an effect McpClient (McpClient.make or McpClient.layerHttp)", value: typeof client }))
    }
    const problem = Options.check(options, "McpTools.fromClient")
    return problem === undefined ? snapshot(client, Options.resolve(options, Transports.defaultTimeout), noSecrets) : Effect.fail(problem)
  })

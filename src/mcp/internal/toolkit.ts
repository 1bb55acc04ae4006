/**
 * Screened MCP tools as an effect/ai toolkit and its handler layer, the
 * shape the loop runs: each tool a `Tool.dynamic` with the server's JSON
 * Schema (sent to the model as it is; the server validates the arguments),
 * a text success and {@link CallError} as its failure; each handler calls
 * the server through the client and classifies the answer.
 *
 * @internal
 */
import { Duration, Effect, type JsonSchema, type Layer, Predicate, Schema } from "effect"
import type * as McpClient from "effect/ai/McpClient"
import type * as McpSchema from "effect/ai/McpSchema"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as ToolTimeout from "../../ToolTimeout.ts"
import { CallError, McpCallFailed, McpToolFailed } from "../McpError.ts"
import { bounded, callFailed } from "./failures.ts"
import { scrub, type Secrets } from "./secrets.ts"
import { textOf } from "./result.ts"
import type { Accepted } from "./screen.ts"

/**
 * The tool type of an MCP tool.
 *
 * @internal
 */
export type McpTool = Tool.Tool<string, {
  readonly parameters: typeof Schema.Unknown
  readonly success: typeof Schema.String
  readonly failure: typeof CallError
  readonly failureMode: "error"
}>

/**
 * The tools of an MCP toolkit, by name.
 *
 * @internal
 */
export type McpToolRecord = Record<string, McpTool>

/** The call's arguments as an MCP arguments object (none: `{}`), or `undefined` when they are not one. */
const argumentsOf = (params: unknown): Readonly<Record<string, unknown>> | undefined =>
  params === undefined ? {} : Predicate.isObject(params) ? params as Record<string, unknown> : undefined

/** A tool's answer as its handler's outcome. */
const settle = (tool: string, result: McpSchema.CallToolResult, maxLength: number, secrets: Secrets): Effect.Effect<string, CallError> => {
  const read = textOf(result)
  if ("problem" in read) return Effect.fail(new McpCallFailed({ tool, reason: "UnsupportedResult", detail: read.problem }))
  if (result.isError === true) return Effect.fail(new McpToolFailed({ tool, text: bounded(scrub(read.text, secrets), maxLength) }))
  if (read.text.length > maxLength) {
    return Effect.fail(
      new McpCallFailed({
        tool,
        reason: "ResultTooLarge",
        detail: `the result has ${read.text.length.toLocaleString("en-US")} characters, more than limits.resultLength (${maxLength})`
      })
    )
  }
  return Effect.succeed(scrub(read.text, secrets))
}

const handlerFor = (client: McpClient.McpClient, { descriptor, name }: Accepted, options: HandlerOptions) => (params: unknown) => {
  const args = argumentsOf(params)
  if (args === undefined) {
    return Effect.fail(new McpCallFailed({ tool: name, reason: "InvalidArguments", detail: "the arguments must be a JSON object" }))
  }
  const called = client.callTool({ tool: descriptor, arguments: args }).pipe(
    Effect.mapError((error): CallError => callFailed(name, error, options.secrets)),
    Effect.flatMap((result) => settle(name, result, options.resultLength, options.secrets))
  )
  // A server that never answers: bounded here when no callTimeout annotates the tool, so a run's own
  // toolTimeout still applies when it is shorter.
  return options.callTimeout !== undefined ? called : Effect.timeoutOrElse(called, {
    duration: defaultCallTimeout,
    orElse: () => Effect.fail(new McpCallFailed({ tool: name, reason: "TimeoutError", detail: noAnswer }))
  })
}

/** How long a call waits for a server's answer when `callTimeout` is not given. */
const defaultCallTimeout = Duration.minutes(5)
const noAnswer = "the server did not answer within 5 minutes (the default; set callTimeout to change it)"

/** @internal what {@link build} needs besides the client and the tools */
export interface HandlerOptions {
  readonly resultLength: number
  readonly callTimeout: Duration.Input | undefined
  readonly secrets: Secrets
}

/**
 * `tool` under an id of its own, `loopwork/mcp/<name>`. A tool's handler is
 * found by its id, and effect/ai makes the id from the name alone: a server
 * naming a tool like a local one would otherwise share its handler key, so
 * after a merge the loop could check the server's definition (no approval)
 * and run the local tool's handler.
 */
const ownId = (tool: McpTool, name: string, serial: number): McpTool =>
  Object.assign(Object.create(Object.getPrototypeOf(tool) as object) as McpTool, tool, { id: `loopwork/mcp/${serial}/${name}` })

/**
 * Each connection's number in its tools' ids: two servers listing a tool of
 * the same name must not share a handler key either (after a merge, one
 * server's definition would be shown and the other's handler run). The
 * same for every snapshot of one client, so a refresh keeps its ids.
 */
const serials = new WeakMap<McpClient.McpClient, number>()
let nextSerial = 0
const serialOf = (client: McpClient.McpClient): number => {
  let serial = serials.get(client)
  if (serial === undefined) {
    serial = ++nextSerial
    serials.set(client, serial)
  }
  return serial
}

const toolFor = ({ descriptor, name }: Accepted, callTimeout: Duration.Input | undefined, secrets: Secrets, serial: number): McpTool => {
  const tool: McpTool = Tool.dynamic(name, {
    description: descriptor.description === undefined ? undefined : scrub(descriptor.description, secrets),
    parameters: descriptor.inputSchema as JsonSchema.JsonSchema,
    success: Schema.String,
    failure: CallError,
    failureMode: "error"
  }).annotate(Tool.Strict, false)
  return ownId(callTimeout === undefined ? tool : tool.annotate(ToolTimeout.Annotation, callTimeout), name, serial)
}

/**
 * What {@link build} makes.
 *
 * @internal
 */
export interface Built {
  readonly toolkit: Toolkit.Toolkit<McpToolRecord>
  readonly layer: Layer.Layer<Tool.HandlersFor<McpToolRecord>>
}

/**
 * The toolkit of `accepted` and the layer of its handlers, which call
 * through `client`.
 *
 * @internal
 */
export const build = (
  client: McpClient.McpClient,
  accepted: ReadonlyArray<Accepted>,
  options: HandlerOptions
): Built => {
  const serial = serialOf(client)
  const toolkit = Toolkit.make(...accepted.map((entry) => toolFor(entry, options.callTimeout, options.secrets, serial))) as unknown as Toolkit.Toolkit<McpToolRecord>
  // Null prototype: a tool named "__proto__" or "constructor" is a tool, nothing more.
  const handlers: Record<string, ReturnType<typeof handlerFor>> = Object.create(null)
  for (const entry of accepted) handlers[entry.name] = handlerFor(client, entry, options)
  return { toolkit, layer: toolkit.toLayer(handlers) }
}

/**
 * A transport description checked (a JavaScript caller may hand anything)
 * and opened as an effect `McpClient`: stdio through effect's own stdio
 * transport over the Node spawner of `nodeSpawner.ts`, Streamable HTTP
 * through effect's HTTP transport over `fetch`.
 *
 * @internal
 */
import { Duration, Effect, Predicate, Redacted, type Scope } from "effect"
import * as McpClient from "effect/ai/McpClient"
import * as McpProtocol from "effect/ai/McpProtocol"
import { FetchHttpClient } from "effect/http"
import { ChildProcess } from "effect/process"
import { InvalidInput } from "../../LoopError.ts"
import { McpConnectionError } from "../McpError.ts"
import type { Http, Stdio, Transport } from "../McpTransport.ts"
import { connectionError } from "./failures.ts"
import { secretsOf } from "./secrets.ts"
import * as NodeSpawner from "./nodeSpawner.ts"

const hidden = "(hidden)"

const hasNul = (text: string): boolean => text.includes("\0")

const isText = (u: unknown): u is string => typeof u === "string" && !hasNul(u)

/** A non-null object that is not an array (`Predicate.isObject`). */
const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => Predicate.isObject(u)

const checkEnv = (env: unknown): InvalidInput | undefined => {
  if (!isRecord(env)) return new InvalidInput({ field: "transport.env", rule: "must be an object of strings", value: hidden })
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=") || hasNul(name)) {
      return new InvalidInput({ field: "transport.env", rule: "variable names must be non-empty, without '=' or NUL", value: name })
    }
    if (!isText(value)) {
      return new InvalidInput({ field: `transport.env[${JSON.stringify(name)}]`, rule: "must be a string without NUL", value: hidden })
    }
  }
  return undefined
}

const checkStdio = (transport: Stdio): InvalidInput | undefined => {
  if (!isText(transport.command) || transport.command === "") {
    return new InvalidInput({ field: "transport.command", rule: "must be a non-empty string without NUL", value: transport.command })
  }
  if (!Array.isArray(transport.args) || !transport.args.every(isText)) {
    return new InvalidInput({ field: "transport.args", rule: "must be an array of strings without NUL", value: hidden })
  }
  if (transport.cwd !== undefined && (!isText(transport.cwd) || transport.cwd === "")) {
    return new InvalidInput({ field: "transport.cwd", rule: "must be a non-empty string", value: transport.cwd })
  }
  return checkEnv(transport.env)
}

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const headerValue = (value: unknown): string | undefined => {
  const text = Redacted.isRedacted(value) ? Redacted.value(value) : value
  return typeof text === "string" && !/[\r\n\0]/.test(text) ? text : undefined
}

const checkHttp = (transport: Http): InvalidInput | undefined => {
  const url = typeof transport.url === "string" && URL.canParse(transport.url) ? new URL(transport.url) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return new InvalidInput({ field: "transport.url", rule: "must be an http: or https: URL", value: transport.url })
  }
  if (!isRecord(transport.headers)) {
    return new InvalidInput({ field: "transport.headers", rule: "must be an object of strings", value: hidden })
  }
  for (const [name, value] of Object.entries(transport.headers)) {
    if (!headerName.test(name)) return new InvalidInput({ field: "transport.headers", rule: "header names must be HTTP tokens", value: name })
    if (headerValue(value) === undefined) {
      return new InvalidInput({
        field: `transport.headers[${JSON.stringify(name)}]`,
        rule: "must be a string (or Redacted string) without CR, LF or NUL",
        value: hidden
      })
    }
  }
  return undefined
}

/**
 * The problem of a transport handed to `connect`, if any.
 *
 * @internal
 */
export const check = (transport: unknown): InvalidInput | undefined => {
  if (isRecord(transport) && transport._tag === "Stdio") return checkStdio(transport as unknown as Stdio)
  if (isRecord(transport) && transport._tag === "Http") return checkHttp(transport as unknown as Http)
  return new InvalidInput({
    field: "transport",
    rule: "must be McpTransport.stdio({ command, ... }) or McpTransport.http({ url, ... })",
    value: transport
  })
}

/** Variables a child gets from this process (none of them a credential). */
const inherited: ReadonlyArray<string> = process.platform === "win32"
  ? ["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "WINDIR"]
  : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "USER"]

/**
 * The child's environment: the inherited few, then the transport's own.
 *
 * @internal
 */
export const environment = (env: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = Object.create(null)
  for (const name of inherited) {
    const value = process.env[name]
    if (value !== undefined) out[name] = value
  }
  for (const [name, value] of Object.entries(env)) out[name] = value
  return out
}

/**
 * What `open` needs besides the transport.
 *
 * @internal
 */
export interface ClientOptions {
  readonly name: string
  readonly version: string
  readonly protocol: "2025-11-25" | "2026-07-28"
  readonly timeout: Duration.Duration
  readonly messageBytes: number
}

const transportOf = (transport: Transport, options: ClientOptions) => {
  const protocol = options.protocol === "2026-07-28" ? McpProtocol.v2026_07_28 : McpProtocol.v2025_11_25
  if (transport._tag === "Stdio") {
    const command = ChildProcess.make(transport.command, [...transport.args], {
      env: environment(transport.env),
      ...(transport.cwd === undefined ? {} : { cwd: transport.cwd })
    })
    return Effect.provide(McpClient.stdio({ command, protocol, maxMessageBytes: options.messageBytes }), NodeSpawner.layer)
  }
  // Null prototype: a header named "__proto__" is a header, not a prototype.
  const headers: Record<string, string> = Object.create(null)
  for (const [name, value] of Object.entries(transport.headers)) headers[name] = headerValue(value) ?? ""
  return Effect.provide(
    McpClient.http({ url: transport.url, protocol, headers, maxMessageBytes: options.messageBytes }),
    FetchHttpClient.layer
  )
}

/**
 * Opens a checked transport: the process starts (or the first request is
 * sent) and the client initializes, within `options.timeout`. Closed with
 * `scope`.
 *
 * @internal
 */
export const open = (
  transport: Transport,
  options: ClientOptions
): Effect.Effect<McpClient.McpClient, McpConnectionError, Scope.Scope> =>
  McpClient.make({ name: options.name, version: options.version, timeout: options.timeout }).pipe(
    Effect.provideServiceEffect(McpClient.Transport, transportOf(transport, options)),
    Effect.mapError((error) => connectionError("connect", error, secretsOf(transport)))
  )

/** @internal */
export const defaultTimeout: Duration.Duration = Duration.seconds(30)

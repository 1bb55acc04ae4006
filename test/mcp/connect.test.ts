/**
 * `McpTools.connect`'s own failures: wrong transports and options from
 * JavaScript (an `InvalidInput` naming the field, before anything starts;
 * never a throw), servers that cannot be reached or do not speak MCP (an
 * `McpConnectionError` saying what to check), what a stdio child inherits
 * (no credentials from this process), and headers reaching an HTTP server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { stdioTransport } from "./support/harness.ts"

/** `connect(transport, options)` as the JavaScript caller makes it (no types). */
const connectUntyped = (transport: unknown, options?: unknown) =>
  McpTools.connect(transport as McpTransport.Transport, options as McpTools.ConnectOptions)

const plain = stdioTransport("plain")

const refusals: ReadonlyArray<readonly [string, unknown, unknown, string]> = [
  ["no transport", undefined, undefined, "Invalid transport: must be McpTransport.stdio({ command, ... }) or McpTransport.http({ url, ... }) (got undefined)"],
  ["an empty command", McpTransport.stdio({ command: "" }), undefined, "Invalid transport.command: must be a non-empty string without NUL (got \"\")"],
  ["no options at all", McpTransport.stdio(undefined as never), undefined, "Invalid transport.command: must be a non-empty string without NUL (got undefined)"],
  ["an argument that is not a string", { ...plain, args: [1] }, undefined, "Invalid transport.args: must be an array of strings without NUL (got \"(hidden)\")"],
  ["an env value that is not a string (its value hidden)", { ...plain, env: { TOKEN: 42 } }, undefined, "Invalid transport.env[\"TOKEN\"]: must be a string without NUL (got \"(hidden)\")"],
  ["an ftp: URL", McpTransport.http({ url: "ftp://example.com/mcp" }), undefined, "Invalid transport.url: must be an http: or https: URL (got \"ftp://example.com/mcp\")"],
  ["a header name with a space", McpTransport.http({ url: "http://127.0.0.1:1/mcp", headers: { "x y": "1" } }), undefined, "Invalid transport.headers: header names must be HTTP tokens (got \"x y\")"],
  [
    "a header value with CR LF (its value hidden)",
    McpTransport.http({ url: "http://127.0.0.1:1/mcp", headers: { authorization: Redacted.make("Bearer t0ken\r\nx-injected: 1") } }),
    undefined,
    "Invalid transport.headers[\"authorization\"]: must be a string (or Redacted string) without CR, LF or NUL (got \"(hidden)\")"
  ],
  ["options that are not an object", plain, "skip", "Invalid McpTools.connect options: must be an object (got \"skip\")"],
  ["a misspelt option", plain, { prefx: "a_" }, "Invalid McpTools.connect options[\"prefx\"]: is not an option (got \"a_\")"],
  ["a prefix with a dot", plain, { prefix: "a." }, "Invalid prefix: must be letters, digits, '_' or '-', at most 63 of them (got \"a.\")"],
  ["invalidTools \"ignore\"", plain, { invalidTools: "ignore" }, "Invalid invalidTools: must be \"fail\" or \"skip\" (got \"ignore\")"],
  ["a negative timeout", plain, { timeout: -1 }, "Invalid timeout: must be a positive duration (e.g. \"30 seconds\") (got -1)"],
  [
    "an unknown limit",
    plain,
    { limits: { tool: 3 } },
    "Invalid limits[\"tool\"]: is not a limit (tools, descriptionLength, schemaDepth, schemaSize, resultLength, messageBytes) (got 3)"
  ],
  ["a limit of zero", plain, { limits: { tools: 0 } }, "Invalid limits.tools: must be a positive whole number (got 0)"]
]

describe("McpTools.connect refuses wrong input with InvalidInput, before anything starts", () => {
  for (const [name, transport, options, message] of refusals) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const error = yield* Effect.scoped(Effect.flip(connectUntyped(transport, options)))
        expect(error._tag).toBe("InvalidInput")
        expect(error.message).toBe(message)
        expect(error.message).not.toContain("t0ken")
      }))
  }
})

/** A stdio "server" that is a node script (exits when its stdin ends). */
const script = (source: string) =>
  McpTransport.stdio({ command: process.execPath, args: ["-e", `${source}; process.stdin.resume(); process.stdin.on("end", () => process.exit(0))`] })

describe("servers that cannot be reached or do not speak MCP: McpConnectionError", () => {
  it.live("a command that does not exist", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpTools.connect(McpTransport.stdio({ command: "loopwork-no-such-mcp-server" })))
      expect(error).toMatchObject({ _tag: "McpConnectionError", operation: "connect", reason: "TransportError" })
      expect(error.message).toMatch(/^MCP connect failed \(TransportError\): Cannot spawn MCP server: .*ENOENT/)
      expect(error.message).toContain("Check that the server starts (stdio: command, args, env, cwd)")
    }))

  it.live("a process that prints something that is not JSON-RPC", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpTools.connect(script("console.log('hello, I am not MCP')")))
      expect(error).toMatchObject({ _tag: "McpConnectionError", operation: "connect", reason: "ProtocolError" })
      expect(error.message).toMatch(/^MCP connect failed \(ProtocolError\): Invalid MCP JSON/)
    }))

  it.live("a process that never answers, past `timeout`", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpTools.connect(script("0"), { timeout: "300 millis" }))
      expect(error.message).toBe(
        "MCP connect failed (TimeoutError): MCP initialization deadline exceeded. The server did not answer in time: raise the `timeout` option or check the server"
      )
    }))

  it.live("an HTTP port nobody listens on, and an HTTP server that answers 401", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.flip(McpTools.connect(McpTransport.http({ url: "http://127.0.0.1:1/mcp" })))
      expect(closed).toMatchObject({ _tag: "McpConnectionError", operation: "connect", reason: "TransportError" })

      const seen: Array<string | undefined> = []
      const server = yield* Effect.acquireRelease(
        Effect.callback<ReturnType<typeof createServer>>((resume) => {
          const http = createServer((req, res) => {
            seen.push(req.headers.authorization)
            res.writeHead(401, { "www-authenticate": "Bearer" }).end()
          })
          http.listen(0, "127.0.0.1", () => resume(Effect.succeed(http)))
        }),
        (http) => Effect.callback<void>((resume) => void http.close(() => resume(Effect.void)))
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
      const error = yield* Effect.flip(
        McpTools.connect(McpTransport.http({ url, headers: { authorization: Redacted.make("Bearer t0ken") } }))
      )
      expect(seen).toEqual(["Bearer t0ken"])
      expect(error.message).toBe(
        "MCP connect failed (HttpError): MCP HTTP status 401. Check the URL and the headers (authorization) the server expects"
      )
    }))
})

describe("what a stdio server inherits", () => {
  it.live("only PATH, HOME and a few like them from this process, plus the transport's env: no credentials", () =>
    Effect.gen(function*() {
      process.env.LOOPWORK_TEST_SECRET_KEY = "sk-do-not-leak"
      const mcp = yield* McpTools.connect(stdioTransport("env", { EXTRA_SETTING: "1" }))
      delete process.env.LOOPWORK_TEST_SECRET_KEY
      expect(mcp.tools.map((tool) => tool.name)).toEqual(["env_names", "pid"])
      const model = ScriptedModel.make([{ toolCalls: [{ name: "env_names", params: {} }] }, { text: "Done." }])
      const outcome = yield* Chain.run(Chain.make({ user: "Env?", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, mcp.layer]))
      const tool = outcome.chain.messages.find((message) => message.role === "tool")!
      const part = (tool.content as ReadonlyArray<{ readonly result: unknown }>)[0]!
      const names = JSON.parse(part.result as string) as ReadonlyArray<string>
      expect(names).toContain("EXTRA_SETTING")
      expect(names).toContain("PATH")
      expect(names).not.toContain("LOOPWORK_TEST_SECRET_KEY")
      for (const name of names) expect(["EXTRA_SETTING", "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "USER"]).toContain(name)
    }))
})

describe("the stdio server's lifetime", () => {
  it.live("the server process ends when the connection's scope closes", () =>
    Effect.gen(function*() {
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const mcp = yield* McpTools.connect(stdioTransport("env"))
        const model = ScriptedModel.make([{ toolCalls: [{ name: "pid", params: {} }] }, { text: "Done." }])
        const outcome = yield* Chain.run(Chain.make({ user: "Pid?", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
          .pipe(Effect.provide([model.layer, mcp.layer]))
        const tool = outcome.chain.messages.find((message) => message.role === "tool")!
        return Number((tool.content as ReadonlyArray<{ readonly result: unknown }>)[0]!.result)
      }))
      expect(pid).toBeGreaterThan(0)
      expect(pid).not.toBe(process.pid)
      expect(() => process.kill(pid, 0)).toThrow(/ESRCH/)
    }))
})

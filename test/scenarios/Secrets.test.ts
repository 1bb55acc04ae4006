/**
 * Secrets stay secret:
 * - `Privacy.redactSecrets`: a table of credential shapes, a table of text it
 *   must leave alone, the length bound, and linear time on 10 MB hostile input;
 * - errors: `ModelCallFailed` stores its description redacted, and every
 *   message the library composes (a failed tool, a custom step's error, the
 *   scripted model running out) reaches `RunError.message` and the
 *   `ModelCallFailed` / `RunFailed` events without the credential;
 * - printing a `RunError` (Node's inspect, `console.log`, `String`,
 *   `JSON.stringify`, Effect's formatter and loggers, `Cause.pretty`, and an
 *   uncaught failure in a real process) shows the tag, the redacted message
 *   and a summary of the chain, never its content or the provider's request.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { format, inspect, promisify } from "node:util"
import { Cause, Effect, Exit, Formatter, type Layer, Logger, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { forLog, redactUnbounded } from "../../src/internal/redact.ts"
import { spanText } from "../../src/internal/tracing.ts"
import { Chain, ChatModel, LoopError, Mode, Outcome, RunEvent } from "../../src/index.ts"
import * as Privacy from "../../src/Privacy.ts"

// -----------------------------------------------------------------------------
// redactSecrets
// -----------------------------------------------------------------------------

const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"

describe("Privacy.redactSecrets", () => {
  const secrets: ReadonlyArray<readonly [string, string, string]> = [
    ["Bearer token", `Invalid authorization header: Bearer ${key}`, "Invalid authorization header: Bearer [REDACTED]"],
    ["lower-case bearer", "bearer abc.DEF-123_xyz", "bearer [REDACTED]"],
    ["Authorization header", "Authorization: Basic dXNlcjpwYXNz\nAccept: */*", "Authorization: Basic [REDACTED]\nAccept: */*"],
    ["OpenAI key", `Incorrect API key provided: ${key}.`, "Incorrect API key provided: sk-[REDACTED]."],
    ["OpenAI legacy key", "key sk-AbCdEf0123456789AbCdEf0123456789", "key sk-[REDACTED]"],
    ["Anthropic key", "x sk-ant-api03-AbCdEf0123456789_AbCdEf-0123456789 y", "x sk-[REDACTED] y"],
    ["AWS access key id", "AKIAIOSFODNN7EXAMPLE is not authorized", "AKIA[REDACTED] is not authorized"],
    ["AWS session key id", "(ASIAY34FZKBOKMUTVV7A)", "(ASIA[REDACTED])"],
    ["Google API key", "key=AIzaSyA-1234567890abcdefghijklmnopqrstu", "key=AIza[REDACTED]"],
    ["GitHub token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789 and gho_ABCDEFGHIJKLMNOPQRST0123", "ghp_[REDACTED] and gho_[REDACTED]"],
    ["GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_[REDACTED]"],
    ["Slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "xoxb-[REDACTED]"],
    [
      "JSON Web Token",
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired",
      "jwt [REDACTED] expired"
    ],
    ["JSON api_key", `{"api_key": "abc123", "model": "gpt"}`, `{"api_key": "[REDACTED]", "model": "gpt"}`],
    ["JSON password and secret", `{"password":"hunter2","client_secret":"s3"}`, `{"password":"[REDACTED]","client_secret":"[REDACTED]"}`],
    ["single-quoted token", "{'access_token': 'ya29.a0Af'}", "{'access_token': '[REDACTED]'}"],
    ["escaped quote in a JSON value", String.raw`{"secret": "a\"b"}`, `{"secret": "[REDACTED]"}`],
    ["query string", "GET /v1/models?api_key=abc123&limit=5 failed", "GET /v1/models?api_key=[REDACTED]&limit=5 failed"],
    ["x-api-key header", "x-api-key: 9f8e7d6c5b4a", "x-api-key: [REDACTED]"],
    ["environment line", `OPENAI_API_KEY=${key} node app.js`, "OPENAI_API_KEY=[REDACTED] node app.js"],
    ["apikey", "apikey=abcdef", "apikey=[REDACTED]"],
    ["password in a URL", "connect postgres://admin:s3cr3t@db.internal:5432/app", "connect postgres://[REDACTED]@db.internal:5432/app"],
    [
      "PEM private key",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY----- loaded",
      "[REDACTED PRIVATE KEY] loaded"
    ]
  ]
  it("replaces each credential shape, keeping a recognisable prefix", () => {
    const table = secrets.map(([name, input]) => [name, Privacy.redactSecrets(input)])
    expect(table).toEqual(secrets.map(([name, , expected]) => [name, expected]))
  })

  it("changes nothing when applied again (messages built from redacted messages stay as they are)", () => {
    const once = secrets.map(([, input]) => Privacy.redactSecrets(input))
    expect(once.map(Privacy.redactSecrets)).toEqual(once)
  })

  const ordinary: ReadonlyArray<string> = [
    "Rate limit reached for gpt-4.1-mini in organization org-123 on tokens per min (TPM): Limit 30000",
    "Bearer authentication is required; the token is missing",
    "\"max_tokens\": 100, \"prompt_tokens\": 12, input_tokens=5, tokenizer: cl100k",
    "use sk-learn-compatible-estimators",
    "The model call failed (HTTP 429): Slow down",
    "Tool 'search' (call call_1) failed (handler): no results for 'effect'",
    "see https://platform.openai.com/account/api-keys",
    "{\"credentials\": {\"user\": \"x\"}}",
    ""
  ]
  it("leaves text without credentials as it is", () => {
    expect(ordinary.map(Privacy.redactSecrets)).toEqual(ordinary)
  })

  it("keeps 65,536 characters and says how many more there were", () => {
    const long = `${"x".repeat(70_000)} ${key}`
    const redacted = Privacy.redactSecrets(long)
    expect(redacted).toBe(`${"x".repeat(65_536)}… (${long.length - 65_536} more characters not shown)`)
    expect(Privacy.redactSecrets(`${key} ${"x".repeat(70_000)}`).startsWith("sk-[REDACTED] x")).toBe(true)
  })

  /** Inputs built to make a backtracking regex engine take quadratic or exponential time. */
  const hostile: ReadonlyArray<readonly [string, (size: number) => string]> = [
    ["one long word", (n) => "a".repeat(n)],
    ["sk- repeated", (n) => "sk-".repeat(n / 3)],
    ["key=value chains", (n) => "token=".repeat(n / 6)],
    ["Bearer repeated", (n) => "Bearer ".repeat(n / 7)],
    ["JWT-like segments", (n) => "eyJa.".repeat(n / 5)],
    ["an unterminated JWT", (n) => `eyJ${"a".repeat(n / 2)}.eyJ${"b".repeat(n / 2)}`],
    ["unterminated JSON values", (n) => "\"api_key\": \"".repeat(n / 12)],
    ["URL credential prefixes", (n) => "://a:".repeat(n / 5)],
    ["an unterminated URL password", (n) => `://${"u:".repeat(n / 2)}`],
    ["key-name prefixes", (n) => "api_".repeat(n / 4)],
    ["near-miss key names", (n) => "secret_x".repeat(n / 8)],
    ["private-key headers", (n) => "-----BEGIN PRIVATE KEY-----".repeat(n / 27)],
    ["an escaped quoted value", (n) => `token: "${"\\a".repeat(n / 2)}`]
  ]
  it("takes linear time: 10 MB of hostile input each, well under a second", () => {
    const slow: Array<string> = []
    for (const [name, make] of hostile) {
      const text = make(10_000_000)
      const started = performance.now()
      Privacy.redactSecrets(text)
      if (performance.now() - started > 500) slow.push(name)
    }
    expect(slow).toEqual([])
  })

  it("has no catastrophic backtracking even without the length bound: 2 MB of each hostile input in under a second", () => {
    const slow: Array<string> = []
    for (const [name, make] of hostile) {
      const text = make(2_000_000)
      const started = performance.now()
      redactUnbounded(text)
      const elapsed = performance.now() - started
      if (elapsed > 1000) slow.push(`${name}: ${Math.round(elapsed)} ms`)
    }
    expect(slow).toEqual([])
  })
})

describe("text for spans and log lines", () => {
  it("spanText: credentials redacted, at most 256 characters", () => {
    expect(spanText(`execute_tool ${key}`)).toBe("execute_tool sk-[REDACTED]")
    expect(spanText("x".repeat(1000))).toBe(`${"x".repeat(256)}…`)
    expect(spanText("execute_tool search")).toBe("execute_tool search")
  })

  it("forLog: credentials redacted; with content omitted, only the length", () => {
    expect(forLog(`answer: token=${key}`, false)).toBe("answer: token=[REDACTED]")
    expect(forLog("Jane Roe has 1,204.50 EUR.", true)).toBe("(26 characters, omitted)")
  })
})

// -----------------------------------------------------------------------------
// Errors and events
// -----------------------------------------------------------------------------

/** The provider's error body, echoing the credential it was sent. */
const echoed = `Incorrect API key provided. Your request had header 'Authorization: Bearer ${key}'`

const failing = <A, R>(effect: Effect.Effect<A, LoopError.RunError, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) throw new Error("expected the run to fail")
    const error = Cause.squash(exit.cause) as LoopError.RunError
    return { error, cause: exit.cause }
  })

/** Every event of a streamed run, and its RunError. */
const streamed = <R>(stream: Stream.Stream<RunEvent.RunEvent, LoopError.RunError, R>) =>
  Effect.gen(function*() {
    const events: Array<RunEvent.RunEvent> = []
    const { error } = yield* failing(Stream.runForEach(stream, (event) => Effect.sync(() => events.push(event))))
    return { events, error }
  })

const messagesOf = (events: ReadonlyArray<RunEvent.RunEvent>) =>
  events.flatMap((event) => event._tag === "ModelCallFailed" || event._tag === "RunFailed" ? [`${event._tag}: ${event.message}`] : [])

class VaultError extends Schema.TaggedError<VaultError>()("VaultError", { detail: Schema.String }) {
  override get message(): string {
    return `The vault refused: ${this.detail}`
  }
}

/** Every event of a run whose model calls `fetch` once, then answers. */
const fetchOnce = <Tools extends Record<string, Tool.Any>, R>(toolkit: Toolkit.Toolkit<Tools>, handlers: Layer.Layer<R>) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: {} }] }, { text: "done" }])
    const events: Array<RunEvent.RunEvent> = []
    yield* Stream.runForEach(
      Chain.stream(Chain.make({ user: "Fetch it", toolkit }), { mode: Mode.whileNeedsResponse }),
      (event) => Effect.sync(() => void events.push(event))
    ).pipe(Effect.provide([model.layer, handlers]))
    return events
  })

describe("errors and events carry no credentials", () => {
  it("ModelCallFailed stores its description redacted, whoever builds it", () => {
    const error = new LoopError.ModelCallFailed({ description: echoed, cause: undefined, status: 401, retryable: false })
    expect(error.description).toBe("Incorrect API key provided. Your request had header 'Authorization: Bearer [REDACTED]'")
    expect(error.message).toBe(
      "The model call failed (HTTP 401): Incorrect API key provided. Your request had header 'Authorization: Bearer [REDACTED]'"
    )
    expect([error.status, error.retryable]).toEqual([401, false])
  })

  it.effect("a provider error echoing the key: RunError.message and the ModelCallFailed and RunFailed events are redacted", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: echoed }])
      const { error, events } = yield* streamed(Chain.stream(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse })).pipe(
        Effect.provide(model.layer)
      )
      const expected = "The model call failed: Incorrect API key provided. Your request had header 'Authorization: Bearer [REDACTED]'"
      expect(error.message).toBe(expected)
      expect(messagesOf(events)).toEqual([`ModelCallFailed: ${expected}`, `RunFailed: ${expected}`])
      expect(JSON.stringify(events)).not.toContain(key)
    }))

  it.effect("a tool failing with a credential in its error, under onToolFailure \"fail\": the RunError and RunFailed are redacted", () =>
    Effect.gen(function*() {
      const Fetch = Tool.make("fetch", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.String, failure: Schema.String })
      const toolkit = Toolkit.make(Fetch)
      const handlers = toolkit.toLayer({ fetch: () => Effect.fail(`403 for request with x-api-key: ${key}`) })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "fetch", params: { url: "https://example.test" } }] }])
      const { error, events } = yield* streamed(
        Chain.stream(Chain.make({ user: "Fetch it", toolkit }), { mode: Mode.whileNeedsResponse, onToolFailure: { handler: "fail" } })
      ).pipe(Effect.provide([model.layer, handlers]))
      expect(error.reason._tag).toBe("ToolCallFailed")
      expect(error.message).toContain("403 for request with x-api-key: [REDACTED]")
      expect(messagesOf(events)).toEqual([`RunFailed: ${error.message}`])
      expect(JSON.stringify(messagesOf(events))).not.toContain(key)
    }))

  it.effect("a tool that dies quoting a credential: the tool message the model reads and the ToolCallFinished event are redacted", () =>
    Effect.gen(function*() {
      const Fetch = Tool.make("fetch", { success: Schema.String })
      const toolkit = Toolkit.make(Fetch)
      const handlers = toolkit.toLayer({ fetch: () => Effect.die(new Error(`request failed with header Authorization: Bearer ${key}`)) })
      const events = yield* fetchOnce(toolkit, handlers)
      const expected = "Tool 'fetch' failed unexpectedly: request failed with header Authorization: Bearer [REDACTED]"
      const finished = events.flatMap((event) => event._tag === "ToolCallFinished" ? [[event.status, event.result]] : [])
      expect(finished).toEqual([["failed", expected]])
      const last = events[events.length - 1]
      if (last._tag !== "RunFinished") return expect.unreachable("the run finishes")
      expect(JSON.stringify(last.chain)).toContain(expected)
      expect(JSON.stringify(events)).not.toContain(key)
    }))

  it.effect("a tool result its success schema refuses, quoting a credential in the schema's message: the events and the chain are redacted", () =>
    Effect.gen(function*() {
      // The schema's message points at the key it refused, and the key is the credential.
      const Fetch = Tool.make("fetch", { success: Schema.Record(Schema.String, Schema.Number) })
      const toolkit = Toolkit.make(Fetch)
      const handlers = toolkit.toLayer({ fetch: () => Effect.succeed(JSON.parse(JSON.stringify({ [key]: "high" }))) })
      const events = yield* fetchOnce(toolkit, handlers)
      const finished = events.flatMap((event) => event._tag === "ToolCallFinished" ? [event.result] : [])
      expect(finished).toHaveLength(1)
      expect(String(finished[0])).toContain("does not match its success schema")
      expect(String(finished[0])).toContain("[REDACTED]")
      expect(JSON.stringify(events)).not.toContain(key)
    }))

  it.effect("a custom mode's own error: RunError.message and the RunFailed event are redacted", () =>
    Effect.gen(function*() {
      const mode: Mode.Mode = (chain) => Effect.succeed(new Outcome.Error(chain, new VaultError({ detail: `token=${key}` })))
      const { error, events } = yield* streamed(Chain.stream(Chain.make({ user: "Hi" }), { mode })).pipe(
        Effect.provide(ChatModel.scripted([]).layer)
      )
      expect(error.message).toBe("The vault refused: token=[REDACTED]")
      expect(messagesOf(events)).toEqual(["RunFailed: The vault refused: token=[REDACTED]"])
    }))

  it.effect("emitTo redacts the message of a ModelCallFailed or RunFailed event it is handed", () =>
    Effect.gen(function*() {
      const seen: Array<RunEvent.RunEvent> = []
      const observer: RunEvent.Observer = { emit: (event) => Effect.sync(() => seen.push(event)), streaming: false }
      yield* RunEvent.emitTo(observer, { _tag: "ModelCallFailed", call: 1, attempt: 1, error: "X", message: echoed, durationMillis: 3 })
      yield* RunEvent.emitTo(observer, { _tag: "RunFailed", error: "X", message: `Bearer ${key}`, chain: null })
      expect(messagesOf(seen)).toEqual([
        "ModelCallFailed: Incorrect API key provided. Your request had header 'Authorization: Bearer [REDACTED]'",
        "RunFailed: Bearer [REDACTED]"
      ])
    }))

  it.effect("the scripted model running out does not echo a credential from the last message", () =>
    Effect.gen(function*() {
      const { error } = yield* failing(
        Chain.run(Chain.make({ user: `my key is ${key}` }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide(ChatModel.scripted([]).layer)
        )
      )
      expect(error.message).toContain("(last message: user: my key is sk-[REDACTED])")
    }))
})

// -----------------------------------------------------------------------------
// Printing a RunError
// -----------------------------------------------------------------------------

/** What the user said, and what the provider's request body (kept in the error's cause) holds. */
const diary = "my secret diary: I moved to 12 Elm Street"

/**
 * A run whose model fails like a provider: the description echoes the key,
 * the cause holds the request body (with the conversation) and the response.
 */
const failedRun = failing(
  Chain.run(Chain.make({ system: "You are a diary.", user: diary }), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide(
      ChatModel.scripted([
        () =>
          Effect.fail(
            new LoopError.ModelCallFailed({
              description: echoed,
              status: 401,
              retryable: false,
              cause: {
                message: echoed,
                requestBodyValues: { messages: [{ role: "user", content: diary }] },
                responseBody: JSON.stringify({ error: { message: echoed } })
              }
            })
          )
      ]).layer
    )
  )
)

const redactedMessage =
  "The model call failed (HTTP 401): Incorrect API key provided. Your request had header 'Authorization: Bearer [REDACTED]'"
const summary = "(reason: ModelCallFailed; chain: 2 messages, runCount 0)"

/** What every printout must and must not show. */
const expectSafe = (printed: string) => {
  expect(printed).toContain("RunError")
  expect(printed).toContain(redactedMessage)
  expect(printed).not.toContain(key)
  expect(printed).not.toContain("12 Elm Street")
  expect(printed).not.toContain("You are a diary")
}

describe("printing a RunError shows its tag, its redacted message and a summary of the chain", () => {
  it.effect("Node's inspect and console.log", () =>
    Effect.gen(function*() {
      const { error } = yield* failedRun
      for (const printed of [inspect(error), inspect(error, { depth: 10, showHidden: false }), format("%o", error), format(error)]) {
        expectSafe(printed)
        expect(printed.split("\n")[0]).toBe(`RunError: ${redactedMessage} ${summary}`)
      }
    }))

  it.effect("String and toString", () =>
    Effect.gen(function*() {
      const { error } = yield* failedRun
      expect(String(error)).toBe(`RunError: ${redactedMessage} ${summary}`)
      expect(`${error}`).toBe(String(error))
    }))

  it.effect("JSON.stringify: the tag, the message, the reason's tag and the chain's size", () =>
    Effect.gen(function*() {
      const { error } = yield* failedRun
      expect(JSON.parse(JSON.stringify(error))).toEqual({
        _tag: "RunError",
        message: redactedMessage,
        reason: { _tag: "ModelCallFailed", message: redactedMessage },
        chain: { messages: 2, runCount: 0 }
      })
    }))

  it.effect("the stack, Cause.pretty and Cause.prettyErrors", () =>
    Effect.gen(function*() {
      const { error, cause } = yield* failedRun
      expectSafe(error.stack ?? "")
      expect(error.stack?.split("\n")[0]).toBe(`RunError: ${redactedMessage} ${summary}`)
      expectSafe(Cause.pretty(cause))
      // the copies prettyErrors makes take the error's enumerable fields: neither the chain nor the reason
      for (const pretty of Cause.prettyErrors(cause, { includeCauseInStack: true })) expectSafe(inspect(pretty))
    }))

  it.effect("Effect's formatter and loggers", () =>
    Effect.gen(function*() {
      const { error, cause } = yield* failedRun
      expectSafe(Formatter.format(error))
      expectSafe(Formatter.formatJson(error))
      const lines: Array<string> = []
      const capture = <Output>(logger: Logger.Logger<unknown, Output>) =>
        Logger.map(logger, (line) => {
          lines.push(typeof line === "string" ? line : JSON.stringify(line))
        })
      yield* Effect.logError("run failed", error).pipe(
        Effect.andThen(Effect.logError(cause)),
        Effect.provide(Logger.layer([capture(Logger.formatLogFmt), capture(Logger.formatJson), capture(Logger.formatSimple)]))
      )
      expect(lines).toHaveLength(6)
      for (const line of lines) {
        expect(line).not.toContain(key)
        expect(line).not.toContain("12 Elm Street")
      }
    }))

  it.effect("the reason, a ModelCallFailed, prints without its cause (the provider's request and response)", () =>
    Effect.gen(function*() {
      const { error } = yield* failedRun
      const reason = error.reason as LoopError.ModelCallFailed
      for (const printed of [inspect(reason), format(reason), String(reason), JSON.stringify(reason), Formatter.format(reason)]) {
        expect(printed).toContain(redactedMessage)
        expect(printed).not.toContain(key)
        expect(printed).not.toContain("12 Elm Street")
      }
      expect(JSON.parse(JSON.stringify(reason))).toEqual({ _tag: "ModelCallFailed", message: redactedMessage, status: 401, retryable: false })
      // the cause is still there to read
      expect((reason.cause as { readonly requestBodyValues: unknown }).requestBodyValues).toBeDefined()
      expect(Object.keys(reason)).not.toContain("cause")
    }))

  it.effect("the chain and the reason are still there to read, but not enumerable", () =>
    Effect.gen(function*() {
      const { error } = yield* failedRun
      expect(error.chain.messages).toHaveLength(2)
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(Object.keys(error)).toEqual(["_tag"])
      expect(Object.keys({ ...error })).toEqual(["_tag"])
    }))

  it("an uncaught failure: what Node prints when a run's promise rejects unhandled", async () => {
    const program = [
      `import { Effect } from "effect"`,
      `import { Chain, ChatModel, LoopError, Mode } from "./src/index.ts"`,
      `const failure = new LoopError.ModelCallFailed({ description: ${JSON.stringify(echoed)}, status: 401, retryable: false,`,
      `  cause: { requestBodyValues: { messages: [{ role: "user", content: ${JSON.stringify(diary)} }] } } })`,
      `const model = ChatModel.scripted([() => Effect.fail(failure)])`,
      `const chain = Chain.make({ system: "You are a diary.", user: ${JSON.stringify(diary)} })`,
      `await Effect.runPromise(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer)))`
    ].join("\n")
    const run = promisify(execFile)
    const failed = await run(process.execPath, ["--conditions=loopwork-source", "--input-type=module", "-e", program], {
      cwd: process.cwd()
    }).then(() => undefined, (error: { readonly code: number; readonly stderr: string }) => error)
    expect(failed?.code).toBe(1)
    const stderr = failed?.stderr ?? ""
    expectSafe(stderr)
    expect(stderr).toContain(`RunError: ${redactedMessage} ${summary}`)
  })
})

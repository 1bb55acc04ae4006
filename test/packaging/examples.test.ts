import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { Prompt } from "effect/ai"
import { Chain, type ChatModel } from "../../src/index.ts"
import { McpError } from "../../src/mcp/index.ts"
import * as CustomMode from "../../examples/custom-mode.ts"
import * as HumanInTheLoop from "../../examples/human-in-the-loop.ts"
import * as Mcp from "../../examples/mcp.ts"
import * as ResearchTeam from "../../examples/research-team.ts"
import * as Quickstart from "../../examples/quickstart.ts"
import * as OpenAiServer from "../support/openaiServer.ts"

const run = promisify(execFile)

describe("examples", () => {
  it.effect("quickstart runs two weather calls and answers", () =>
    Effect.gen(function*() {
      const outcome = yield* Quickstart.program
      expect(outcome._tag).toBe("Ok")
      expect(outcome.chain.runCount).toBe(2)
      expect(outcome.chain.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(outcome.chain.lastToolResults.map((r) => r.result)).toEqual([
        { city: "Oslo", celsius: 4, sky: "clear" },
        { city: "Lisbon", celsius: 21, sky: "clear" }
      ])
      expect(Chain.text(outcome.chain)).toContain("I read 2 tool results")
    }))

  it.effect("custom-mode audits every model call", () =>
    Effect.gen(function*() {
      CustomMode.auditLog.length = 0
      const outcome = yield* CustomMode.program
      expect(outcome._tag).toBe("Ok")
      expect(Chain.text(outcome.chain)).toBe("Order A-17 has shipped.")
      expect(CustomMode.auditLog).toEqual([
        "model call #1 completed (tool calls: lookup_order)",
        "model call #2 completed (tool calls: none)"
      ])
    }))

  it.effect("human-in-the-loop pauses for approval, then for the external call, then returns the receipt directly", () =>
    Effect.gen(function*() {
      HumanInTheLoop.log.length = 0
      const outcome = yield* HumanInTheLoop.program
      expect(HumanInTheLoop.log).toEqual([
        "Pause (ApprovalPending): transfer({\"to\":\"Bob\",\"amount\":300})",
        "Pause (ExternalPending): open_statement({})",
        "Ok (direct-return): \"Receipt T-1: 250 EUR to Bob, settled.\""
      ])
      expect(outcome.chain.runCount).toBe(2)
      // The transcript shows the edited amount, and the transfer ran with it.
      const results = outcome.chain.messages.flatMap((m) => m.role === "tool" ? m.content : [])
      expect(results.map((part) => part.type === "tool-result" ? part.result : undefined)).toEqual([
        1250,
        "sent 250 EUR to Bob, reference T-1",
        "Receipt T-1: 250 EUR to Bob, settled."
      ])
      expect(JSON.stringify(outcome.chain.messages[1])).toContain("\"amount\":250")
    }))

  it.effect("human-in-the-loop signs with a key no one else can read: without CHAIN_SIGNING_KEY, 32 random bytes of this process", () =>
    Effect.gen(function*() {
      const key = Redacted.value(HumanInTheLoop.signingKey)
      if (process.env.CHAIN_SIGNING_KEY !== undefined) return expect(key).toBe(process.env.CHAIN_SIGNING_KEY)
      expect(key).toBeInstanceOf(Uint8Array)
      expect(key.length).toBe(32)
      // A chain the example signs is refused under the public key its source once fell back to.
      const chain = Chain.make({ user: "Send Bob 250 EUR", toolkit: HumanInTheLoop.tools })
      const document = yield* Chain.encode(chain, { signingKey: HumanInTheLoop.signingKey })
      const publicKey = Redacted.make("example key: use 32+ random bytes in production")
      const forged = yield* Effect.flip(Chain.decode(document, { toolkit: HumanInTheLoop.tools, signingKey: publicKey }))
      expect(forged._tag).toBe("ChainCodecError")
    }))

  it.effect("research-team runs sequentially, then under a manager with constraints, rendering progress from the stream", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const print = (text: string) => lines.push(text)
      const program = Effect.gen(function*() {
        const sequential = yield* ResearchTeam.watch(yield* ResearchTeam.sequentialTeam, print)
        const hierarchical = yield* ResearchTeam.watch(yield* ResearchTeam.hierarchicalTeam, print)
        return [sequential, hierarchical] as const
      }).pipe(Effect.provide([ResearchTeam.model.layer, ResearchTeam.ToolHandlers]))
      const fiber = yield* Effect.forkChild(program)
      yield* TestClock.adjust("1 minute")
      const [sequential, hierarchical] = yield* Fiber.join(fiber)
      expect(sequential.taskOutputs.map((o) => o.agentRole)).toEqual(["Researcher", "Writer", "Reviewer"])
      expect(sequential.taskOutputs[2].parsedOutput).toEqual({ approved: true, comments: "Accurate and clear." })
      expect(sequential.totalToolCalls).toBe(1)
      expect(hierarchical.taskOutputs.map((o) => o.agentRole)).toEqual(["Researcher", "Writer", "Reviewer", "Manager"])
      expect(hierarchical.raw).toContain("the reviewer approved")
      // numbered delegations keep each task's settings: the reviewer's verdict is decoded here too
      expect(hierarchical.taskOutputs[2].parsedOutput).toEqual({ approved: true, comments: "Accurate and clear." })
      // the manager used case-variant roles ("researcher", "REVIEWER"): the same agents for every guard
      expect(hierarchical.delegations.map((d) => [d.request.agentRole, d.response.workerRole, d.response.status])).toEqual([
        ["researcher", "Researcher", "SUCCESS"],
        ["Writer", "Writer", "SUCCESS"],
        ["REVIEWER", "Reviewer", "SUCCESS"]
      ])
      expect(lines).toContain("→ Manager delegates to Researcher")
      expect(lines.filter((l) => l.startsWith("✓ "))).toHaveLength(7)
      // the sequential run, line by line: a line per model call (time, tokens) and tool call, then the output
      const first = lines.slice(0, lines.findIndex((l) => l.startsWith("summary:")) + 1)
      expect(first).toEqual([
        "▶ Researcher · Research Effect",
        expect.stringMatching(/^ {2}◆ Researcher model call 1 {2}0\.15s {2}\d+→\d+ tokens {2}→ search_notes$/),
        "  ⚙ Researcher search_notes  0.00s  succeeded",
        expect.stringMatching(/^ {2}◆ Researcher model call 2 {2}0\.15s {2}\d+→\d+ tokens {2}"Findings: Effect makes/),
        "✓ Researcher done in 0.30s",
        "▶ Writer · Write about Effect for backend engineers",
        expect.stringMatching(/^ {2}◆ Writer model call 1 {2}0\.15s {2}\d+→\d+ tokens {2}"Effect turns errors/),
        "✓ Writer done in 0.15s",
        "▶ Reviewer · Review the text about Effect",
        expect.stringMatching(/^ {2}◆ Reviewer model call 1 {2}0\.15s/),
        "✓ Reviewer done in 0.15s",
        "final: {\"approved\":true,\"comments\":\"Accurate and clear.\"}",
        expect.stringMatching(/^summary: 3 task outputs · 4 model calls · 1 tool calls · \d+→\d+ tokens · 0\.60s$/)
      ])
    }))

  it("npm run demo runs the research team", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=loopwork-source", "examples/research-team.ts"], { cwd: process.cwd() })
    expect(stdout).toContain("== SEQUENTIAL ==")
    expect(stdout).toContain("  ⚙ Researcher search_notes")
    expect(stdout).toMatch(/summary: 3 task outputs · 4 model calls · 1 tool calls · \d+→\d+ tokens/)
    expect(stdout).toContain("final: {\"approved\":true,\"comments\":\"Accurate and clear.\"}")
    expect(stdout).toContain("== HIERARCHICAL (manager with constraints) ==")
    expect(stdout).toContain("3 delegation(s): Researcher SUCCESS, Writer SUCCESS, Reviewer SUCCESS")
  })

  it("npm run demo:durable finishes a run whose runners were killed, every side effect once", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=loopwork-source", "--no-warnings", "examples/durable-refund.ts"], {
      cwd: process.cwd()
    })
    expect(stdout.match(/the runner process was killed \(SIGKILL\)/g)).toHaveLength(2)
    expect(stdout).toContain("waiting for approval: email_customer")
    expect(stdout).toContain("finished: Order A-17 was refunded (40 EUR) and the customer was told.")
    expect(stdout.slice(stdout.indexOf("side effects")).trim().split("\n").slice(1).map((l) => l.trim())).toEqual([
      "looked up A-17",
      "refunded 40 on A-17",
      "emailed \"Refunded 40 EUR.\""
    ])
  })

  it("npm run demo runs on a real model through the AI SDK bridge when OPENAI_API_KEY is set", async () => {
    // The local OpenAI-protocol server answers as the scripted model would, from the conversation it receives.
    const answer: OpenAiServer.ServerTurn = (request) => {
      const messages = (request.body as { readonly messages: ReadonlyArray<Prompt.Message> }).messages
      const scripted = ResearchTeam.reply({ prompt: { content: messages } } as unknown as ChatModel.GenerateRequest)
      return {
        ...(scripted.text === undefined ? {} : { text: scripted.text }),
        toolCalls: (scripted.toolCalls ?? []).map((call) => ({ name: call.name, arguments: call.params ?? {} })),
        usage: { input: 100, output: 10 }
      }
    }
    const server = await OpenAiServer.start(Array.from({ length: 12 }, () => answer))
    try {
      const { stdout } = await run(process.execPath, ["--conditions=loopwork-source", "examples/research-team.ts"], {
        cwd: process.cwd(),
        env: { ...process.env, OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseURL, LOOPWORK_MODEL: "gpt-demo" }
      })
      expect(stdout).toMatch(/ {2}◆ Researcher model call 1 {2}\d+\.\d\ds {2}100→10 tokens {2}→ search_notes/)
      expect(stdout).toContain("final: {\"approved\":true,\"comments\":\"Accurate and clear.\"}")
      expect(stdout).toContain("summary: 3 task outputs · 4 model calls · 1 tool calls · 400→40 tokens")
      expect(stdout).toContain("3 delegation(s): Researcher SUCCESS, Writer SUCCESS, Reviewer SUCCESS")
      // every request went over HTTP to the chat completions endpoint, with the model and the tools
      expect(server.requests).toHaveLength(12)
      expect(server.requests.every((r) => r.path === "/v1/chat/completions" && r.headers["authorization"] === "Bearer test-key")).toBe(true)
      const first = server.requests[0].body as { readonly model: string; readonly stream: boolean; readonly tools: ReadonlyArray<unknown> }
      expect(first.model).toBe("gpt-demo")
      expect(first.stream).toBe(true) // the demo watches the stream, so model calls stream
      expect(first.tools).toEqual([{
        type: "function",
        function: {
          name: "search_notes",
          description: "Search the team's research notes",
          parameters: {
            type: "object",
            properties: { query: { type: "string" } },
            required: ["query"],
            additionalProperties: true
          }
        }
      }])
    } finally {
      await server.close()
    }
  })

  it.live("mcp connects to the warehouse server over stdio; its isError answer reaches the model as a failed result", () =>
    Effect.gen(function*() {
      const { server, tools, outcome } = yield* Mcp.program
      expect(server).toEqual({ name: "warehouse", version: "1.0.0" })
      expect(tools).toEqual(["stock", "price"])
      expect(outcome._tag).toBe("Ok")
      expect(outcome.chain.runCount).toBe(2)
      const unknown = "No item named 'samovar'. Known items: teapot, kettle, mug."
      const [found, failed] = outcome.chain.lastToolResults
      expect([found.name, found.isFailure, found.result]).toEqual(["stock", false, "12 units of teapot in stock"])
      expect([failed.name, failed.isFailure, failed.failureOrigin]).toEqual(["stock", true, "handler"])
      expect(failed.result).toBeInstanceOf(McpError.McpToolFailed)
      expect(failed.result).toMatchObject({ tool: "stock", text: unknown })
      expect(Chain.text(outcome.chain)).toBe(
        `Teapots: 12 units of teapot in stock. Samovars: the warehouse could not tell me ("${unknown}").`
      )
    }))

  it("examples/mcp.ts prints the run: the server's tools, the calls, the failed result", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=loopwork-source", "examples/mcp.ts"], { cwd: process.cwd() })
    expect(stdout).toContain("server:    warehouse 1.0.0 · tools: stock, price")
    expect(stdout).toContain("outcome:   Ok (done) after 2 model calls")
    expect(stdout).toContain("→ stock({\"item\":\"samovar\"})")
    expect(stdout).toContain("← stock: \"12 units of teapot in stock\"")
    expect(stdout).toContain("✗ stock: {\"_tag\":\"McpToolFailed\",\"tool\":\"stock\",\"text\":\"No item named 'samovar'.")
    expect(stdout).toContain("Samovars: the warehouse could not tell me")
  })

  it("the quick start prints the run", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=loopwork-source", "examples/quickstart.ts"], { cwd: process.cwd() })
    expect(stdout).toContain("outcome:      Ok (done)")
    expect(stdout).toContain("model calls:  2")
    expect(stdout).toContain("→ get_weather({\"city\":\"Oslo\"})")
    expect(stdout).toContain("answer:       Oslo is 4°C and Lisbon 21°C")
  })
})

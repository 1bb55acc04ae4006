/**
 * A server that accepts a tools/call and never answers (or answers with an id it was never asked,
 * which the stdio transport drops) hung the run forever when neither `callTimeout` nor the run's
 * `toolTimeout` was given (helper-43). A call now waits at most 5 minutes by default, under TestClock
 * to the second; the test waits in real time only for the server to receive the call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools, McpTransport } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { obj, serveRaw } from "./support/scriptedServer.ts"

const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

const hangingCall = (options?: McpTools.ConnectOptions) =>
  Effect.gen(function*() {
    const server = yield* serveRaw({ tools: () => [{ name: "slow", inputSchema: obj }], on: (m) => m.method === "tools/call" ? "hang" : undefined })
    const mcp = yield* McpTools.connect(McpTransport.http({ url: server.url }), options)
    const model = ScriptedModel.make([{ toolCalls: [{ name: "slow", params: {} }] }, { text: "done" }])
    const fiber = yield* Chain.run(Chain.make({ user: "go", toolkit: mcp.toolkit }), { mode: Mode.whileNeedsResponse })
      .pipe(Effect.provide([model.layer, mcp.layer]), Effect.forkChild)
    for (let i = 0; i < 100 && !server.requests.some((m) => m.method === "tools/call"); i++) yield* realSleep(20)
    const settled = () => Effect.gen(function*() {
      for (let i = 0; i < 50 && fiber.pollUnsafe() === undefined; i++) yield* realSleep(20)
      return fiber.pollUnsafe() !== undefined
    })
    yield* TestClock.adjust("299 seconds")
    const early = yield* settled()
    yield* TestClock.adjust("1 second")
    const done = yield* settled()
    if (!done) yield* Fiber.interrupt(fiber)
    return { early, done, line: requestTranscripts(model)[1]?.at(-1) }
  })

describe("a server that never answers a call", () => {
  it.effect("without callTimeout or toolTimeout, the call fails at exactly 5 minutes and the model is told", () =>
    Effect.gen(function*() {
      const { done, early, line } = yield* hangingCall()
      expect(early).toBe(false)
      expect(done).toBe(true)
      expect(line).toContain("the server did not answer within 5 minutes")
    }).pipe(Effect.scoped))
})

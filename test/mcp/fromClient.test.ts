/**
 * `McpTools.fromClient`: an effect `McpClient` the user built (here with
 * `McpClient.layerHttp` against the real MCP server on 127.0.0.1) becomes
 * the same snapshot `connect` gives — toolkit, handler layer, `refresh` —
 * and a chain runs on it. Anything that is not a client, and wrong options,
 * are refused with `InvalidInput`, never a throw.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { McpClient, McpProtocol } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import { Chain, Mode } from "../../src/index.ts"
import { McpTools } from "../../src/mcp/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { httpServer } from "./support/harness.ts"

/** A client of the user's own making, over Streamable HTTP. */
const userClient = (url: string) =>
  McpClient.layerHttp({ name: "my-app", version: "1.0.0", url, protocol: McpProtocol.v2025_11_25 }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

describe("McpTools.fromClient", () => {
  it.live("a client built with McpClient.layerHttp: its tools run in a chain, failures included", () =>
    Effect.gen(function*() {
      const server = yield* httpServer("plain")
      // The client lives as long as the test's scope, as a layer of the user's service would.
      const client = yield* Effect.map(Layer.build(userClient(server.url)), Context.get(McpClient.McpClient))
      const tools = yield* McpTools.fromClient(client)
      expect(tools.server).toEqual({ name: "calculator", version: "1.0.0" })
      expect(tools.tools.map((tool) => tool.name)).toEqual(["add", "divide", "explode", "crash", "wait", "unlock"])
      const model = ScriptedModel.make([
        { toolCalls: [{ name: "add", params: { a: 2, b: 3 } }, { name: "divide", params: { a: 1, b: 0 } }] },
        { text: "5" }
      ])
      const outcome = yield* Chain.run(Chain.make({ user: "Compute.", toolkit: tools.toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, tools.layer]))
      expect(outcome._tag).toBe("Ok")
      expect(requestTranscripts(model)[1]?.at(-1)).toBe(
        "tool: ok add#call_1_1 \"5\" | failed divide#call_1_2 {\"_tag\":\"McpToolFailed\",\"tool\":\"divide\",\"text\":\"Cannot divide by zero\"}"
      )
    }))

  it.live("options apply as for connect: a prefix names the tools, refresh lists them again", () =>
    Effect.gen(function*() {
      const server = yield* httpServer("plain")
      const client = yield* Effect.map(Layer.build(userClient(server.url)), Context.get(McpClient.McpClient))
      const tools = yield* McpTools.fromClient(client, { prefix: "calc_" })
      expect(tools.tools.map((tool) => tool.name)).toContain("calc_add")
      // The server adds a tool when unlocked: refresh must read the list again over the user's client.
      const model = ScriptedModel.make([{ toolCalls: [{ name: "calc_unlock", params: {} }] }, { text: "Unlocked." }])
      yield* Chain.run(Chain.make({ user: "Unlock.", toolkit: tools.toolkit }), { mode: Mode.whileNeedsResponse })
        .pipe(Effect.provide([model.layer, tools.layer]))
      const again = yield* tools.refresh
      expect(again.tools.map((tool) => tool.name)).toEqual([...tools.tools.map((tool) => tool.name), "calc_multiply"])
      expect(server.methods.filter((method) => method === "tools/list")).toHaveLength(2)
    }))

  it.live("effect's own McpClient.toolkit (handlers inside) is refused by Chain.make, pointing at loopwork/mcp", () =>
    Effect.gen(function*() {
      const server = yield* httpServer("plain")
      const client = yield* Effect.map(Layer.build(userClient(server.url)), Context.get(McpClient.McpClient))
      const withHandlers = yield* McpClient.toolkit(client)
      // The types refuse it too; from JavaScript the run fails with a typed InvalidInput before any model
      // call, instead of a run where every call "has no handler" and still ends Ok.
      const model = ScriptedModel.make([{ toolCalls: [{ name: "add", params: { a: 2, b: 3 } }] }, { text: "5" }])
      // @ts-expect-error: a toolkit with its handlers inside is not a chain's toolkit
      Chain.make({ user: "Compute.", toolkit: withHandlers })
      const chain = Chain.make({ user: "Compute.", toolkit: withHandlers as never })
      const error = yield* Effect.flip(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer)))
      expect(error.reason).toMatchObject({ _tag: "InvalidInput", field: "toolkit" })
      expect(error.message).toContain("McpTools.connect or McpTools.fromClient from loopwork/mcp")
      expect(model.calls).toBe(0)
    }))

  it.effect.each([
    ["undefined", undefined],
    ["a number", 42],
    ["a plain object with listTools", { listTools: () => Effect.succeed([]) }],
    ["__proto__ record", JSON.parse("{\"__proto__\": {\"listTools\": 1}}")],
    ["a forged brand without the methods", JSON.parse("{\"~effect/ai/McpClient\": 1}")]
  ])("refuses %s as the client with InvalidInput", ([, client]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpTools.fromClient(client as McpClient.McpClient))
      expect(error._tag).toBe("InvalidInput")
      expect(error.message).toMatch(/^Invalid client: must be an effect McpClient/)
    }))

  it.live("refuses a misspelt option before reading the tool list", () =>
    Effect.gen(function*() {
      const server = yield* httpServer("plain")
      const error = yield* Effect.flatMap(McpClient.McpClient, (client) =>
        Effect.flip(McpTools.fromClient(client, { prefx: "a_" } as McpTools.ConnectOptions))).pipe(Effect.provide(userClient(server.url)))
      expect(error._tag).toBe("InvalidInput")
      expect(error.message).toBe("Invalid McpTools.fromClient options[\"prefx\"]: is not an option (got \"a_\")")
    }))
})

/**
 * MCP tools: an MCP server's tools in a chain, with no API key.
 *
 * Run it with `node --conditions=loopwork-source examples/mcp.ts`.
 *
 * It starts examples/mcp-server.ts (a small MCP server made with
 * `@modelcontextprotocol/sdk`) as a child process, connects to it over stdio
 * with `McpTools.connect`, and runs a chain on a scripted model. The model
 * asks the server's `stock` tool about two items. The server does not carry
 * the second one and answers with `isError: true`. That call reaches the
 * model as a failed tool result (`McpToolFailed`, with the server's text);
 * the run goes on, and the model answers with what it learned.
 *
 * To use a real model, replace `model.layer` with `ChatModel.fromAiSdk(...)`
 * from loopwork/ai-sdk.
 */
import { Effect } from "effect"
import type { Prompt } from "effect/ai"
import { fileURLToPath } from "node:url"
import { Chain, Mode } from "loopwork"
import { McpTools, McpTransport } from "loopwork/mcp"
import { ScriptedModel } from "loopwork/testing"

// 1. Where the server is: a command started as a child process, spoken to over stdio.
//    (`McpTransport.http({ url })` reaches a server over Streamable HTTP instead.)
const warehouse = McpTransport.stdio({
  command: process.execPath,
  args: ["--no-warnings", fileURLToPath(new URL("./mcp-server.ts", import.meta.url))]
})

/** A tool result as the model reads it: the result's text, or the text of the failure the server reported. */
interface Seen {
  readonly failed: boolean
  readonly text: string
}

/** The tool results in the last message of the conversation. */
const toolResults = (prompt: Prompt.Prompt): ReadonlyArray<Seen> => {
  const last = prompt.content.at(-1)
  if (last?.role !== "tool") return []
  return last.content.flatMap((part): ReadonlyArray<Seen> => {
    if (part.type !== "tool-result") return []
    // A failed MCP call reaches the model as { _tag: "McpToolFailed", tool, text }.
    const result: unknown = part.result
    const text = typeof result === "object" && result !== null && "text" in result ? String(result.text) : String(result)
    return [{ failed: part.isFailure, text }]
  })
}

// 2. A scripted model: it asks about two items, then answers from the results it got.
const scripted = () =>
  ScriptedModel.make([
    {
      text: "Let me ask the warehouse.",
      toolCalls: [
        { name: "stock", params: { item: "teapot" } },
        { name: "stock", params: { item: "samovar" } }
      ]
    },
    (request) => {
      const [teapot, samovar] = toolResults(request.prompt)
      const samovars = samovar === undefined
        ? "no answer"
        : samovar.failed
        ? `the warehouse could not tell me ("${samovar.text}")`
        : samovar.text
      return { text: `Teapots: ${teapot?.text ?? "no answer"}. Samovars: ${samovars}.` }
    }
  ])

// 3. Connect, make a chain with the server's toolkit, run it with the model and the tools' handler layer.
export const program = Effect.gen(function*() {
  const mcp = yield* McpTools.connect(warehouse)
  const chain = Chain.make({
    system: "You answer questions about the warehouse with its tools.",
    user: "How many teapots and samovars are in stock?",
    toolkit: mcp.toolkit
  })
  const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse, maxRuns: 5 }).pipe(
    Effect.provide([scripted().layer, mcp.layer])
  )
  return { server: mcp.server, tools: mcp.tools.map((tool) => tool.name), outcome }
}).pipe(Effect.scoped) // the server process stops when the scope closes

/** One line per message part: text, a tool call (→), a result (←) or a failed result (✗). */
const partLine = (part: Prompt.Part): string => {
  switch (part.type) {
    case "text":
      return part.text
    case "tool-call":
      return `→ ${part.name}(${JSON.stringify(part.params)})`
    case "tool-result":
      return `${part.isFailure ? "✗" : "←"} ${part.name}: ${JSON.stringify(part.result)}`
    default:
      return `[${part.type}]`
  }
}

if (import.meta.main) {
  const { server, tools, outcome } = await Effect.runPromise(program)
  const chain = outcome.chain
  console.log(`server:    ${server?.name ?? "?"} ${server?.version ?? ""} · tools: ${tools.join(", ")}`)
  console.log(`outcome:   ${outcome._tag} (${outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag}) after ${chain.runCount} model calls`)
  console.log("")
  for (const message of chain.messages) {
    const lines = typeof message.content === "string" ? [message.content] : message.content.map(partLine)
    console.log(`${message.role.padEnd(10)} ${lines.join(`\n${" ".repeat(11)}`)}`)
  }
}

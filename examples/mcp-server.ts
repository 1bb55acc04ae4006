/**
 * A small MCP server for examples/mcp.ts, built with `@modelcontextprotocol/sdk`
 * (in your own project: `npm i @modelcontextprotocol/sdk zod`). It speaks MCP
 * over stdio; examples/mcp.ts starts it as a child process.
 *
 * Two tools over a warehouse's stock:
 * - `stock`: how many of an item are in stock. An item the warehouse does not
 *   carry is answered with `isError: true`, as MCP tools report failures;
 * - `price`: an item's price in euros.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

/** The warehouse: item → units in stock and price. A `Map`: item names come from the model. */
const items = new Map([
  ["teapot", { units: 12, euros: 24 }],
  ["kettle", { units: 3, euros: 39 }],
  ["mug", { units: 140, euros: 6 }]
])

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

/** The answer for an item the warehouse does not carry: a tool error, not a protocol error. */
const unknownItem = (item: string) => ({
  ...text(`No item named '${item.slice(0, 40)}'. Known items: ${[...items.keys()].join(", ")}.`),
  isError: true
})

const server = new McpServer({ name: "warehouse", version: "1.0.0" })

server.registerTool(
  "stock",
  { description: "How many units of an item are in stock", inputSchema: { item: z.string() } },
  ({ item }) => {
    const found = items.get(item)
    return found === undefined ? unknownItem(item) : text(`${found.units} units of ${item} in stock`)
  }
)

server.registerTool(
  "price",
  { description: "The price of one unit of an item, in euros", inputSchema: { item: z.string() } },
  ({ item }) => {
    const found = items.get(item)
    return found === undefined ? unknownItem(item) : text(`${found.euros} EUR`)
  }
)

await server.connect(new StdioServerTransport())

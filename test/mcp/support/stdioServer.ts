/**
 * An MCP server over stdio, for the tests: `node stdioServer.ts [plain|hostile|many]`
 * (see `servers.ts`). `crash` ends the process with exit code 3.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { type Kind, make } from "./servers.ts"

const kind = (process.argv[2] ?? "plain") as Kind
const server = make(kind, { unlocked: false, crash: () => process.exit(3) })
await server.connect(new StdioServerTransport())

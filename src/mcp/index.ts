/**
 * loopwork/mcp: an MCP server's tools as a loopwork toolkit plus the layer
 * of its handlers, over stdio or Streamable HTTP, built on effect's own
 * `McpClient`. Loading this entry point loads no package besides `effect`;
 * `import "loopwork"` loads none of it.
 *
 * @since 0.2.0
 */

/** What can go wrong: connecting, listing, refused tools, failed calls. @since 0.2.0 */
export * as McpError from "./McpError.ts"
/** `connect`: a server's tools as a toolkit and its handler layer, with `refresh`. @since 0.2.0 */
export * as McpTools from "./McpTools.ts"
/** How to reach a server: `stdio` or `http`. @since 0.2.0 */
export * as McpTransport from "./McpTransport.ts"

/**
 * The AI SDK is optional: importing `loopwork`, `loopwork/ensemble`,
 * `loopwork/testing` or even `loopwork/ai-sdk` loads none of it
 * (`@ai-sdk/provider` is used for types only, and the provider package is the
 * user's). Likewise only `loopwork/mcp` loads the MCP client, and it loads
 * no package besides `effect`.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"

const run = promisify(execFile)

const loadedBy = async (...entries: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const { stdout } = await run(
    process.execPath,
    ["--conditions=loopwork-source", "test/fixtures/loaded-modules.mjs", ...entries],
    { cwd: process.cwd() }
  )
  return JSON.parse(stdout) as ReadonlyArray<string>
}

describe("packaging", () => {
  it("loopwork and loopwork/ensemble load no AI SDK module", async () => {
    const loaded = await loadedBy("loopwork", "loopwork/ensemble")
    expect(loaded.some((url) => url.endsWith("/src/index.ts"))).toBe(true)
    expect(loaded.filter((url) => url.includes("@ai-sdk") || url.includes("/node_modules/ai/"))).toEqual([])
  })

  it("loopwork/testing loads no AI SDK module", async () => {
    const loaded = await loadedBy("loopwork/testing")
    expect(loaded.some((url) => url.endsWith("/src/testing/index.ts"))).toBe(true)
    expect(loaded.filter((url) => url.includes("@ai-sdk") || url.includes("/node_modules/ai/"))).toEqual([])
  })

  it("loopwork, loopwork/ensemble and loopwork/testing load none of the durable engine (effect/workflow, effect/cluster, node:sqlite)", async () => {
    const loaded = await loadedBy("loopwork", "loopwork/ensemble", "loopwork/testing")
    expect(loaded.some((url) => url.endsWith("/src/index.ts"))).toBe(true)
    expect(loaded.filter((url) => /\/effect\/dist\/(workflow|cluster)\/|\/src\/durable\/|node:sqlite/.test(url))).toEqual([])
    const durable = await loadedBy("loopwork/durable")
    expect(durable.some((url) => url.includes("/effect/dist/workflow/"))).toBe(true)
  })

  it("only loopwork/durable/postgres loads @effect/sql-pg (an optional peer)", async () => {
    const durable = await loadedBy("loopwork/durable")
    expect(durable.filter((url) => url.includes("@effect/sql-pg"))).toEqual([])
    const postgres = await loadedBy("loopwork/durable/postgres")
    expect(postgres.some((url) => url.includes("/@effect/sql-pg/"))).toBe(true)
  })

  it("loopwork, loopwork/ensemble and loopwork/testing load nothing of loopwork/mcp (its modules, node:child_process)", async () => {
    const loaded = await loadedBy("loopwork", "loopwork/ensemble", "loopwork/testing")
    expect(loaded.some((url) => url.endsWith("/src/index.ts"))).toBe(true)
    expect(loaded.filter((url) => /\/src\/mcp\/|@modelcontextprotocol|child_process/.test(url))).toEqual([])
    const mcp = await loadedBy("loopwork/mcp")
    expect(mcp.some((url) => url.endsWith("/src/mcp/McpTools.ts"))).toBe(true)
    expect(mcp).toContain("node:child_process")
  })

  it("loopwork, loopwork/ensemble, loopwork/testing and loopwork/ai-sdk import effect/ai's modules one by one, not its index (which loads the MCP server, RPC and HTTP client: 14 MB and a quarter of the start-up)", async () => {
    const loaded = await loadedBy("loopwork", "loopwork/ensemble", "loopwork/testing", "loopwork/ai-sdk")
    expect(loaded.some((url) => url.endsWith("/effect/dist/ai/Toolkit.js"))).toBe(true)
    expect(loaded.filter((url) => /\/effect\/dist\/(ai\/index|ai\/Mcp|rpc\/|workers\/|http\/Http)/.test(url))).toEqual([])
  })

  it("loopwork/mcp runs on effect's own MCP client: it loads no @modelcontextprotocol/sdk or @effect/platform-* module", async () => {
    const loaded = await loadedBy("loopwork/mcp")
    expect(loaded.some((url) => url.includes("/effect/dist/ai/McpClient"))).toBe(true)
    expect(loaded.filter((url) => url.includes("@modelcontextprotocol") || url.includes("@effect/platform"))).toEqual([])
  })

  it("loopwork/ai-sdk loads no AI SDK module either (types only)", async () => {
    const loaded = await loadedBy("loopwork/ai-sdk")
    expect(loaded.some((url) => url.endsWith("/src/ai-sdk/AiSdkModel.ts"))).toBe(true)
    expect(loaded.filter((url) => url.includes("@ai-sdk"))).toEqual([])
  })
})

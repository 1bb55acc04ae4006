/**
 * `npm run bench:stream`: what watching costs, alone — the stream target of
 * `npm run bench` (bench/workloads/stream.ts: `Chain.stream` drained against
 * `Chain.run` on the W1 script), the same as `npm run bench -- --only stream`.
 *
 *   npm run build && node bench/stream-cost.ts [--quick]
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const index = fileURLToPath(new URL("./index.ts", import.meta.url))
const child = spawnSync(process.execPath, [index, "--only", "stream", ...process.argv.slice(2)], { stdio: "inherit" })
process.exit(child.status ?? 1)

/**
 * Runs the durable agent (./agent.ts) as real child processes and reads the
 * side effects its handlers wrote.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const agent = fileURLToPath(new URL("./agent.ts", import.meta.url))
/** The durable ensemble's script (./team.ts), for `run` and `launch`. */
export const team = fileURLToPath(new URL("./team.ts", import.meta.url))
const argv = (args: ReadonlyArray<string>, script: string) => ["--no-warnings", "--conditions=loopwork-source", script, ...args]

export interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  /** The agent's first RESULT / DECIDED / PENDING line. */
  readonly result: string | undefined
}

const resultLine = (stdout: string) =>
  stdout.split("\n").find((l) => /^(RESULTS?|DECIDED|PENDING|COUNTS) /.test(l))

/** Runs the agent to its end (or its SIGKILL). */
export const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}, script = agent): Run => {
  const out = spawnSync(process.execPath, argv(args, script), { env: { ...process.env, ...env }, encoding: "utf8", timeout: 90_000 })
  return { status: out.status, signal: out.signal, result: resultLine(out.stdout) }
}

export interface Running {
  readonly pid: number
  /** Resolves once the agent printed `line`. */
  readonly printed: (line: string) => Promise<void>
  readonly exited: Promise<Run>
  readonly kill: () => void
}

/** Starts the agent and lets it run alongside the test. */
export const launch = (args: ReadonlyArray<string>, env: Record<string, string> = {}, script = agent): Running => {
  const child = spawn(process.execPath, argv(args, script), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  const waiters: Array<() => void> = []
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
    for (const wake of waiters.splice(0)) wake()
  })
  child.stderr.resume()
  const exited = new Promise<Run>((resolve) =>
    child.on("exit", (status, signal) => resolve({ status, signal, result: resultLine(stdout) })))
  const printed = (line: string) =>
    new Promise<void>((resolve) => {
      const check = () => stdout.split("\n").includes(line) ? resolve() : waiters.push(check)
      check()
    })
  return { pid: child.pid ?? 0, printed, exited, kill: () => child.kill("SIGKILL") }
}

export interface Workspace {
  readonly effects: string
  readonly file: (name: string) => string
  readonly done: () => void
}

export const workspace = (): Workspace => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-durable-"))
  return { effects: join(dir, "effects"), file: (name) => join(dir, name), done: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Each side effect (`<ticket>/<callId>`) and how many times it happened. */
export const counts = (file: string): Record<string, number> => {
  const out = new Map<string, number>()
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n").filter((l) => l !== "")) {
      const key = line.split(" ")[0] ?? ""
      out.set(key, (out.get(key) ?? 0) + 1)
    }
  }
  return Object.fromEntries(out)
}

/** The processes (pids) that made side effects. */
export const makers = (file: string): Set<string> => new Set(effectLines(file).map(([, pid]) => pid))

/** Every side effect in order: its key and the pid of the process that made it. */
export const effectLines = (file: string): Array<[key: string, pid: string]> =>
  existsSync(file)
    ? readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => [l.split(" ")[0] ?? "", l.split(" ")[1] ?? ""])
    : []

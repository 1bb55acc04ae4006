/**
 * A value too deep for structuredClone (an edit, a supplied result) is copied
 * without recursion, once per object: one that also holds a cycle, or a
 * shared object reached by 2^40 paths, is refused at once instead of hanging
 * the process. Each case runs in a child process (the copy is synchronous, so
 * a hang could not be stopped in this one); 30 s is far beyond the second or
 * so a case takes.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("../support/deepCycleDecide.ts", import.meta.url))
const outcome = (which: string, shape = "cycle") => {
  const child = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", script, which, shape], {
    timeout: 30_000,
    encoding: "utf8"
  })
  return { signal: child.signal, status: child.status, out: child.stdout.trim() }
}

describe("snapshot of a deep, cyclic value", () => {
  it("Approval.decide refuses it (does not hang)", () => {
    expect(outcome("decide")).toEqual({ signal: null, status: 0, out: "refused" })
  }, 60_000)
  it("ExternalTool.supply refuses it (does not hang)", () => {
    expect(outcome("supply")).toEqual({ signal: null, status: 0, out: "refused" })
  }, 60_000)
  it("Approval.decide refuses a deep value holding a shared (acyclic) DAG (does not copy 2^40 nodes)", () => {
    expect(outcome("decide", "dag")).toEqual({ signal: null, status: 0, out: "refused" })
  }, 60_000)
  it("control: a deep acyclic value is refused at once", () => {
    expect(outcome("decide", "acyclic")).toEqual({ signal: null, status: 0, out: "refused" })
  }, 60_000)
})

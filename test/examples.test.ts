import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Chain } from "../src/index.ts"
import * as CustomMode from "../examples/custom-mode.ts"
import * as HumanInTheLoop from "../examples/human-in-the-loop.ts"
import * as ResearchTeam from "../examples/research-team.ts"
import * as Quickstart from "../examples/quickstart.ts"

const run = promisify(execFile)

describe("examples", () => {
  it.effect("quickstart runs two weather calls and answers", () =>
    Effect.gen(function*() {
      const outcome = yield* Quickstart.program
      expect(outcome._tag).toBe("Ok")
      expect(outcome.chain.runCount).toBe(2)
      expect(outcome.chain.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(outcome.chain.lastToolResults.map((r) => r.result)).toEqual([
        { city: "Oslo", celsius: 4, sky: "clear" },
        { city: "Lisbon", celsius: 21, sky: "clear" }
      ])
      expect(Chain.text(outcome.chain)).toContain("I read 2 tool results")
    }))

  it.effect("custom-mode audits every model call", () =>
    Effect.gen(function*() {
      CustomMode.auditLog.length = 0
      const outcome = yield* CustomMode.program
      expect(outcome._tag).toBe("Ok")
      expect(Chain.text(outcome.chain)).toBe("Order A-17 has shipped.")
      expect(CustomMode.auditLog).toEqual([
        "model call #1 completed (tool calls: lookup_order)",
        "model call #2 completed (tool calls: none)"
      ])
    }))

  it.effect("human-in-the-loop pauses for approval, then for the external call, then returns the receipt directly", () =>
    Effect.gen(function*() {
      HumanInTheLoop.log.length = 0
      const outcome = yield* HumanInTheLoop.program
      expect(HumanInTheLoop.log).toEqual([
        "Pause (ApprovalPending): transfer({\"to\":\"Bob\",\"amount\":300})",
        "Pause (ExternalPending): open_statement({})",
        "Ok (direct-return): \"Receipt T-1: 250 EUR to Bob, settled.\""
      ])
      expect(outcome.chain.runCount).toBe(2)
      // The transcript shows the edited amount, and the transfer ran with it.
      const results = outcome.chain.messages.flatMap((m) => m.role === "tool" ? m.content : [])
      expect(results.map((part) => part.type === "tool-result" ? part.result : undefined)).toEqual([
        1250,
        "sent 250 EUR to Bob, reference T-1",
        "Receipt T-1: 250 EUR to Bob, settled."
      ])
      expect(JSON.stringify(outcome.chain.messages[1])).toContain("\"amount\":250")
    }))

  it.effect("research-team runs sequentially, then under a manager with constraints", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const program = Effect.all([ResearchTeam.sequentialRun, ResearchTeam.hierarchicalRun]).pipe(
        ResearchTeam.printing((text) => lines.push(text)),
        Effect.provide([ResearchTeam.model.layer, ResearchTeam.ToolHandlers])
      )
      const fiber = yield* Effect.forkChild(program)
      yield* TestClock.adjust("1 minute")
      const [sequential, hierarchical] = yield* Fiber.join(fiber)
      expect(sequential.taskOutputs.map((o) => o.agentRole)).toEqual(["Researcher", "Writer", "Reviewer"])
      expect(sequential.taskOutputs[2].parsedOutput).toEqual({ approved: true, comments: "Accurate and clear." })
      expect(sequential.totalToolCalls).toBe(1)
      expect(hierarchical.taskOutputs.map((o) => o.agentRole)).toEqual(["Researcher", "Writer", "Reviewer", "Manager"])
      expect(hierarchical.raw).toContain("the reviewer approved")
      // numbered delegations keep each task's settings: the reviewer's verdict is decoded here too
      expect(hierarchical.taskOutputs[2].parsedOutput).toEqual({ approved: true, comments: "Accurate and clear." })
      // the manager used case-variant roles ("researcher", "REVIEWER"): the same agents for every guard
      expect(hierarchical.delegations.map((d) => [d.request.agentRole, d.response.workerRole, d.response.status])).toEqual([
        ["researcher", "Researcher", "SUCCESS"],
        ["Writer", "Writer", "SUCCESS"],
        ["REVIEWER", "Reviewer", "SUCCESS"]
      ])
      expect(lines).toContain("→ Manager delegates to Researcher")
      expect(lines.filter((l) => l.startsWith("✓ "))).toHaveLength(7)
    }))

  it("npm run demo runs the research team", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=source", "examples/research-team.ts"], { cwd: process.cwd() })
    expect(stdout).toContain("== SEQUENTIAL ==")
    expect(stdout).toContain("final: {\"approved\":true,\"comments\":\"Accurate and clear.\"}")
    expect(stdout).toContain("== HIERARCHICAL (manager with constraints) ==")
    expect(stdout).toContain("3 delegation(s): Researcher SUCCESS, Writer SUCCESS, Reviewer SUCCESS")
  })

  it("the quick start prints the run", async () => {
    const { stdout } = await run(process.execPath, ["--conditions=source", "examples/quickstart.ts"], { cwd: process.cwd() })
    expect(stdout).toContain("outcome:      Ok (done)")
    expect(stdout).toContain("model calls:  2")
    expect(stdout).toContain("→ get_weather({\"city\":\"Oslo\"})")
    expect(stdout).toContain("answer:       Oslo is 4°C and Lisbon 21°C")
  })
})

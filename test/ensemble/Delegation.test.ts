/**
 * Peer delegation: the delegate tool is offered only to agents with `allowDelegation`; delegating
 * runs the target agent on the subtask and returns its raw text; the target role is matched trimmed
 * and case-insensitively; a failing worker; and every attempt yields a request/response pair.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Random, Schema } from "effect"
import { Tool } from "effect/ai"
import { TestClock } from "effect/testing"
import { ChatModel } from "../../src/index.ts"
import { Agent, Delegation, Ensemble, Task } from "../../src/ensemble/index.ts"
import type { TaskOutput } from "../../src/ensemble/index.ts"
import { requestTranscripts, transcript } from "../support/transcript.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"
import {
  goals, systemOf, userOf, subtaskExpected, makeAgent, delegateCall, offered, lastLine, uuidV4,
  expectPairedIds, plain, expectedRequest, failedRecord, successRecord, brief
} from "../support/delegation.ts"

// -----------------------------------------------------------------------------
// The delegate tool
// -----------------------------------------------------------------------------

describe("the delegate tool is offered only to agents with allowDelegation", () => {
  it.effect("offered after the agent's own tools to an agent with allowDelegation, never to one without", () => {
    const model = ChatModel.scripted([{ text: "Facts." }, { text: "Prose." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* Agent.make({
        role: "Researcher",
        goal: goals.Researcher,
        toolkit,
        allowDelegation: true
      })
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, toolkit })
      const reviewer = yield* makeAgent("Reviewer", false)
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [research, write] })
      const output = yield* Ensemble.run(ensemble)

      expect(offered(model)).toEqual([["lookup", "delegate"], ["lookup"]])
      expect(output.delegations).toEqual([])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("the tool takes agentRole and taskDescription and describes itself to the model", () => {
    const model = ChatModel.scripted([{ text: "Facts." }])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [research] })
      yield* Ensemble.run(ensemble)

      const tool = model.requests[0].tools[0]
      expect(tool.name).toBe("delegate")
      expect(Tool.getDescription(tool)).toBe(
        "Hand a subtask to another agent of the team and get its answer. Give the agent's role and a clear, " +
          "self-contained description of the subtask."
      )
      const schema = Tool.getJsonSchema(tool) as { readonly properties: Record<string, unknown>; readonly required: ReadonlyArray<string> }
      expect(Object.keys(schema.properties).sort()).toEqual(["agentRole", "taskDescription"])
      expect([...schema.required].sort()).toEqual(["agentRole", "taskDescription"])
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Running the target agent
// -----------------------------------------------------------------------------

describe("delegating runs the target agent on the subtask and returns its raw text", () => {
  it.effect("SEQUENTIAL: exact prompts of caller and worker, the worker's text as the tool result, one SUCCESS record", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Draft the introduction"),
      { text: "An introduction." },
      { text: "Plan with introduction." },
      { text: "Looks right." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan the report", expectedOutput: "A plan", agent: researcher })
      const review = yield* Task.make({
        description: "Review the plan",
        expectedOutput: "A verdict",
        agent: reviewer,
        context: [plan]
      })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan, review] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(4)
      expect(requestTranscripts(model)).toEqual([
        [systemOf("Researcher"), userOf("Plan the report", "A plan")],
        [systemOf("Writer"), userOf("Draft the introduction", subtaskExpected)],
        [
          systemOf("Researcher"),
          userOf("Plan the report", "A plan"),
          "assistant: call delegate#call_1_1 {\"agentRole\":\"Writer\",\"taskDescription\":\"Draft the introduction\"}",
          "tool: ok delegate#call_1_1 \"An introduction.\""
        ],
        [
          systemOf("Reviewer"),
          "user: ## Context from earlier tasks\n### Researcher: Plan the report\nPlan with introduction.\n\n" +
          "## Task\nReview the plan\n\n## Expected output\nA verdict"
        ]
      ])
      expect(offered(model)).toEqual([["delegate"], [], ["delegate"], []])
      // the subtask is not a task of the run: only the two tasks are listed
      expect(output.taskOutputs.map(brief)).toEqual([
        { agentRole: "Researcher", raw: "Plan with introduction." },
        { agentRole: "Reviewer", raw: "Looks right." }
      ])
      expect(output.taskOutputs.map((o) => o.toolCallCount)).toEqual([1, 0])
      expect(output.raw).toBe("Looks right.")
      expect(output.delegations.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Draft the introduction", "Writer", "An introduction.")
      ])
      expectPairedIds(output.delegations)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a worker with its own tools uses them (handlers from the run); their calls stay inside the subtask", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Look up Effect and summarise"),
      { toolCalls: [{ name: "lookup", params: { query: "effect" } }] },
      { text: "Effect is a library." },
      { text: "Done." }
    ])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, toolkit })
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(handlers.queries).toEqual(["effect"])
      expect(offered(model)).toEqual([["delegate"], ["lookup"], ["lookup"], ["delegate"]])
      expect(lastLine(model.requests[2])).toBe("tool: ok lookup#call_2_1 \"found effect\"")
      expect(lastLine(model.requests[3])).toBe("tool: ok delegate#call_1_1 \"Effect is a library.\"")
      expect(output.raw).toBe("Done.")
      expect(output.taskOutputs.map((o) => o.toolCallCount)).toEqual([1])
      expect(output.delegations.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Look up Effect and summarise", "Writer", "Effect is a library.")
      ])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a worker without its own model uses the ensemble's, not the caller's", () => {
    const callerModel = ChatModel.scripted([delegateCall("Writer", "Draft it"), { text: "Final." }])
    const model = ChatModel.scripted([{ text: "Draft." }])
    return Effect.gen(function*() {
      const researcher = yield* Agent.make({
        role: "Researcher",
        goal: goals.Researcher,
        allowDelegation: true,
        llm: callerModel.layer
      })
      const writer = yield* makeAgent("Writer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(callerModel.calls).toBe(2)
      expect(model.calls).toBe(1)
      expect(requestTranscripts(model)).toEqual([[systemOf("Writer"), userOf("Draft it", subtaskExpected)]])
      expect(lastLine(callerModel.requests[1])).toBe("tool: ok delegate#call_1_1 \"Draft.\"")
      expect(output.raw).toBe("Final.")
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a worker with its own model uses it", () => {
    const writerModel = ChatModel.scripted([{ text: "Draft." }])
    const model = ChatModel.scripted([delegateCall("Writer", "Draft it"), { text: "Final." }])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* Agent.make({ role: "Writer", goal: goals.Writer, llm: writerModel.layer })
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(2)
      expect(requestTranscripts(writerModel)).toEqual([[systemOf("Writer"), userOf("Draft it", subtaskExpected)]])
      expect(output.raw).toBe("Final.")
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("PARALLEL: two tasks delegate at the same time; each gets its own worker's answer", () => {
    /** Routes each request by the agent it is for, so the interleaving does not matter. */
    const routed: ChatModel.ScriptedTurn = (request) => {
      const lines = transcript(request.prompt.content)
      const role = /^system: You are (\w+)\./.exec(lines[0] ?? "")?.[1]
      const task = /## Task\n([^\n]*)/.exec(lines[1] ?? "")?.[1] ?? ""
      const last = lines[lines.length - 1] ?? ""
      const latency = "1 second"
      if (role === "Writer") return { text: `Draft: ${task}`, latency }
      if (last.startsWith("tool: ")) return { text: `${role} used ${last}`, latency }
      return role === "Researcher"
        ? { ...delegateCall("Writer", "Draft for A"), latency }
        : { ...delegateCall(" writer", "Draft for B"), latency }
    }
    const model = ChatModel.scripted(Array.from({ length: 7 }, () => routed))
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const reviewer = yield* makeAgent("Reviewer", true)
      const writer = yield* makeAgent("Writer", false)
      const a = yield* Task.make({ description: "Task A", expectedOutput: "A", agent: researcher })
      const b = yield* Task.make({ description: "Task B", expectedOutput: "B", agent: reviewer })
      const sum = yield* Task.make({ description: "Sum up", expectedOutput: "Sum", agent: writer, context: [a, b] })
      const ensemble = yield* Ensemble.make({
        agents: [researcher, reviewer, writer],
        tasks: [a, b, sum],
        workflow: "PARALLEL"
      })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))
      // A and B (call, worker, call) overlap: 3 seconds, then "Sum up" 1 second
      yield* TestClock.adjust("3999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      expect(model.calls).toBe(7)
      expect(Duration.toMillis(output.totalDuration)).toBe(4000)
      const byRole = [...output.taskOutputs].sort((x, y) => x.agentRole.localeCompare(y.agentRole)).map(brief)
      expect(byRole).toEqual([
        { agentRole: "Researcher", raw: "Researcher used tool: ok delegate#call_1_1 \"Draft: Draft for A\"" },
        { agentRole: "Reviewer", raw: "Reviewer used tool: ok delegate#call_2_1 \"Draft: Draft for B\"" },
        { agentRole: "Writer", raw: "Draft: Sum up" }
      ])
      const records = [...output.delegations].sort((x, y) => x.delegatingRole.localeCompare(y.delegatingRole))
      expect(records.map(plain)).toEqual([
        successRecord("peer", "Researcher", 0, "Writer", "Draft for A", "Writer", "Draft: Draft for A", 1000),
        successRecord("peer", "Reviewer", 0, " writer", "Draft for B", "Writer", "Draft: Draft for B", 1000)
      ])
      expectPairedIds(records)
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Role matching
// -----------------------------------------------------------------------------

const roleVariants: ReadonlyArray<string> = ["writer", "WRITER", "  Writer  ", "\twRiTeR\n"]

describe("the target role is matched trimmed and case-insensitively", () => {
  for (const variant of roleVariants) {
    it.effect(`${JSON.stringify(variant)} reaches the Writer`, () => {
      const model = ChatModel.scripted([delegateCall(variant, "Draft it"), { text: "Draft." }, { text: "Final." }])
      return Effect.gen(function*() {
        const researcher = yield* makeAgent("Researcher", true)
        const writer = yield* makeAgent("Writer", false)
        const reviewer = yield* makeAgent("Reviewer", false)
        const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
        const ensemble = yield* Ensemble.make({ agents: [researcher, reviewer, writer], tasks: [plan] })
        const output = yield* Ensemble.run(ensemble)

        expect(requestTranscripts(model)[1]).toEqual([systemOf("Writer"), userOf("Draft it", subtaskExpected)])
        expect(lastLine(model.requests[2])).toBe("tool: ok delegate#call_1_1 \"Draft.\"")
        // the request keeps the role as asked; the response names the agent that did the work
        expect(output.delegations.map(plain)).toEqual([
          successRecord("peer", "Researcher", 0, variant, "Draft it", "Writer", "Draft.")
        ])
      }).pipe(Effect.provide(model.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// A failing worker
// -----------------------------------------------------------------------------

describe("a failing worker", () => {
  it.effect("the caller gets a failed tool result with the real message, the record is FAILURE, the run goes on", () => {
    const model = ChatModel.scripted([
      delegateCall("writer", "Draft it"),
      { fail: "overloaded" },
      delegateCall("Reviewer", "Check the facts"),
      { text: "Facts check out." },
      { text: "Plan without a draft." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(5)
      expect(transcript(model.requests[2].prompt.content)).toEqual([
        systemOf("Researcher"),
        userOf("Plan", "A plan"),
        "assistant: call delegate#call_1_1 {\"agentRole\":\"writer\",\"taskDescription\":\"Draft it\"}",
        "tool: failed delegate#call_1_1 \"Agent 'Writer' failed: The model call failed: overloaded\""
      ])
      expect(lastLine(model.requests[4])).toBe("tool: ok delegate#call_3_1 \"Facts check out.\"")
      expect(output.raw).toBe("Plan without a draft.")
      expect(output.delegations.map(plain)).toEqual([
        failedRecord("Researcher", 0, "writer", "Draft it", "Writer", "The model call failed: overloaded"),
        successRecord("peer", "Researcher", 0, "Reviewer", "Check the facts", "Reviewer", "Facts check out.")
      ])
      expectPairedIds(output.delegations)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a failure two levels down reaches the middle agent, which still answers its caller", () => {
    const model = ChatModel.scripted([
      delegateCall("Writer", "Draft it"),
      delegateCall("Reviewer", "Check it"),
      { fail: "rate limited" },
      { text: "Unchecked draft." },
      { text: "Plan." }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", true)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const output = yield* Ensemble.run(ensemble)

      expect(transcript(model.requests[3].prompt.content)[0]).toBe(systemOf("Writer"))
      expect(lastLine(model.requests[3])).toBe(
        "tool: failed delegate#call_2_1 \"Agent 'Reviewer' failed: The model call failed: rate limited\""
      )
      expect(lastLine(model.requests[4])).toBe("tool: ok delegate#call_1_1 \"Unchecked draft.\"")
      expect(output.raw).toBe("Plan.")
      expect(output.delegations.map((r) => [r.delegatingRole, r.depth, r.response.status, r.response.workerRole, r.response.errors]))
        .toEqual([
          ["Writer", 1, "FAILURE", "Reviewer", ["The model call failed: rate limited"]],
          ["Researcher", 0, "SUCCESS", "Writer", []]
        ])
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// Request/response pairs
// -----------------------------------------------------------------------------

describe("every attempt yields a request/response pair", () => {
  const script: ReadonlyArray<ChatModel.ScriptedTurn> = [
    delegateCall("Writer", "Draft it"),
    { text: "Draft." },
    delegateCall("Nobody", "Draft it"),
    { text: "Final." }
  ]
  const program = Effect.gen(function*() {
    const researcher = yield* makeAgent("Researcher", true)
    const writer = yield* makeAgent("Writer", false)
    const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
    const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [plan] })
    return yield* Ensemble.run(ensemble)
  })
  const ids = (output: TaskOutput.EnsembleOutput) => output.delegations.map((record) => record.request.taskId)

  /** One successful delegation, then 40 blocked ones in a single turn: 41 ids. */
  const manyScript: ReadonlyArray<ChatModel.ScriptedTurn> = [
    delegateCall("Writer", "Draft it"),
    { text: "Draft." },
    {
      toolCalls: Array.from({ length: 40 }, (_, i) => ({
        name: "delegate",
        params: { agentRole: "Nobody", taskDescription: `Attempt ${i + 1}` }
      }))
    },
    { text: "Final." }
  ]

  it.effect("ids are UUID v4 (8-4-4-4-12 lowercase hex, version 4, variant 10xx), shared by request and response", () => {
    const model = ChatModel.scripted(manyScript)
    return Effect.gen(function*() {
      const output = yield* program.pipe(Random.withSeed("uuid format"), Effect.provide(model.layer))
      expect(output.delegations).toHaveLength(41)
      expect(output.delegations.map((r) => r.response.status)).toEqual(["SUCCESS", ...Array(40).fill("FAILURE")])
      expectPairedIds(output.delegations)
      expect(ids(output).filter((id) => !uuidV4.test(id))).toEqual([])
    })
  })

  it.effect("the same seed gives the same ids; another seed other ids", () => {
    const model = ChatModel.scripted(script)
    return Effect.gen(function*() {
      const first = yield* program.pipe(Random.withSeed("delegation"), Effect.provide(model.layer))
      const second = yield* program.pipe(Random.withSeed("delegation"), Effect.provide(model.layer))
      const other = yield* program.pipe(Random.withSeed("another seed"), Effect.provide(model.layer))

      expect(first.delegations).toHaveLength(2)
      expectPairedIds(first.delegations)
      expectPairedIds(other.delegations)
      expect(ids(second)).toEqual(ids(first))
      expect(ids(other)).not.toEqual(ids(first))
      expect(ids(other).some((id) => ids(first).includes(id))).toBe(false)
    })
  })

  it.effect("requests carry the defaults; responses only the fields of their outcome; records are Schema data", () => {
    const model = ChatModel.scripted(script)
    return Effect.gen(function*() {
      const output = yield* program
      const [ok, blocked] = output.delegations
      for (const record of [ok, blocked]) {
        expect(record.request.scope).toEqual({})
        expect(record.request.priority).toBe("NORMAL")
        expect(record.request.maxOutputRetries).toBe(0)
        expect(record.request.metadata).toEqual({})
        expect("expectedOutputSchema" in record.request).toBe(false)
        expect("parsedOutput" in record.response).toBe(false)
        expect(record.response.artifacts).toEqual({})
        expect(record.response.metadata).toEqual({})
      }
      expect(ok.response).toMatchObject({ status: "SUCCESS", workerRole: "Writer", rawOutput: "Draft.", errors: [] })
      expect(blocked.response).toMatchObject({
        status: "FAILURE",
        workerRole: "Nobody",
        rawOutput: null,
        errors: ["Agent not found with role 'Nobody'. Available roles: [Researcher, Writer]"]
      })
      const encoded = Schema.encodeUnknownSync(Delegation.DelegationRecord)(blocked)
      expect(encoded).toEqual({
        kind: "peer",
        delegatingRole: "Researcher",
        depth: 0,
        request: { ...expectedRequest("Nobody", "Draft it"), taskId: blocked.request.taskId },
        response: {
          taskId: blocked.request.taskId,
          status: "FAILURE",
          workerRole: "Nobody",
          rawOutput: null,
          artifacts: {},
          errors: ["Agent not found with role 'Nobody'. Available roles: [Researcher, Writer]"],
          metadata: {},
          duration: 0
        }
      })
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("duration is the worker's simulated time (TestClock); a blocked attempt takes none", () => {
    const model = ChatModel.scripted([
      { ...delegateCall("Writer", "Draft it"), latency: "1 second" },
      { text: "Draft.", latency: "2 seconds" },
      { ...delegateCall("Reviewer", "Check it"), latency: "1 second" },
      { fail: "overloaded", latency: "1500 millis" },
      { ...delegateCall("Editor", "Edit it"), latency: "1 second" },
      { text: "Final.", latency: "1 second" }
    ])
    return Effect.gen(function*() {
      const researcher = yield* makeAgent("Researcher", true)
      const writer = yield* makeAgent("Writer", false)
      const reviewer = yield* makeAgent("Reviewer", false)
      const plan = yield* Task.make({ description: "Plan", expectedOutput: "A plan", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer, reviewer], tasks: [plan] })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))
      yield* TestClock.adjust("7499 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      expect(output.delegations.map((r) => [r.request.agentRole, r.response.status, Duration.toMillis(r.response.duration)]))
        .toEqual([
          ["Writer", "SUCCESS", 2000],
          ["Reviewer", "FAILURE", 1500],
          ["Editor", "FAILURE", 0]
        ])
      expect(Duration.toMillis(output.taskOutputs[0].duration)).toBe(7500)
      expect(Duration.toMillis(output.totalDuration)).toBe(7500)
    }).pipe(Effect.provide(model.layer))
  })
})

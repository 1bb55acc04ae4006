/**
 * An agent's tools are its own. Tool handlers are found by tool name, so two
 * agents with *different* tools of one name would share one handler (one
 * agent's `lookup` would run the other's). `Ensemble.make` refuses that
 * configuration, naming the tool and both agents; agents sharing one tool
 * (or an annotated copy of it) are fine; two tools that differ only in
 * `needsApproval` or `failureMode` are different tools (otherwise one agent's
 * calls would skip the approval the other's tool asks for). Tools may not take the names of the
 * ensemble's own delegation tools either.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel, ReturnBehavior } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { roleOf } from "../support/transcript.ts"
import { Lookup, makeHandlers, toolkit } from "../support/ensemble.ts"

/** Another tool named `lookup`: a different definition (say, a private database). */
const PrivateLookup = Tool.make("lookup", {
  description: "Looks something up in the private database",
  parameters: Schema.Struct({ id: Schema.Number }),
  success: Schema.String
})
const privateToolkit = Toolkit.make(PrivateLookup)

const twoAgents = <A extends Record<string, Tool.Any>, B extends Record<string, Tool.Any>>(
  researcherTools: Toolkit.Toolkit<A>,
  writerTools: Toolkit.Toolkit<B>
) =>
  Effect.gen(function*() {
    const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit: researcherTools })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write", toolkit: writerTools })
    const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
    const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
    return { researcher, writer, tasks: [research, write] }
  })

describe("two agents, different tools with one name", () => {
  it.effect("Ensemble.make refuses the configuration, naming the tool and both agents", () =>
    Effect.gen(function*() {
      const { researcher, tasks, writer } = yield* twoAgents(toolkit, privateToolkit)
      const error = yield* Effect.flip(Ensemble.make({ agents: [researcher, writer], tasks }))
      expect(error._tag).toBe("ValidationError")
      expect(error.message).toBe(
        "Agents 'Researcher' and 'Writer' have different tools named 'lookup': tool handlers are found by name, so one " +
          "agent's calls would run the other's handler. Rename one of the tools, or give both agents the same Tool"
      )
    }))

  it.effect("also when the second agent is not used by any task (it could be reached by delegation)", () =>
    Effect.gen(function*() {
      const { researcher, tasks, writer } = yield* twoAgents(toolkit, privateToolkit)
      const error = yield* Effect.flip(Ensemble.make({ agents: [researcher, writer], tasks: [tasks[0]] }))
      expect(error.message).toContain("have different tools named 'lookup'")
    }))
})

describe("two tools of one name that differ only in approval or failure mode", () => {
  // One definition's schemas, so only the field named by each row differs.
  const Params = Schema.Struct({ path: Schema.String })
  const Failure = Schema.String
  const remove = (options: { readonly needsApproval?: Tool.NeedsApproval<typeof Params>; readonly failureMode?: "error" | "return" }) =>
    Tool.make("delete_file", { parameters: Params, success: Schema.String, failure: Failure, ...options })
  const askAlways = () => Effect.succeed(true)
  const askOther = () => Effect.succeed(true)
  const rows: ReadonlyArray<{
    readonly name: string
    readonly a: Parameters<typeof remove>[0]
    readonly b: Parameters<typeof remove>[0]
    readonly refused: boolean
  }> = [
    { name: "needsApproval true / absent", a: { needsApproval: true }, b: {}, refused: true },
    { name: "needsApproval true / false", a: { needsApproval: true }, b: { needsApproval: false }, refused: true },
    { name: "needsApproval a function / absent", a: { needsApproval: askAlways }, b: {}, refused: true },
    { name: "needsApproval two different functions", a: { needsApproval: askAlways }, b: { needsApproval: askOther }, refused: true },
    { name: "failureMode return / error", a: { failureMode: "return" }, b: { failureMode: "error" }, refused: true },
    { name: "needsApproval the same function", a: { needsApproval: askAlways }, b: { needsApproval: askAlways }, refused: false },
    { name: "needsApproval true / true", a: { needsApproval: true }, b: { needsApproval: true }, refused: false },
    { name: "needsApproval false / absent (no approval either way)", a: { needsApproval: false }, b: {}, refused: false }
  ]
  for (const row of rows) {
    it.effect(`${row.name}: ${row.refused ? "refused" : "accepted"}`, () =>
      Effect.gen(function*() {
        const { researcher, tasks, writer } = yield* twoAgents(Toolkit.make(remove(row.a)), Toolkit.make(remove(row.b)))
        const made = yield* Effect.result(Ensemble.make({ agents: [researcher, writer], tasks }))
        expect(made._tag).toBe(row.refused ? "Failure" : "Success")
        if (made._tag === "Failure") expect(made.failure.message).toContain("have different tools named 'delete_file'")
      }))
  }
})

describe("agents sharing a tool", () => {
  it.effect("the same Tool in two toolkits, or an annotated copy of it: accepted, one handler; a different tool: refused", () =>
    Effect.gen(function*() {
      const shared = yield* twoAgents(toolkit, Toolkit.make(Lookup))
      const ensemble = yield* Ensemble.make({ agents: [shared.researcher, shared.writer], tasks: shared.tasks })
      const model = ChatModel.scripted([(request) =>
        request.prompt.content.at(-1)?.role === "tool"
          ? { text: "done" }
          : { toolCalls: [{ name: "lookup", params: { query: roleOf(request) } }] }
      ], { repeat: true })
      const handlers = makeHandlers()
      yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(handlers.queries).toEqual(["Researcher", "Writer"])

      const annotated = yield* twoAgents(toolkit, Toolkit.make(Lookup.annotate(ReturnBehavior.Annotation, "IMMEDIATE")))
      yield* Ensemble.make({ agents: [annotated.researcher, annotated.writer], tasks: annotated.tasks })

      const different = yield* twoAgents(toolkit, privateToolkit)
      const error = yield* Effect.flip(Ensemble.make({ agents: [different.researcher, different.writer], tasks: different.tasks }))
      expect(error.message).toContain("have different tools named 'lookup'")
    }))
})

describe("the ensemble's own tool names are reserved", () => {
  const Delegate = Tool.make("delegate", { parameters: Schema.Struct({ to: Schema.String }), success: Schema.String })
  const DelegateTask = Tool.make("delegateTask", { parameters: Schema.Struct({ to: Schema.String }), success: Schema.String })

  it.effect("a tool named 'delegate' when an agent may delegate (when none may, the name is free)", () =>
    Effect.gen(function*() {
      const lead = yield* Agent.make({ role: "Lead", goal: "Lead", allowDelegation: true })
      const helper = yield* Agent.make({ role: "Helper", goal: "Help", toolkit: Toolkit.make(Delegate) })
      const task = yield* Task.make({ description: "Do it", expectedOutput: "Done", agent: lead })
      const error = yield* Effect.flip(Ensemble.make({ agents: [lead, helper], tasks: [task] }))
      expect(error.message).toBe(
        "Agent 'Helper' has a tool named 'delegate', a name this ensemble uses for peer delegation (an agent has allowDelegation): rename the tool"
      )
      const alone = yield* Task.make({ description: "Do it", expectedOutput: "Done", agent: helper })
      yield* Ensemble.make({ agents: [helper], tasks: [alone] })
    }))

  it.effect("a tool named 'delegateTask' in a HIERARCHICAL ensemble", () =>
    Effect.gen(function*() {
      const worker = yield* Agent.make({ role: "Worker", goal: "Work", toolkit: Toolkit.make(DelegateTask) })
      const task = yield* Task.make({ description: "Do it", expectedOutput: "Done", agent: worker })
      const error = yield* Effect.flip(Ensemble.make({ agents: [worker], tasks: [task], workflow: "HIERARCHICAL" }))
      expect(error.message).toBe(
        "Agent 'Worker' has a tool named 'delegateTask', a name this ensemble uses for the manager's delegations: rename the tool"
      )
    }))
})

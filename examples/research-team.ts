/**
 * A research team: a researcher (with a search tool), a writer and a reviewer
 * whose verdict is structured output. The same team runs twice on the
 * embedded scripted model: once SEQUENTIAL, once HIERARCHICAL under a manager
 * with constraints. Progress is printed from the ensemble's events.
 *
 *   npm run demo
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { Prompt } from "effect/ai"
import { ChatModel } from "loopwork"
import { Agent, Ensemble, EnsembleEvent, Task } from "loopwork/ensemble"

// -- Tools --------------------------------------------------------------------

const SearchNotes = Tool.make("search_notes", {
  description: "Search the team's research notes",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Array(Schema.String)
})
export const researchTools = Toolkit.make(SearchNotes)
export const ToolHandlers = researchTools.toLayer({
  search_notes: ({ query }) =>
    Effect.succeed([
      `${query}: typed errors make failures part of the API`,
      `${query}: layers wire services without globals`
    ])
})

// -- The scripted model: replies depend only on the conversation -----------------

const textOf = (message: Prompt.Message | undefined): string =>
  message === undefined ? "" : typeof message.content === "string"
    ? message.content
    : message.content.map((part) => part.type === "text" ? part.text : "").join("")

const reply = (request: ChatModel.GenerateRequest): ChatModel.ScriptedReply => {
  const messages = request.prompt.content
  const role = /^You are (\w+)\./.exec(textOf(messages[0]))?.[1]
  const toolRounds = messages.filter((message) => message.role === "tool").length
  switch (role) {
    case "Researcher":
      return toolRounds === 0
        ? { toolCalls: [{ name: "search_notes", params: { query: "Effect" } }] }
        : { text: "Findings: Effect makes failures part of the type, and layers wire services without globals." }
    case "Writer":
      return { text: "Effect turns errors into values you can see in a function's type, and builds programs from layers." }
    case "Reviewer":
      return { text: JSON.stringify({ approved: true, comments: "Accurate and clear." }) }
    case "Manager": {
      const plan = [
        { agentRole: "researcher", taskDescription: "Research what makes Effect useful for backend services", taskNumber: 1 },
        { agentRole: "Writer", taskDescription: "Write two sentences from the findings", taskNumber: 2 },
        { agentRole: "REVIEWER", taskDescription: "Review the two sentences", taskNumber: 3 }
      ]
      return toolRounds < plan.length
        ? { toolCalls: [{ name: "delegateTask", params: plan[toolRounds] }] }
        : { text: "Effect makes failures visible in types and wires services with layers; the reviewer approved." }
    }
    default:
      return { text: `(no script for ${role ?? "an unknown speaker"})` }
  }
}

export const model = ChatModel.scripted([reply], { repeat: true, latency: "150 millis" })

// -- The team -------------------------------------------------------------------

const Verdict = Schema.Struct({ approved: Schema.Boolean, comments: Schema.String })

export const team = Effect.gen(function*() {
  const researcher = yield* Agent.make({
    role: "Researcher",
    goal: "Find accurate, relevant facts",
    toolkit: researchTools,
    maxIterations: 5
  })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write clear, short prose", responseFormat: "Plain text" })
  const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Check facts and clarity" })
  const research = yield* Task.make({
    description: "Research {topic}",
    expectedOutput: "A few findings",
    agent: researcher
  })
  const write = yield* Task.make({
    description: "Write about {topic} for {audience}",
    expectedOutput: "Two sentences",
    agent: writer,
    context: [research]
  })
  const review = yield* Task.make({
    description: "Review the text about {topic}",
    expectedOutput: "A verdict",
    agent: reviewer,
    context: [write],
    outputType: Verdict
  })
  return { agents: [researcher, writer, reviewer] as const, tasks: [research, write, review] }
})

const inputs = { topic: "Effect", audience: "backend engineers" }

export const sequentialRun = Effect.gen(function*() {
  const { agents, tasks } = yield* team
  const ensemble = yield* Ensemble.make({ agents, tasks })
  return yield* Ensemble.run(ensemble, inputs)
})

export const hierarchicalRun = Effect.gen(function*() {
  const { agents, tasks } = yield* team
  const ensemble = yield* Ensemble.make({
    agents,
    tasks,
    workflow: "HIERARCHICAL",
    constraints: {
      requiredWorkers: ["Researcher", "Reviewer"],
      maxCallsPerWorker: { Writer: 1 },
      requiredStages: [["Researcher"], ["Writer"], ["Reviewer"]]
    }
  })
  return yield* Ensemble.run(ensemble, inputs)
})

// -- Printing progress from events ----------------------------------------------

const line = (event: EnsembleEvent.EnsembleEvent): string => {
  switch (event._tag) {
    case "TaskStarted":
      return `▶ ${event.agentRole}: ${event.taskDescription.split("\n")[0]}`
    case "TaskCompleted":
      return `✓ ${event.agentRole} (${(event.durationMillis / 1000).toFixed(2)}s, ${event.toolCallCount} tool call(s))`
    case "TaskFailed":
      return `✗ ${event.agentRole}: ${event.reason}`
    case "ToolCalled":
      return `  · ${event.agentRole} called ${event.tool}${event.isFailure ? " (failed)" : ""}`
    case "DelegationStarted":
      return `→ ${event.delegatingRole} delegates to ${event.workerRole}`
    case "DelegationCompleted":
      return `← ${event.workerRole} done for ${event.delegatingRole}`
    case "DelegationFailed":
      return `← ${event.workerRole} failed: ${event.reason}`
    case "DelegationRejected":
      return `⊘ ${event.delegatingRole} → ${event.agentRole}: ${event.reason}`
  }
}

export const printing = (print: (text: string) => void) =>
  Effect.provideService(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => print(line(event))) })

if (import.meta.main) {
  const program = Effect.gen(function*() {
    console.log("== SEQUENTIAL ==")
    const first = yield* sequentialRun
    console.log(`final: ${first.raw}`)
    console.log(`${first.taskOutputs.length} tasks, ${first.totalToolCalls} tool call(s)\n`)
    console.log("== HIERARCHICAL (manager with constraints) ==")
    const second = yield* hierarchicalRun
    console.log(`final: ${second.raw}`)
    console.log(
      `${second.delegations.length} delegation(s): ${second.delegations.map((d) => `${d.response.workerRole} ${d.response.status}`).join(", ")}`
    )
  }).pipe(printing(console.log), Effect.provide([model.layer, ToolHandlers]))
  await Effect.runPromise(program)
}

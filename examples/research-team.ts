/**
 * A research team: a researcher (with a search tool), a writer and a reviewer
 * whose verdict is structured output. The same team runs twice: once
 * SEQUENTIAL, once HIERARCHICAL under a manager with constraints. Progress is
 * rendered live from `Ensemble.stream`: a line per model call and tool call
 * with durations and tokens, the final output, and a summary.
 *
 *   npm run demo                                   # the embedded scripted model, no API key
 *   OPENAI_API_KEY=sk-... npm run demo             # a real model through the AI SDK bridge
 *   (optional: OPENAI_BASE_URL for a compatible server, LOOPWORK_MODEL, default gpt-4.1-mini)
 */
import { Duration, Effect, Layer, Schema, Stream } from "effect"
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

export const reply = (request: ChatModel.GenerateRequest): ChatModel.ScriptedReply => {
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

/** Rough token counts (4 characters a token), so the scripted run reports usage like a real one. */
const tokens = (text: string) => Math.ceil(text.length / 4)
const promptText = (request: ChatModel.GenerateRequest) =>
  request.prompt.content.map((message) =>
    typeof message.content === "string"
      ? message.content
      : message.content.map((part) => part.type === "text" ? part.text : JSON.stringify(part)).join("")
  ).join("\n")

export const model = ChatModel.scripted([(request) => {
  const answer = reply(request)
  const written = (answer.text ?? "") + JSON.stringify(answer.toolCalls ?? [])
  return { ...answer, usage: { inputTokens: tokens(promptText(request)), outputTokens: tokens(written) } }
}], { repeat: true, latency: "150 millis" })

/**
 * The model the demo runs on: a real one through `ChatModel.fromAiSdk` when
 * `OPENAI_API_KEY` is set, the scripted one otherwise.
 */
export const modelLayer = (env: Readonly<Record<string, string | undefined>>): Layer.Layer<ChatModel.ChatModel, unknown> => {
  const apiKey = env["OPENAI_API_KEY"]
  if (apiKey === undefined || apiKey === "") return model.layer
  return Layer.unwrap(Effect.promise(async () => {
    const [{ createOpenAI }, { ChatModel: Bridge }] = await Promise.all([import("@ai-sdk/openai"), import("loopwork/ai-sdk")])
    const provider = createOpenAI({ apiKey, ...(env["OPENAI_BASE_URL"] ? { baseURL: env["OPENAI_BASE_URL"] } : {}) })
    return Bridge.fromAiSdk(provider.chat(env["LOOPWORK_MODEL"] ?? "gpt-4.1-mini"), { timeout: "120 seconds" })
  }))
}

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

export const sequentialTeam = Effect.gen(function*() {
  const { agents, tasks } = yield* team
  return yield* Ensemble.make({ agents, tasks })
})

export const hierarchicalTeam = Effect.gen(function*() {
  const { agents, tasks } = yield* team
  return yield* Ensemble.make({
    agents,
    tasks,
    workflow: "HIERARCHICAL",
    constraints: {
      requiredWorkers: ["Researcher", "Reviewer"],
      maxCallsPerWorker: { Writer: 1 },
      requiredStages: [["Researcher"], ["Writer"], ["Reviewer"]]
    }
  })
})

export const sequentialRun = Effect.flatMap(sequentialTeam, (ensemble) => Ensemble.run(ensemble, inputs))
export const hierarchicalRun = Effect.flatMap(hierarchicalTeam, (ensemble) => Ensemble.run(ensemble, inputs))

// -- Rendering progress from the event stream -----------------------------------

const seconds = (millis: number) => `${(millis / 1000).toFixed(2)}s`
const clip = (text: string, width = 60) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`
}

/** Totals for the summary line. */
export interface Totals {
  modelCalls: number
  toolCalls: number
  inputTokens: number
  outputTokens: number
}

/** The lines an event prints (often none), adding to `totals`. */
export const render = (event: EnsembleEvent.EnsembleEvent, totals: Totals): ReadonlyArray<string> => {
  switch (event._tag) {
    case "TaskStarted":
      return [`▶ ${event.agentRole} · ${clip(event.taskDescription.split("\n")[0])}`]
    case "TaskCompleted":
      return [`✓ ${event.agentRole} done in ${seconds(event.durationMillis)}`]
    case "TaskFailed":
      return [`✗ ${event.agentRole}: ${event.reason}`]
    case "DelegationStarted":
      return [`→ ${event.delegatingRole} delegates to ${event.workerRole}`]
    case "DelegationCompleted":
      return [`← ${event.workerRole} done for ${event.delegatingRole}`]
    case "DelegationFailed":
      return [`← ${event.workerRole} failed: ${event.reason}`]
    case "DelegationRejected":
      return [`⊘ ${event.delegatingRole} → ${event.agentRole}: ${event.reason}`]
    case "ToolCalled":
    case "EnsembleFailed":
      return []
    case "EnsembleCompleted":
      return [`final: ${event.output.raw}`]
    case "AgentRun": {
      const run = event.event
      switch (run._tag) {
        case "ModelCallFinished": {
          totals.modelCalls++
          totals.inputTokens += run.usage.inputTokens ?? 0
          totals.outputTokens += run.usage.outputTokens ?? 0
          const said = run.toolCalls.length > 0 ? `→ ${run.toolCalls.map((call) => call.name).join(", ")}` : `"${clip(run.text)}"`
          const used = `${run.usage.inputTokens ?? "?"}→${run.usage.outputTokens ?? "?"} tokens`
          return [`  ◆ ${event.agentRole} model call ${run.call}  ${seconds(run.durationMillis)}  ${used}  ${said}`]
        }
        case "ModelCallFailed":
          return [`  ✗ ${event.agentRole} model call ${run.call} failed (attempt ${run.attempt}): ${run.message}`]
        case "ToolCallFinished":
          totals.toolCalls++
          return [`  ⚙ ${event.agentRole} ${run.name}  ${seconds(run.durationMillis)}  ${run.status}`]
        default:
          return []
      }
    }
  }
}

/** Runs `ensemble`, printing its progress; returns the output. */
export const watch = <R>(ensemble: Ensemble.Ensemble<R>, print: (text: string) => void) =>
  Effect.gen(function*() {
    const totals: Totals = { modelCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 }
    let output: EnsembleEvent.EnsembleEvent & { readonly _tag: "EnsembleCompleted" } | undefined
    yield* Ensemble.stream(ensemble, inputs).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag === "EnsembleCompleted") output = event
          for (const line of render(event, totals)) print(line)
        })
      )
    )
    const done = output!.output
    print(
      `summary: ${done.taskOutputs.length} task outputs · ${totals.modelCalls} model calls · ${totals.toolCalls} tool calls · ` +
        `${totals.inputTokens}→${totals.outputTokens} tokens · ${seconds(Duration.toMillis(done.totalDuration))}`
    )
    return done
  })

if (import.meta.main) {
  const print = (text: string) => console.log(text)
  const program = Effect.gen(function*() {
    print("== SEQUENTIAL ==")
    yield* watch(yield* sequentialTeam, print)
    print("\n== HIERARCHICAL (manager with constraints) ==")
    const second = yield* watch(yield* hierarchicalTeam, print)
    print(
      `${second.delegations.length} delegation(s): ${second.delegations.map((d) => `${d.response.workerRole} ${d.response.status}`).join(", ")}`
    )
  }).pipe(Effect.provide([modelLayer(process.env), ToolHandlers]))
  await Effect.runPromise(program)
}

/**
 * Fixtures of the HIERARCHICAL workflow tests (test/ensemble/Hierarchical*.test.ts): the
 * manager's and the workers' prompts as the agents see them, a scripted manager that delegates,
 * workers, and helpers that read the delegation records of a run.
 */
import { Duration, Effect } from "effect"
import type { Prompt } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import type { HierarchicalConstraints, TaskOutput } from "../../src/ensemble/index.ts"
import { toolkit } from "./ensemble.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The fixed closing paragraph of every system prompt (see AgentPrompt.system). */
export const closing = "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."

export const managerGoal =
  "Coordinate the worker agents to complete every task, then combine their results into one final answer"

/** The manager's system prompt for a team listing. */
export const managerSystem = (team: ReadonlyArray<string>): string =>
  [
    "You are Manager.",
    `Your team:\n${team.join("\n")}\n\n` +
    "Use the delegateTask tool to give work to your team, review what they return, and write the final answer.",
    `Your goal: ${managerGoal}`,
    closing
  ].join("\n\n")

/** The manager's user prompt for a list of (filled) tasks. */
export const managerUser = (tasks: ReadonlyArray<readonly [string, string, string]>): string =>
  "## Task\nCoordinate your team to complete these tasks:\n\n" +
  tasks.map(([description, expected, role], i) =>
    `Task ${i + 1} (suggested: ${role}): ${description}\nExpected output: ${expected}`
  ).join("\n\n") +
  "\n\nDelegate each task to the most suitable team member with delegateTask, passing its number as taskNumber. " +
  "When all are done, combine the results into a final answer.\n\n" +
  "## Expected output\nA final answer combining the outputs of all delegated tasks"

export const managerTaskDescription = (tasks: ReadonlyArray<readonly [string, string, string]>): string =>
  managerUser(tasks).slice("## Task\n".length, managerUser(tasks).indexOf("\n\n## Expected output"))

/** The user prompt of a delegated piece of work. */
export const workerUser = (description: string): string =>
  `## Task\n${description}\n\n## Expected output\nComplete the assigned task thoroughly`

export const lookupHandlers = toolkit.toLayer({ lookup: ({ query }) => Effect.succeed(`found ${query}`) })

export const makeResearcher = () =>
  Agent.make({ role: "Researcher", goal: "Find reliable facts", background: "You have read every paper." })
export const makeWriter = () => Agent.make({ role: "Writer", goal: "Write clear prose" })
export const makeReviewer = () => Agent.make({ role: "Reviewer", goal: "Catch mistakes", background: "  " })

export const researcherSystem = ["You are Researcher.", "You have read every paper.", "Your goal: Find reliable facts", closing]
  .join("\n\n")
export const writerSystem = ["You are Writer.", "Your goal: Write clear prose", closing].join("\n\n")

/** The team listing of Researcher, Writer, Reviewer (a blank background is omitted). */
export const team3 = [
  "1. Researcher\n   Goal: Find reliable facts\n   Background: You have read every paper.",
  "2. Writer\n   Goal: Write clear prose",
  "3. Reviewer\n   Goal: Catch mistakes"
]

/** The text of a message: a system string, or the text parts of any other message. */
export const messageText = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")

/** One line per message: role and content, tool calls and results included. */
/** What the model was offered in each request. */
export const offered = (model: ChatModel.ScriptedModel) =>
  model.requests.map((request) => ({ tools: request.tools.map((tool) => tool.name), toolChoice: request.toolChoice }))

/**
 * The tool results the manager saw, in order: each `delegateTask` result is
 * the last message of the manager's next request ("ok …" or "failed …").
 */
export const managerSaw = (manager: ChatModel.ScriptedModel): ReadonlyArray<string> =>
  manager.requests.flatMap((request) => {
    const last = request.prompt.content[request.prompt.content.length - 1]
    if (last.role !== "tool") return []
    return last.content.flatMap((part) =>
      part.type === "tool-result" ? [`${part.isFailure ? "failed" : "ok"} ${String(part.result)}`] : []
    )
  })

/** A task's output without its time fields. */
export const summary = (output: TaskOutput.TaskOutput) => {
  const { completedAt: _completedAt, duration: _duration, ...rest } = output
  return rest
}

/**
 * A worker model: answers "<Role> did: <task>" from the prompt it gets, or
 * fails ("<Role> is overloaded") when the task holds "[fail]". Order-proof, so
 * it can serve any number of delegations.
 */
export const workerTurn = (latency?: Duration.Input): ChatModel.ScriptedTurn => (request) => {
  const [system, user] = request.prompt.content.map(messageText)
  const role = /^You are (.*?)\./.exec(system)?.[1] ?? "?"
  const task = /^## Task\n([\s\S]*?)\n\n## Expected output/.exec(user)?.[1] ?? "?"
  const reply: ChatModel.ScriptedReply = task.includes("[fail]")
    ? { fail: `${role} is overloaded` }
    : { text: `${role} did: ${task}` }
  return latency === undefined ? reply : { ...reply, latency }
}
export const workerModel = (n = 20, latency?: Duration.Input) =>
  ChatModel.scripted(Array.from({ length: n }, () => workerTurn(latency)))

export interface Call {
  readonly agentRole: string
  readonly taskDescription: string
}

/** A delegation to `role` of the task "<role> work #i" (or the given description). */
export const to = (agentRole: string, taskDescription = `${agentRole.trim()} work`): Call => ({ agentRole, taskDescription })

/** A manager model: one delegateTask call per turn, then `final`. */
export const managerModel = (calls: ReadonlyArray<Call>, final = "Final synthesis.") =>
  ChatModel.scripted([
    ...calls.map((params) => ({ toolCalls: [{ name: "delegateTask", params }] })),
    { text: final }
  ])

export const ok = (role: string, task: string) => `ok ${role} did: ${task}`
export const rejected = (reason: string) => `ok Delegation rejected: ${reason}`

export const asTaskExecutionError = (error: EnsembleError.EnsembleError): EnsembleError.TaskExecutionError => {
  if (error._tag !== "TaskExecutionError") throw new globalThis.Error(`expected TaskExecutionError, got ${error._tag}`)
  return error
}
export const asConstraintViolation = (error: EnsembleError.EnsembleError): EnsembleError.ConstraintViolationError => {
  if (error._tag !== "ConstraintViolationError") {
    throw new globalThis.Error(`expected ConstraintViolationError, got ${error._tag}: ${error.message}`)
  }
  return error
}
export const asValidation = (error: EnsembleError.ValidationError | EnsembleError.EnsembleError) => {
  if (error._tag !== "ValidationError") throw new globalThis.Error(`expected ValidationError, got ${error._tag}`)
  return error
}

/** The three-worker hierarchical ensemble used by most tests. */
export const makeTeam = (
  options: {
    readonly constraints?: HierarchicalConstraints.HierarchicalConstraints
    readonly managerLlm?: ChatModel.ScriptedModel
    readonly managerMaxIterations?: number
  } = {}
) =>
  Effect.gen(function*() {
    const researcher = yield* makeResearcher()
    const writer = yield* makeWriter()
    const reviewer = yield* makeReviewer()
    const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Facts about {topic}", agent: researcher })
    const write = yield* Task.make({ description: "Write about {topic}", expectedOutput: "Two paragraphs", agent: writer })
    const review = yield* Task.make({ description: "Review the article", expectedOutput: "A verdict", agent: reviewer })
    return yield* Ensemble.make({
      agents: [researcher, writer, reviewer],
      tasks: [research, write, review],
      workflow: "HIERARCHICAL",
      ...(options.constraints === undefined ? {} : { constraints: options.constraints }),
      ...(options.managerLlm === undefined ? {} : { managerLlm: options.managerLlm.layer }),
      ...(options.managerMaxIterations === undefined ? {} : { managerMaxIterations: options.managerMaxIterations })
    })
  })

export const teamTasks: ReadonlyArray<readonly [string, string, string]> = [
  ["Research Effect", "Facts about Effect", "Researcher"],
  ["Write about Effect", "Two paragraphs", "Writer"],
  ["Review the article", "A verdict", "Reviewer"]
]

export const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
export const stageWait = (worker: string, stage: number, waiting: string) =>
  `Worker '${worker}' cannot be delegated to yet: stage ${stage} worker '${waiting}' has not yet completed. ` +
  "All workers in earlier stages must complete before this stage can begin."

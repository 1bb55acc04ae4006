import { describe, expect, it } from "@effect/vitest"
import { Clock, DateTime, Duration, Effect, Fiber } from "effect"
import type { Prompt } from "effect/ai"
import { TestClock } from "effect/testing"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import type { TaskOutput } from "../../src/ensemble/index.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const makeAnalyst = () => Agent.make({ role: "Analyst", goal: "Gather numbers", toolkit })
const makeWriter = () => Agent.make({ role: "Writer", goal: "Write clear prose" })

/** The system prompt of an agent without background or response format (see AgentPrompt.system). */
const systemOf = (role: string, goal: string): string =>
  `system: You are ${role}.\n\nYour goal: ${goal}\n\n` +
  "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."
const analystSystem = systemOf("Analyst", "Gather numbers")
const writerSystem = systemOf("Writer", "Write clear prose")

/** The user prompt of a task (see AgentPrompt.user); `context` is [role, description, raw] in prompt order. */
const userOf = (
  description: string,
  expectedOutput: string,
  context: ReadonlyArray<readonly [string, string, string]> = []
): string => {
  const sections: Array<string> = []
  if (context.length > 0) {
    sections.push(
      "## Context from earlier tasks\n" +
        context.map(([role, task, raw]) => `### ${role}: ${task}\n${raw}`).join("\n\n")
    )
  }
  sections.push(`## Task\n${description}`, `## Expected output\n${expectedOutput}`)
  return `user: ${sections.join("\n\n")}`
}

/** The text of a message: a system string, or the text parts of any other message. */
const messageText = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")

const transcript = (request: ChatModel.GenerateRequest): ReadonlyArray<string> =>
  request.prompt.content.map((message) => `${message.role}: ${messageText(message)}`)

/** The task a request is about, read from its user prompt. */
const taskOf = (request: ChatModel.GenerateRequest): string => {
  const user = request.prompt.content.find((message) => message.role === "user")
  const match = user === undefined ? null : /## Task\n([\s\S]*?)\n\n## Expected output/.exec(messageText(user))
  return match === null ? "<no task>" : match[1]
}

/** How the model behaves for one task (keyed by the task's resolved description). */
interface Plan {
  readonly text?: string | undefined
  readonly latency?: Duration.Input | undefined
  readonly fail?: string | undefined
  /** Calls `lookup` this many times in its first turn, then answers. */
  readonly lookups?: number | undefined
}

/**
 * A scripted model whose every turn is a function of the request, so the
 * order in which concurrent tasks call it does not matter. `starts` records,
 * per task, the simulated time of its first model call.
 */
const planned = (plans: Readonly<Record<string, Plan>>) => {
  const starts: Record<string, number> = {}
  const turn: ChatModel.ScriptedTurn = (request) =>
    Effect.map(Clock.currentTimeMillis, (now): ChatModel.ScriptedReply => {
      const task = taskOf(request)
      const plan = plans[task]
      if (plan === undefined) return { fail: `no plan for task '${task}'` }
      const text = plan.text ?? `Result of ${task}.`
      const last = request.prompt.content[request.prompt.content.length - 1]
      if (last?.role === "tool") return { text }
      starts[task] = now
      const lookups = plan.lookups ?? 0
      if (lookups > 0) {
        return {
          toolCalls: Array.from({ length: lookups }, (_, i) => ({ name: "lookup", params: { query: `${task} #${i + 1}` } })),
          latency: plan.latency
        }
      }
      return { text, latency: plan.latency, fail: plan.fail }
    })
  const model = ChatModel.scripted(Array.from({ length: 40 }, () => turn))
  return { model, starts }
}

/** Description and completion time (ms) of each output, in order. */
const completions = (outputs: ReadonlyArray<TaskOutput.TaskOutput>): ReadonlyArray<readonly [string, number]> =>
  outputs.map((output) => [output.taskDescription, DateTime.toEpochMillis(output.completedAt)] as const)

/** Lets the forked run reach `at` ms: still running 1 ms before, finished at `at`. */
const finishesExactlyAt = <A, E>(fiber: Fiber.Fiber<A, E>, at: number) =>
  Effect.gen(function*() {
    yield* TestClock.adjust(Duration.millis(at - 1))
    expect(fiber.pollUnsafe()).toBeUndefined()
    yield* TestClock.adjust(Duration.millis(1))
    expect(fiber.pollUnsafe()).toBeDefined()
  })

/** A writable view of a task, to build what `Task.make` cannot (a context cycle). */
type Mutable<T> = { -readonly [K in keyof T]: T[K] }

// -----------------------------------------------------------------------------
// The DAG: list order, dependencies, context
// -----------------------------------------------------------------------------

describe("PARALLEL: tasks form a DAG from their context", () => {
  it.effect("list order does not matter: a chain listed backwards runs research -> write -> review; raw is the last task in the list", () => {
    const { model } = planned({
      "Research tea": { text: "Tea facts." },
      "Write about tea": { text: "Tea article." },
      "Review the tea article": { text: "Approved." }
    })
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const analyst = yield* makeAnalyst()
      const writer = yield* makeWriter()
      const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Facts", agent: analyst })
      const write = yield* Task.make({
        description: "Write about {topic}",
        expectedOutput: "An article",
        agent: writer,
        context: [research]
      })
      const review = yield* Task.make({
        description: "Review the {topic} article",
        expectedOutput: "A verdict",
        agent: writer,
        context: [write]
      })
      const config = { agents: [analyst, writer], tasks: [review, write, research] } as const

      // SEQUENTIAL refuses this list; PARALLEL accepts it.
      const refused = yield* Effect.flip(Ensemble.make(config))
      expect(refused).toBeInstanceOf(EnsembleError.ValidationError)
      expect(refused.message).toBe(
        "Task 'Review the {topic} article' references context task 'Write about {topic}' which appears later in the task list"
      )
      const ensemble = yield* Ensemble.make({ ...config, workflow: "PARALLEL" })
      const output = yield* Ensemble.run(ensemble, { topic: "tea" })

      expect(model.requests.map(transcript)).toEqual([
        [analystSystem, userOf("Research tea", "Facts")],
        [writerSystem, userOf("Write about tea", "An article", [["Analyst", "Research tea", "Tea facts."]])],
        [writerSystem, userOf("Review the tea article", "A verdict", [["Writer", "Write about tea", "Tea article."]])]
      ])
      expect(output.taskOutputs.map((o) => [o.taskDescription, o.agentRole, o.raw])).toEqual([
        ["Research tea", "Analyst", "Tea facts."],
        ["Write about tea", "Writer", "Tea article."],
        ["Review the tea article", "Writer", "Approved."]
      ])
      // raw is the output of the LAST task in the list (research), not the last to complete
      expect(output.raw).toBe("Tea facts.")
      expect(output.totalToolCalls).toBe(0)
      expect(model.calls).toBe(3)
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a dependent starts only after ALL its dependencies, gets their outputs in its context order; a shared dependency runs once", () => {
    const { model, starts } = planned({
      "Gather sales": { text: "Sales: 12.", latency: "10 seconds" },
      "Gather costs": { text: "Costs: 7.", latency: "4 seconds" },
      "Draft intro": { text: "Intro.", latency: "1 second" },
      "Compute margin": { text: "Margin: 5.", latency: "3 seconds" },
      "Write report": { text: "Report.", latency: "2 seconds" }
    })
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const analyst = yield* makeAnalyst()
      const writer = yield* makeWriter()
      const sales = yield* Task.make({ description: "Gather sales", expectedOutput: "A number", agent: analyst })
      const costs = yield* Task.make({ description: "Gather costs", expectedOutput: "A number", agent: analyst })
      const intro = yield* Task.make({ description: "Draft intro", expectedOutput: "A sentence", agent: writer })
      // context order: sales (finishes at 10 s) before costs (finishes at 4 s)
      const margin = yield* Task.make({
        description: "Compute margin",
        expectedOutput: "A number",
        agent: analyst,
        context: [sales, costs]
      })
      const report = yield* Task.make({
        description: "Write report",
        expectedOutput: "A page",
        agent: writer,
        context: [margin, costs]
      })
      const ensemble = yield* Ensemble.make({
        agents: [analyst, writer],
        tasks: [report, margin, sales, costs, intro],
        workflow: "PARALLEL"
      })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))

      yield* TestClock.adjust("9999 millis")
      // costs finished at 4 s, but margin still waits for sales
      expect(model.calls).toBe(3)
      expect(starts).toEqual({ "Gather sales": 0, "Gather costs": 0, "Draft intro": 0 })
      yield* TestClock.adjust("1 millis")
      expect(model.calls).toBe(4)
      yield* finishesExactlyAt(fiber, 5000)
      const output = yield* Fiber.join(fiber)

      expect(starts).toEqual({
        "Gather sales": 0,
        "Gather costs": 0,
        "Draft intro": 0,
        "Compute margin": 10000,
        "Write report": 13000
      })
      expect(model.calls).toBe(5)
      const request = (task: string) => model.requests.find((r) => taskOf(r) === task)
      expect(request("Compute margin")).toBeDefined()
      expect(transcript(request("Compute margin")!)).toEqual([
        analystSystem,
        userOf("Compute margin", "A number", [["Analyst", "Gather sales", "Sales: 12."], [
          "Analyst",
          "Gather costs",
          "Costs: 7."
        ]])
      ])
      expect(transcript(request("Write report")!)).toEqual([
        writerSystem,
        userOf("Write report", "A page", [["Analyst", "Compute margin", "Margin: 5."], ["Analyst", "Gather costs", "Costs: 7."]])
      ])
      for (const [task, expected] of [["Gather sales", "A number"], ["Gather costs", "A number"], ["Draft intro", "A sentence"]]) {
        expect(transcript(request(task)!)[1]).toBe(userOf(task, expected))
      }
      // completion order
      expect(completions(output.taskOutputs)).toEqual([
        ["Draft intro", 1000],
        ["Gather costs", 4000],
        ["Gather sales", 10000],
        ["Compute margin", 13000],
        ["Write report", 15000]
      ])
      expect(output.taskOutputs.map((o) => Duration.toMillis(o.duration))).toEqual([1000, 4000, 10000, 3000, 2000])
      expect(Duration.toMillis(output.totalDuration)).toBe(15000)
      // the last task in the list is "Draft intro", which completed first
      expect(output.raw).toBe("Intro.")
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("totalToolCalls sums the tool calls of every task; each output counts its own", () => {
    const { model } = planned({
      "Look up tea": { lookups: 2, text: "Tea: 3 shops." },
      "Look up coffee": { lookups: 1, text: "Coffee: 5 shops." },
      "Compare drinks": { text: "Coffee wins." }
    })
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const analyst = yield* makeAnalyst()
      const writer = yield* makeWriter()
      const tea = yield* Task.make({ description: "Look up tea", expectedOutput: "Counts", agent: analyst })
      const coffee = yield* Task.make({ description: "Look up coffee", expectedOutput: "Counts", agent: analyst })
      const compare = yield* Task.make({
        description: "Compare drinks",
        expectedOutput: "A verdict",
        agent: writer,
        context: [tea, coffee]
      })
      const ensemble = yield* Ensemble.make({ agents: [analyst, writer], tasks: [compare, tea, coffee], workflow: "PARALLEL" })
      const output = yield* Ensemble.run(ensemble)

      expect(Object.fromEntries(output.taskOutputs.map((o) => [o.taskDescription, [o.toolCallCount, o.raw]]))).toEqual({
        "Look up tea": [2, "Tea: 3 shops."],
        "Look up coffee": [1, "Coffee: 5 shops."],
        "Compare drinks": [0, "Coffee wins."]
      })
      expect(output.taskOutputs[2].taskDescription).toBe("Compare drinks")
      expect(output.totalToolCalls).toBe(3)
      expect([...handlers.queries].sort()).toEqual(["Look up coffee #1", "Look up tea #1", "Look up tea #2"])
      expect(model.calls).toBe(5)
      // the last task in the list is "Look up coffee"
      expect(output.raw).toBe("Coffee: 5 shops.")
      const compareRequest = model.requests.find((r) => taskOf(r) === "Compare drinks")!
      expect(transcript(compareRequest)).toEqual([
        writerSystem,
        userOf("Compare drinks", "A verdict", [["Analyst", "Look up tea", "Tea: 3 shops."], [
          "Analyst",
          "Look up coffee",
          "Coffee: 5 shops."
        ]])
      ])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// Concurrency
// -----------------------------------------------------------------------------

interface ConcurrencyRow {
  readonly name: string
  readonly concurrency?: number | "unbounded" | undefined
  /** Independent tasks, in list order: [description, latency in seconds]. */
  readonly tasks: ReadonlyArray<readonly [string, number]>
  readonly starts: Readonly<Record<string, number>>
  readonly completed: ReadonlyArray<readonly [string, number]>
  readonly endsAt: number
}

const concurrencyRows: ReadonlyArray<ConcurrencyRow> = [
  {
    name: "default (unbounded): two independent 10 s tasks run at once and finish at 10 s, not 20 s",
    tasks: [["One", 10], ["Two", 10]],
    starts: { One: 0, Two: 0 },
    completed: [["One", 10000], ["Two", 10000]],
    endsAt: 10000
  },
  {
    name: "concurrency: 1 serialises two 10 s tasks: 20 s",
    concurrency: 1,
    tasks: [["One", 10], ["Two", 10]],
    starts: { One: 0, Two: 10000 },
    completed: [["One", 10000], ["Two", 20000]],
    endsAt: 20000
  },
  {
    name: "concurrency: 2 with three 10 s tasks: the third starts when a slot frees at 10 s",
    concurrency: 2,
    tasks: [["One", 10], ["Two", 10], ["Three", 10]],
    starts: { One: 0, Two: 0, Three: 10000 },
    completed: [["One", 10000], ["Two", 10000], ["Three", 20000]],
    endsAt: 20000
  },
  {
    name: "concurrency: 2 with tasks of 10 s, 5 s, 10 s: the third takes the 5 s task's slot",
    concurrency: 2,
    tasks: [["One", 10], ["Two", 5], ["Three", 10]],
    starts: { One: 0, Two: 0, Three: 5000 },
    completed: [["Two", 5000], ["One", 10000], ["Three", 15000]],
    endsAt: 15000
  },
  {
    name: "concurrency: \"unbounded\": three tasks all start at 0; outputs in completion order",
    concurrency: "unbounded",
    tasks: [["One", 10], ["Two", 5], ["Three", 3]],
    starts: { One: 0, Two: 0, Three: 0 },
    completed: [["Three", 3000], ["Two", 5000], ["One", 10000]],
    endsAt: 10000
  }
]

describe("PARALLEL: independent tasks run concurrently, at most `concurrency` at once", () => {
  for (const row of concurrencyRows) {
    it.effect(row.name, () => {
      const { model, starts } = planned(
        Object.fromEntries(row.tasks.map(([task, seconds]) => [task, { text: `${task} done.`, latency: `${seconds} seconds` }]))
      )
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const analyst = yield* makeAnalyst()
        const tasks: Array<Task.Task> = []
        for (const [description] of row.tasks) {
          tasks.push(yield* Task.make({ description, expectedOutput: "Done", agent: analyst }))
        }
        const ensemble = yield* Ensemble.make({
          agents: [analyst],
          tasks,
          workflow: "PARALLEL",
          ...(row.concurrency === undefined ? {} : { concurrency: row.concurrency })
        })
        const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))
        yield* finishesExactlyAt(fiber, row.endsAt)
        const output = yield* Fiber.join(fiber)

        expect(starts).toEqual(row.starts)
        expect(completions(output.taskOutputs)).toEqual(row.completed)
        expect(Duration.toMillis(output.totalDuration)).toBe(row.endsAt)
        expect(model.calls).toBe(row.tasks.length)
        // raw: the LAST task in the list, whatever order they completed in
        expect(output.raw).toBe(`${row.tasks[row.tasks.length - 1][0]} done.`)
        for (const request of model.requests) {
          expect(transcript(request)).toEqual([analystSystem, userOf(taskOf(request), "Done")])
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Error strategies
// -----------------------------------------------------------------------------

/**
 * One graph for every row (list order; latencies; who fails):
 *
 *   A "Fetch prices of {product}" (Analyst, 2 s, fails "overloaded")
 *   B "Fetch news"                (Analyst, 10 s)
 *   C "Compare prices of {product}" (Writer, 1 s)   <- A
 *   D "Publish comparison"        (Writer, 1 s)     <- C
 *   E "Count stores"              (Analyst, 1 s)
 *   F "Summarise news"            (Writer, 3 s)     <- B
 *   G "Fetch reviews"             (Analyst, 5 s, fails "timed out")
 *   H "Rank reviews"              (Writer, 1 s)     <- G
 */
const errorPlans: Readonly<Record<string, Plan>> = {
  "Fetch prices of tea": { latency: "2 seconds", fail: "overloaded" },
  "Fetch news": { latency: "10 seconds", text: "News." },
  "Compare prices of tea": { latency: "1 second" },
  "Publish comparison": { latency: "1 second" },
  "Count stores": { latency: "1 second", text: "4 stores." },
  "Summarise news": { latency: "3 seconds", text: "Summary." },
  "Fetch reviews": { latency: "5 seconds", fail: "timed out" },
  "Rank reviews": { latency: "1 second" }
}

const pricesFailed = {
  taskDescription: "Fetch prices of tea",
  agentRole: "Analyst",
  reason: "The model call failed: overloaded"
}
const reviewsFailed = { taskDescription: "Fetch reviews", agentRole: "Analyst", reason: "The model call failed: timed out" }
const failFastError = {
  _tag: "TaskExecutionError",
  message: "Task 'Fetch prices of tea' (agent 'Analyst') failed: The model call failed: overloaded",
  ...pricesFailed
}
const continueMessage = "2 task(s) failed: 'Fetch prices of tea' (Analyst): The model call failed: overloaded; " +
  "'Fetch reviews' (Analyst): The model call failed: timed out; " +
  "skipped because a task they depend on failed: 'Compare prices of tea', 'Publish comparison', 'Rank reviews'"

interface ErrorRow {
  readonly name: string
  readonly onError?: "fail-fast" | "continue" | undefined
  readonly concurrency?: number | undefined
  readonly error: Readonly<Record<string, unknown>>
  /** Completed outputs carried by the error: [description, completedAt ms]. */
  readonly completed: ReadonlyArray<readonly [string, number]>
  /** The first model call of each task that started. */
  readonly starts: Readonly<Record<string, number>>
  readonly endsAt: number
}

const errorRows: ReadonlyArray<ErrorRow> = [
  {
    name: "default (fail-fast): no task starts after the first failure; running ones finish and are kept",
    error: failFastError,
    // B and G were already running when A failed at 2 s; B finished at 10 s, F (after B) never starts
    completed: [["Count stores", 1000], ["Fetch news", 10000]],
    starts: { "Fetch prices of tea": 0, "Fetch news": 0, "Count stores": 0, "Fetch reviews": 0 },
    endsAt: 10000
  },
  {
    name: "onError: \"fail-fast\" behaves as the default",
    onError: "fail-fast",
    error: failFastError,
    completed: [["Count stores", 1000], ["Fetch news", 10000]],
    starts: { "Fetch prices of tea": 0, "Fetch news": 0, "Count stores": 0, "Fetch reviews": 0 },
    endsAt: 10000
  },
  {
    name: "fail-fast with concurrency: 1: the tasks waiting for a slot never start",
    onError: "fail-fast",
    concurrency: 1,
    error: failFastError,
    completed: [],
    starts: { "Fetch prices of tea": 0 },
    endsAt: 2000
  },
  {
    name: "onError: \"continue\": dependents (transitively) of a failed task are skipped, every other task runs",
    onError: "continue",
    error: {
      _tag: "ParallelExecutionError",
      message: continueMessage,
      failures: [pricesFailed, reviewsFailed],
      skipped: ["Compare prices of tea", "Publish comparison", "Rank reviews"]
    },
    completed: [["Count stores", 1000], ["Fetch news", 10000], ["Summarise news", 13000]],
    starts: { "Fetch prices of tea": 0, "Fetch news": 0, "Count stores": 0, "Fetch reviews": 0, "Summarise news": 10000 },
    endsAt: 13000
  },
  {
    name: "continue with concurrency: 1: one task at a time, in turn, skipping the failed tasks' dependents",
    onError: "continue",
    concurrency: 1,
    error: {
      _tag: "ParallelExecutionError",
      message: continueMessage,
      failures: [pricesFailed, reviewsFailed],
      skipped: ["Compare prices of tea", "Publish comparison", "Rank reviews"]
    },
    completed: [["Fetch news", 12000], ["Count stores", 13000], ["Summarise news", 21000]],
    starts: {
      "Fetch prices of tea": 0,
      "Fetch news": 2000,
      "Count stores": 12000,
      "Fetch reviews": 13000,
      "Summarise news": 18000
    },
    endsAt: 21000
  }
]

/** The fields of an ensemble error a row compares, and its completed outputs. */
const errorFields = (error: EnsembleError.EnsembleError) => {
  switch (error._tag) {
    case "TaskExecutionError":
      expect(error).toBeInstanceOf(EnsembleError.TaskExecutionError)
      return {
        fields: {
          _tag: error._tag,
          message: error.message,
          taskDescription: error.taskDescription,
          agentRole: error.agentRole,
          reason: error.reason
        },
        completed: error.completedOutputs
      }
    case "ParallelExecutionError":
      expect(error).toBeInstanceOf(EnsembleError.ParallelExecutionError)
      return {
        fields: { _tag: error._tag, message: error.message, failures: error.failures, skipped: error.skipped },
        completed: error.completedOutputs
      }
    default:
      return { fields: { _tag: error._tag, message: error.message }, completed: [] }
  }
}

describe("PARALLEL: error strategies", () => {
  for (const row of errorRows) {
    it.effect(row.name, () => {
      const { model, starts } = planned(errorPlans)
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const analyst = yield* makeAnalyst()
        const writer = yield* makeWriter()
        const make = (description: string, agent: Agent.Any, context: ReadonlyArray<Task.Task> = []) =>
          Task.make({ description, expectedOutput: "Something", agent, context })
        const a = yield* make("Fetch prices of {product}", analyst)
        const b = yield* make("Fetch news", analyst)
        const c = yield* make("Compare prices of {product}", writer, [a])
        const d = yield* make("Publish comparison", writer, [c])
        const e = yield* make("Count stores", analyst)
        const f = yield* make("Summarise news", writer, [b])
        const g = yield* make("Fetch reviews", analyst)
        const h = yield* make("Rank reviews", writer, [g])
        const ensemble = yield* Ensemble.make({
          agents: [analyst, writer],
          tasks: [a, b, c, d, e, f, g, h],
          workflow: "PARALLEL",
          ...(row.onError === undefined ? {} : { onError: row.onError }),
          ...(row.concurrency === undefined ? {} : { concurrency: row.concurrency })
        })
        const fiber = yield* Effect.forkChild(Ensemble.run(ensemble, { product: "tea" }))
        yield* finishesExactlyAt(fiber, row.endsAt)
        const error = yield* Effect.flip(Fiber.join(fiber))

        const { completed, fields } = errorFields(error)
        expect(fields).toEqual(row.error)
        expect(completions(completed)).toEqual(row.completed)
        expect(completed.map((o) => o.raw)).toEqual(
          row.completed.map(([task]) => errorPlans[task].text ?? `Result of ${task}.`)
        )
        expect(starts).toEqual(row.starts)
        expect(model.calls).toBe(Object.keys(row.starts).length)
        // F got B's output as its context
        const summarise = model.requests.find((r) => taskOf(r) === "Summarise news")
        if (summarise !== undefined) {
          expect(transcript(summarise)[1]).toBe(userOf("Summarise news", "Something", [["Analyst", "Fetch news", "News."]]))
        }
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Validation of the PARALLEL options
// -----------------------------------------------------------------------------

interface OptionRow {
  readonly name: string
  readonly options: Readonly<Record<string, unknown>>
  readonly message: string
}

const optionRows: ReadonlyArray<OptionRow> = [
  {
    name: "concurrency: 0",
    options: { concurrency: 0 },
    message: "Ensemble concurrency must be a positive integer or \"unbounded\", got: 0"
  },
  {
    name: "concurrency: -2",
    options: { concurrency: -2 },
    message: "Ensemble concurrency must be a positive integer or \"unbounded\", got: -2"
  },
  {
    name: "concurrency: 1.5",
    options: { concurrency: 1.5 },
    message: "Ensemble concurrency must be a positive integer or \"unbounded\", got: 1.5"
  },
  {
    name: "onError: \"sometimes\"",
    options: { onError: "sometimes" },
    message: "Ensemble onError must be \"fail-fast\" or \"continue\", got: sometimes"
  },
  {
    name: "workflow: \"DIAGONAL\"",
    options: { workflow: "DIAGONAL" },
    message: "Ensemble workflow must be SEQUENTIAL, PARALLEL or HIERARCHICAL, got: DIAGONAL"
  },
  {
    name: "workflow: \"parallel\" (lower case)",
    options: { workflow: "parallel" },
    message: "Ensemble workflow must be SEQUENTIAL, PARALLEL or HIERARCHICAL, got: parallel"
  }
]

describe("PARALLEL: invalid options fail Ensemble.make with ValidationError", () => {
  for (const row of optionRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const writer = yield* makeWriter()
        const task = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
        // Built through `unknown`: these values are outside the option types on purpose.
        const config = { agents: [writer], tasks: [task], workflow: "PARALLEL", ...row.options } as unknown as Ensemble.Config<
          ReadonlyArray<Agent.Any>
        >
        const error = yield* Effect.flip(Ensemble.make(config))
        expect(error).toBeInstanceOf(EnsembleError.ValidationError)
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toBe(row.message)
      }))
  }
})

describe("PARALLEL: the graph must be complete and acyclic", () => {
  it.effect("a context task missing from the task list fails with ValidationError (and no model call)", () => {
    const model = ChatModel.scripted([{ text: "never" }])
    return Effect.gen(function*() {
      const writer = yield* makeWriter()
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: writer })
      const summarise = yield* Task.make({
        description: "Summarise",
        expectedOutput: "A paragraph",
        agent: writer,
        context: [research]
      })
      const error = yield* Effect.flip(
        Ensemble.make({ agents: [writer], tasks: [summarise], workflow: "PARALLEL" })
      )
      expect(error).toBeInstanceOf(EnsembleError.ValidationError)
      expect(error.message).toBe(
        "Task 'Summarise' references context task 'Research' which is not in the ensemble's task list"
      )
      expect(model.calls).toBe(0)
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("a context cycle fails with ValidationError instead of waiting forever", () =>
    Effect.gen(function*() {
      const writer = yield* makeWriter()
      // built by hand on an unfrozen copy: Task.make cannot build a cycle
      const a: Mutable<Task.Task> = { ...(yield* Task.make({ description: "Draft A", expectedOutput: "Text", agent: writer })) }
      const b = yield* Task.make({ description: "Draft B", expectedOutput: "Text", agent: writer, context: [a] })
      a.context = [b]
      const error = yield* Effect.flip(Ensemble.make({ agents: [writer], tasks: [b, a], workflow: "PARALLEL" }))
      expect(error).toBeInstanceOf(EnsembleError.ValidationError)
      expect(error.message).toBe("Circular context dependency detected involving task: 'Draft B'")
    }))
})

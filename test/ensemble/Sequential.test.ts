/**
 * SEQUENTIAL: tasks in order with the exact prompts and context each agent gets, the system
 * prompt rules (a table), templates filled in prompts and outputs, the EnsembleOutput (tools,
 * durations), maxIterations as the loop's maxRuns, an agent's own model, a failing task (the outputs
 * completed so far travel with the error), and two runs of one ensemble sharing no state.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ChatModel, MaxRunsPolicy } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { requestTranscripts, transcript } from "../support/transcript.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"
import {
  closing, researcherSystem, writerSystem, reviewerSystem, makeResearcher, makeWriter, makeReviewer, offered,
  summary, millis, asTaskExecutionError, finalText, toolCaller, turns
} from "../support/sequential.ts"

// -----------------------------------------------------------------------------
// Order, prompts, context
// -----------------------------------------------------------------------------

describe("sequential: order, exact prompts and context", () => {
  it.effect("runs the tasks in list order; each request is exactly the agent's system prompt and the task's user prompt", () => {
    const model = ChatModel.scripted([{ text: "Five facts." }, { text: "Two paragraphs." }, { text: "Looks right." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeResearcher()
      const writer = yield* makeWriter()
      const reviewer = yield* makeReviewer()
      const research = yield* Task.make({ description: "Research Effect", expectedOutput: "Five facts", agent: researcher })
      const write = yield* Task.make({
        description: "Write about Effect",
        expectedOutput: "Two paragraphs",
        agent: writer,
        context: [research]
      })
      // context order (write, research) differs from list order: the prompt follows `context`
      const review = yield* Task.make({
        description: "Review the article",
        expectedOutput: "A verdict",
        agent: reviewer,
        context: [write, research]
      })
      // the agents' list order differs from the tasks': tasks run in task order
      const ensemble = yield* Ensemble.make({ agents: [reviewer, writer, researcher], tasks: [research, write, review] })
      const output = yield* Ensemble.run(ensemble)

      expect(model.calls).toBe(3)
      expect(requestTranscripts(model)).toEqual([
        [`system: ${researcherSystem}`, "user: ## Task\nResearch Effect\n\n## Expected output\nFive facts"],
        [
          `system: ${writerSystem}`,
          "user: ## Context from earlier tasks\n### Researcher: Research Effect\nFive facts.\n\n" +
          "## Task\nWrite about Effect\n\n## Expected output\nTwo paragraphs"
        ],
        [
          `system: ${reviewerSystem}`,
          "user: ## Context from earlier tasks\n" +
          "### Writer: Write about Effect\nTwo paragraphs.\n\n" +
          "### Researcher: Research Effect\nFive facts.\n\n" +
          "## Task\nReview the article\n\n## Expected output\nA verdict"
        ]
      ])
      // only the researcher has tools
      expect(offered(model)).toEqual([
        { tools: ["lookup"], toolChoice: "auto" },
        { tools: [], toolChoice: "auto" },
        { tools: [], toolChoice: "auto" }
      ])
      expect(output.taskOutputs.map(summary)).toEqual([
        { raw: "Five facts.", taskDescription: "Research Effect", agentRole: "Researcher", toolCallCount: 0 },
        { raw: "Two paragraphs.", taskDescription: "Write about Effect", agentRole: "Writer", toolCallCount: 0 },
        { raw: "Looks right.", taskDescription: "Review the article", agentRole: "Reviewer", toolCallCount: 0 }
      ])
      expect(output.raw).toBe("Looks right.")
      expect(handlers.queries).toEqual([])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("output flows forward only to tasks that list it in context", () => {
    const model = ChatModel.scripted([{ text: "out 1" }, { text: "out 2" }, { text: "out 3" }, { text: "out 4" }])
    return Effect.gen(function*() {
      const writer = yield* makeWriter()
      const first = yield* Task.make({ description: "First", expectedOutput: "E1", agent: writer })
      const second = yield* Task.make({ description: "Second", expectedOutput: "E2", agent: writer })
      const third = yield* Task.make({ description: "Third", expectedOutput: "E3", agent: writer, context: [first] })
      const fourth = yield* Task.make({ description: "Fourth", expectedOutput: "E4", agent: writer, context: [second] })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [first, second, third, fourth] })
      const output = yield* Ensemble.run(ensemble)

      const users = model.requests.map((request) => transcript(request.prompt.content)[1])
      expect(users).toEqual([
        // no context section at all, not even for the task right after another
        "user: ## Task\nFirst\n\n## Expected output\nE1",
        "user: ## Task\nSecond\n\n## Expected output\nE2",
        "user: ## Context from earlier tasks\n### Writer: First\nout 1\n\n## Task\nThird\n\n## Expected output\nE3",
        "user: ## Context from earlier tasks\n### Writer: Second\nout 2\n\n## Task\nFourth\n\n## Expected output\nE4"
      ])
      // each task is a fresh conversation: no earlier request's messages leak in
      expect(model.requests.map((request) => request.prompt.content.length)).toEqual([2, 2, 2, 2])
      expect(output.taskOutputs.map((o) => o.raw)).toEqual(["out 1", "out 2", "out 3", "out 4"])
    }).pipe(Effect.provide(model.layer))
  })
})

// -----------------------------------------------------------------------------
// System prompt rules (a table)
// -----------------------------------------------------------------------------

interface SystemRow {
  readonly name: string
  readonly background?: string
  readonly responseFormat?: string
  readonly expected: string
}

const systemRows: ReadonlyArray<SystemRow> = [
  { name: "role and goal only", expected: ["You are Analyst.", "Your goal: Score companies", closing].join("\n\n") },
  {
    name: "a background goes between the role and the goal",
    background: "You worked at a bank.",
    expected: ["You are Analyst.", "You worked at a bank.", "Your goal: Score companies", closing].join("\n\n")
  },
  {
    name: "a blank background is omitted",
    background: " \n\t ",
    expected: ["You are Analyst.", "Your goal: Score companies", closing].join("\n\n")
  },
  {
    name: "a response format comes last",
    responseFormat: "Bullet points only",
    expected: ["You are Analyst.", "Your goal: Score companies", closing, "Format your answer as follows: Bullet points only"]
      .join("\n\n")
  },
  {
    name: "a blank response format is omitted",
    responseFormat: "   ",
    expected: ["You are Analyst.", "Your goal: Score companies", closing].join("\n\n")
  },
  {
    name: "background and response format together",
    background: "You worked at a bank.",
    responseFormat: "Bullet points only",
    expected: [
      "You are Analyst.",
      "You worked at a bank.",
      "Your goal: Score companies",
      closing,
      "Format your answer as follows: Bullet points only"
    ].join("\n\n")
  }
]

describe("the system prompt each agent gets", () => {
  for (const row of systemRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ text: "7" }])
      return Effect.gen(function*() {
        const analyst = yield* Agent.make({
          role: "Analyst",
          goal: "Score companies",
          ...(row.background === undefined ? {} : { background: row.background }),
          ...(row.responseFormat === undefined ? {} : { responseFormat: row.responseFormat })
        })
        const score = yield* Task.make({ description: "Score ACME", expectedOutput: "A score", agent: analyst })
        const ensemble = yield* Ensemble.make({ agents: [analyst], tasks: [score] })
        yield* Ensemble.run(ensemble)
        expect(requestTranscripts(model)).toEqual([
          [`system: ${row.expected}`, "user: ## Task\nScore ACME\n\n## Expected output\nA score"]
        ])
      }).pipe(Effect.provide(model.layer))
    })
  }
})

// -----------------------------------------------------------------------------
// Templates
// -----------------------------------------------------------------------------

describe("templates are filled in the prompts and the outputs", () => {
  it.effect("description and expectedOutput, in the task's prompt and in later tasks' context", () => {
    const model = ChatModel.scripted([{ text: "Facts about Effect." }, { text: "The post." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeResearcher()
      const writer = yield* makeWriter()
      const research = yield* Task.make({
        description: "Research {topic} for {audience}",
        expectedOutput: "{count} facts about {topic}; keep {{braces}}",
        agent: researcher
      })
      const write = yield* Task.make({
        description: "Write a {kind} on {topic}",
        expectedOutput: "A {kind} for {audience}",
        agent: writer,
        context: [research]
      })
      const ensemble = yield* Ensemble.make({
        agents: [researcher, writer],
        tasks: [research, write],
        inputs: { topic: "Scala", audience: "managers", kind: "blog post" }
      })
      // run inputs win over the ensemble's, key by key
      const output = yield* Ensemble.run(ensemble, { topic: "Effect", count: "3", unused: "ignored" })

      expect(requestTranscripts(model)).toEqual([
        [
          `system: ${researcherSystem}`,
          "user: ## Task\nResearch Effect for managers\n\n## Expected output\n3 facts about Effect; keep {braces}"
        ],
        [
          `system: ${writerSystem}`,
          "user: ## Context from earlier tasks\n### Researcher: Research Effect for managers\nFacts about Effect.\n\n" +
          "## Task\nWrite a blog post on Effect\n\n## Expected output\nA blog post for managers"
        ]
      ])
      expect(output.taskOutputs.map((o) => o.taskDescription)).toEqual([
        "Research Effect for managers",
        "Write a blog post on Effect"
      ])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// EnsembleOutput, tools, durations
// -----------------------------------------------------------------------------

describe("EnsembleOutput", () => {
  it.effect("raw is the last task's, taskOutputs in order, tool calls counted per task and summed", () => {
    const model = ChatModel.scripted([
      // task 1 (researcher): two lookups in one turn, one in the next, then the answer
      { toolCalls: [{ name: "lookup", params: { query: "a" } }, { name: "lookup", params: { query: "b" } }] },
      { toolCalls: [{ name: "lookup", params: { query: "c" } }] },
      { text: "Facts a, b, c." },
      // task 2 (writer, no tools)
      { text: "Draft." },
      // task 3 (researcher again): one lookup
      { toolCalls: [{ name: "lookup", params: { query: "d" } }] },
      { text: "Checked d." }
    ])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeResearcher()
      const writer = yield* makeWriter()
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "A draft", agent: writer })
      const check = yield* Task.make({ description: "Check", expectedOutput: "A check", agent: researcher })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write, check] })
      const output = yield* Ensemble.run(ensemble)

      expect(handlers.queries).toEqual(["a", "b", "c", "d"])
      expect(model.calls).toBe(6)
      // the tool results are fed back to the model inside the task's conversation
      expect(requestTranscripts(model)[2]).toEqual([
        `system: ${researcherSystem}`,
        "user: ## Task\nResearch\n\n## Expected output\nFacts",
        `assistant: call lookup#call_1_1 {"query":"a"} | call lookup#call_1_2 {"query":"b"}`,
        `tool: ok lookup#call_1_1 "found a" | ok lookup#call_1_2 "found b"`,
        `assistant: call lookup#call_2_1 {"query":"c"}`,
        `tool: ok lookup#call_2_1 "found c"`
      ])
      expect(output.taskOutputs.map(summary)).toEqual([
        { raw: "Facts a, b, c.", taskDescription: "Research", agentRole: "Researcher", toolCallCount: 3 },
        { raw: "Draft.", taskDescription: "Write", agentRole: "Writer", toolCallCount: 0 },
        { raw: "Checked d.", taskDescription: "Check", agentRole: "Researcher", toolCallCount: 1 }
      ])
      expect(output.raw).toBe("Checked d.")
      expect(output.totalToolCalls).toBe(4)
      for (const taskOutput of output.taskOutputs) expect("parsedOutput" in taskOutput).toBe(false)
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("each duration is the simulated time of its task; completedAt and totalDuration follow the TestClock", () => {
    const model = ChatModel.scripted([
      { text: "one", latency: "1 second" },
      { toolCalls: [{ name: "lookup", params: { query: "x" } }], latency: "2 seconds" },
      { text: "two", latency: "500 millis" },
      { text: "three", latency: "3 seconds" }
    ])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeResearcher()
      const writer = yield* makeWriter()
      const one = yield* Task.make({ description: "One", expectedOutput: "1", agent: writer })
      const two = yield* Task.make({ description: "Two", expectedOutput: "2", agent: researcher })
      const three = yield* Task.make({ description: "Three", expectedOutput: "3", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [one, two, three] })
      const fiber = yield* Effect.forkChild(Ensemble.run(ensemble))

      yield* TestClock.adjust("6499 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(model.calls).toBe(4)
      yield* TestClock.adjust("1 millis")
      const output = yield* Fiber.join(fiber)

      expect(output.taskOutputs.map(millis)).toEqual([
        { duration: 1000, completedAt: 1000 },
        { duration: 2500, completedAt: 3500 },
        { duration: 3000, completedAt: 6500 }
      ])
      expect(Duration.toMillis(output.totalDuration)).toBe(6500)
      expect(output.taskOutputs.map((o) => o.toolCallCount)).toEqual([0, 1, 0])
      expect(output.totalToolCalls).toBe(1)
      expect(output.raw).toBe("three")
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// maxIterations (a table)
// -----------------------------------------------------------------------------

interface IterationRow {
  readonly maxIterations: number
  /** The model's turns; the default is a model that calls a tool whenever it may. */
  readonly script?: ReadonlyArray<ChatModel.ScriptedTurn>
  readonly calls: number
  readonly finalAnswerCall: boolean
  readonly toolCalls: number
  readonly raw: string
}

const iterationRows: ReadonlyArray<IterationRow> = [
  { maxIterations: 1, calls: 2, finalAnswerCall: true, toolCalls: 1, raw: finalText },
  { maxIterations: 2, calls: 3, finalAnswerCall: true, toolCalls: 2, raw: finalText },
  { maxIterations: 4, calls: 5, finalAnswerCall: true, toolCalls: 4, raw: finalText },
  {
    maxIterations: 2,
    script: [{ toolCalls: [{ name: "lookup", params: { query: "q1" } }] }, { text: "Done on call 2." }],
    calls: 2,
    finalAnswerCall: false,
    toolCalls: 1,
    raw: "Done on call 2."
  }
]

describe("maxIterations is the loop's maxRuns, with a final answer at the limit", () => {
  for (const row of iterationRows) {
    const name = row.finalAnswerCall
      ? `maxIterations ${row.maxIterations}: ${row.maxIterations} tool rounds, then one call with toolChoice "none"`
      : `maxIterations ${row.maxIterations}: an answer on the last allowed call needs no final-answer call`
    it.effect(name, () => {
      const model = ChatModel.scripted(row.script ?? turns(row.calls + 2, toolCaller))
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const researcher = yield* Agent.make({
          role: "Researcher",
          goal: "Find reliable facts",
          toolkit,
          maxIterations: row.maxIterations
        })
        const dig = yield* Task.make({ description: "Dig", expectedOutput: "An answer", agent: researcher })
        const ensemble = yield* Ensemble.make({ agents: [researcher], tasks: [dig] })
        const output = yield* Ensemble.run(ensemble)

        expect(model.calls).toBe(row.calls)
        const auto = { tools: ["lookup"], toolChoice: "auto" }
        const none = { tools: ["lookup"], toolChoice: "none" }
        expect(offered(model)).toEqual(
          row.finalAnswerCall
            ? [...Array.from({ length: row.calls - 1 }, () => auto), none]
            : Array.from({ length: row.calls }, () => auto)
        )
        const last = requestTranscripts(model)[row.calls - 1]
        if (row.finalAnswerCall) {
          expect(last[last.length - 1]).toBe(`user: ${MaxRunsPolicy.instruction}`)
          expect(last.length).toBe(2 + 2 * row.maxIterations + 1)
        } else {
          expect(last.filter((line) => line.includes(MaxRunsPolicy.instruction))).toEqual([])
        }
        expect(handlers.queries.length).toBe(row.toolCalls)
        expect(output.taskOutputs.map(summary)).toEqual([
          { raw: row.raw, taskDescription: "Dig", agentRole: "Researcher", toolCallCount: row.toolCalls }
        ])
        expect(output.totalToolCalls).toBe(row.toolCalls)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// An agent's own model
// -----------------------------------------------------------------------------

describe("an agent with its own llm", () => {
  it.effect("its tasks use its model; the other agents' tasks use the ensemble's", () => {
    const shared = ChatModel.scripted([{ text: "shared 1" }, { text: "shared 2" }])
    const own = ChatModel.scripted([{ text: "own 1" }])
    return Effect.gen(function*() {
      const writer = yield* makeWriter()
      const critic = yield* Agent.make({ role: "Critic", goal: "Judge fairly", llm: own.layer })
      const draft = yield* Task.make({ description: "Draft", expectedOutput: "A draft", agent: writer })
      const judge = yield* Task.make({ description: "Judge", expectedOutput: "A verdict", agent: critic, context: [draft] })
      const polish = yield* Task.make({ description: "Polish", expectedOutput: "Final text", agent: writer, context: [judge] })
      const ensemble = yield* Ensemble.make({ agents: [writer, critic], tasks: [draft, judge, polish] })
      const output = yield* Ensemble.run(ensemble)

      expect(output.taskOutputs.map((o) => o.raw)).toEqual(["shared 1", "own 1", "shared 2"])
      expect(shared.calls).toBe(2)
      expect(own.calls).toBe(1)
      expect(own.requests.map((request) => transcript(request.prompt.content))).toEqual([
        [
          `system: ${["You are Critic.", "Your goal: Judge fairly", closing].join("\n\n")}`,
          "user: ## Context from earlier tasks\n### Writer: Draft\nshared 1\n\n## Task\nJudge\n\n## Expected output\nA verdict"
        ]
      ])
      expect(requestTranscripts(shared).map((lines) => lines[1])).toEqual([
        "user: ## Task\nDraft\n\n## Expected output\nA draft",
        "user: ## Context from earlier tasks\n### Critic: Judge\nown 1\n\n## Task\nPolish\n\n## Expected output\nFinal text"
      ])
    }).pipe(Effect.provide(shared.layer))
  })

  it.effect("one model for all its tasks in a run: its script continues from task to task", () => {
    const shared = ChatModel.scripted([{ text: "shared 1" }])
    const own = ChatModel.scripted([{ text: "own 1" }, { text: "own 2" }])
    return Effect.gen(function*() {
      const writer = yield* makeWriter()
      const critic = yield* Agent.make({ role: "Critic", goal: "Judge fairly", llm: own.layer })
      const first = yield* Task.make({ description: "Judge A", expectedOutput: "A verdict", agent: critic })
      const middle = yield* Task.make({ description: "Draft", expectedOutput: "A draft", agent: writer })
      const second = yield* Task.make({ description: "Judge B", expectedOutput: "A verdict", agent: critic })
      const ensemble = yield* Ensemble.make({ agents: [writer, critic], tasks: [first, middle, second] })
      const output = yield* Ensemble.run(ensemble)

      expect(output.taskOutputs.map((o) => o.raw)).toEqual(["own 1", "shared 1", "own 2"])
      expect(own.calls).toBe(2)
      expect(own.requests.map((request) => transcript(request.prompt.content)[1])).toEqual([
        "user: ## Task\nJudge A\n\n## Expected output\nA verdict",
        "user: ## Task\nJudge B\n\n## Expected output\nA verdict"
      ])
      expect(shared.calls).toBe(1)
    }).pipe(Effect.provide(shared.layer))
  })
})

// -----------------------------------------------------------------------------
// Failure
// -----------------------------------------------------------------------------

interface FailureRow {
  readonly name: string
  readonly script: ReadonlyArray<ChatModel.ScriptedTurn>
  readonly taskDescription: string
  readonly agentRole: string
  readonly completed: ReadonlyArray<string>
  readonly calls: number
}

const failureRows: ReadonlyArray<FailureRow> = [
  {
    name: "task 1 of 3 fails: nothing completed, tasks 2 and 3 never run",
    script: [{ fail: "overloaded" }, { text: "never 2" }, { text: "never 3" }],
    taskDescription: "Research Effect",
    agentRole: "Researcher",
    completed: [],
    calls: 1
  },
  {
    name: "task 2 of 3 fails: exactly task 1's output completed, task 3 never runs",
    script: [{ text: "Facts." }, { fail: "overloaded" }, { text: "never 3" }],
    taskDescription: "Write about Effect",
    agentRole: "Writer",
    completed: ["Facts."],
    calls: 2
  },
  {
    name: "task 3 of 3 fails: tasks 1 and 2 completed",
    script: [{ text: "Facts." }, { text: "Article." }, { fail: "overloaded" }],
    taskDescription: "Review Effect article",
    agentRole: "Reviewer",
    completed: ["Facts.", "Article."],
    calls: 3
  }
]

describe("a failing task stops the run with TaskExecutionError carrying the outputs completed so far", () => {
  for (const row of failureRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted(row.script)
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const researcher = yield* makeResearcher()
        const writer = yield* makeWriter()
        const reviewer = yield* makeReviewer()
        const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Facts", agent: researcher })
        const write = yield* Task.make({
          description: "Write about {topic}",
          expectedOutput: "An article",
          agent: writer,
          context: [research]
        })
        const review = yield* Task.make({
          description: "Review {topic} article",
          expectedOutput: "A verdict",
          agent: reviewer,
          context: [write]
        })
        const ensemble = yield* Ensemble.make({
          agents: [researcher, writer, reviewer],
          tasks: [research, write, review]
        })
        const error = asTaskExecutionError(yield* Effect.flip(Ensemble.run(ensemble, { topic: "Effect" })))

        expect(error).toBeInstanceOf(EnsembleError.TaskExecutionError)
        expect(error._tag).toBe("TaskExecutionError")
        expect(error.message).toBe(
          `Task '${row.taskDescription}' (agent '${row.agentRole}') failed: The model call failed: overloaded`
        )
        expect(error.taskDescription).toBe(row.taskDescription)
        expect(error.agentRole).toBe(row.agentRole)
        expect(error.reason).toBe("The model call failed: overloaded")
        expect(error.completedOutputs.map(summary)).toEqual(
          row.completed.map((raw, i) => ({
            raw,
            taskDescription: ["Research Effect", "Write about Effect"][i],
            agentRole: ["Researcher", "Writer"][i],
            toolCallCount: 0
          }))
        )
        expect(model.calls).toBe(row.calls)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Independent runs
// -----------------------------------------------------------------------------

describe("two runs of the same ensemble share no state", () => {
  it.effect("same outputs and prompts, each run with its own model calls", () => {
    const script: ReadonlyArray<ChatModel.ScriptedTurn> = [
      // explicit call ids: the scripted model's default ids count its turns
      { toolCalls: [{ name: "lookup", params: { query: "a" }, id: "call_a" }] },
      { text: "Facts." },
      { text: "Article." }
    ]
    const model = ChatModel.scripted([...script, ...script, { text: "never" }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const researcher = yield* makeResearcher()
      const writer = yield* makeWriter()
      const research = yield* Task.make({ description: "Research {topic}", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({
        description: "Write about {topic}",
        expectedOutput: "An article",
        agent: writer,
        context: [research]
      })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })

      const first = yield* Ensemble.run(ensemble, { topic: "Effect" })
      expect(model.calls).toBe(3)
      const second = yield* Ensemble.run(ensemble, { topic: "Effect" })
      expect(model.calls).toBe(6)

      expect(second).toEqual(first)
      expect(second.totalToolCalls).toBe(1)
      expect(second.taskOutputs.map(summary)).toEqual([
        { raw: "Facts.", taskDescription: "Research Effect", agentRole: "Researcher", toolCallCount: 1 },
        { raw: "Article.", taskDescription: "Write about Effect", agentRole: "Writer", toolCallCount: 0 }
      ])
      const all = requestTranscripts(model)
      expect(all.slice(3)).toEqual(all.slice(0, 3))
      // the second run's writer sees only the second run's research, once
      expect(all[5][1]).toBe(
        "user: ## Context from earlier tasks\n### Researcher: Research Effect\nFacts.\n\n" +
          "## Task\nWrite about Effect\n\n## Expected output\nAn article"
      )
      expect(handlers.queries).toEqual(["a", "a"])

      // different inputs in a third run do not leak into or from the others
      const model2 = ChatModel.scripted([...script])
      const third = yield* Effect.provide(Ensemble.run(ensemble, { topic: "Scala" }), model2.layer)
      expect(third.taskOutputs.map((o) => o.taskDescription)).toEqual(["Research Scala", "Write about Scala"])
      expect(model.calls).toBe(6)
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

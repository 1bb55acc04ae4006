import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import type { Prompt } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Role, Task, Template } from "../../src/ensemble/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** The text of a message: a system string, or the text parts of any other message. */
const messageText = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")

/** Each request the model received, as `role: text` lines. */
const prompts = (model: ChatModel.ScriptedModel): ReadonlyArray<ReadonlyArray<string>> =>
  model.requests.map((request) => request.prompt.content.map((message) => `${message.role}: ${messageText(message)}`))

/** The user prompt of a task without context or outputType (see AgentPrompt.user). */
const userPrompt = (description: string, expectedOutput: string): string =>
  `user: ## Task\n${description}\n\n## Expected output\n${expectedOutput}`

/** The system prompt of an agent without background or response format (see AgentPrompt.system). */
const systemPrompt = (role: string, goal: string): string =>
  `system: You are ${role}.\n\nYour goal: ${goal}\n\n` +
  "Produce a final answer that meets the expected output of the task. Be accurate and complete, " +
  "and leave out preamble and closing remarks."

const researcherOf = () => Agent.make({ role: "Researcher", goal: "Find reliable facts" })
const writerOf = () => Agent.make({ role: "Writer", goal: "Write clear prose" })

/** A writable view of a task, to build what `Task.make` cannot (a context cycle). */
type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Runs a failing build and returns its ValidationError (fails the test on success or on another error). */
const validationError = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect).pipe(Effect.map((error) => {
    expect(error).toBeInstanceOf(EnsembleError.ValidationError)
    return error as EnsembleError.ValidationError
  }))

/** A logger that keeps every log line as `LEVEL message`. */
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push(`${logLevel} ${parts.map(String).join(" ")}`)
  })
  return { lines, layer: Logger.layer([logger]) }
}

// -----------------------------------------------------------------------------
// Agent.make
// -----------------------------------------------------------------------------

describe("Agent.make validation", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly options: Agent.Options<{}>
    readonly message: string
  }> = [
    { name: "empty role", options: { role: "", goal: "g" }, message: "Agent role must not be blank" },
    { name: "whitespace role", options: { role: "   ", goal: "g" }, message: "Agent role must not be blank" },
    { name: "tabs and newlines role", options: { role: "\t\n", goal: "g" }, message: "Agent role must not be blank" },
    { name: "empty goal", options: { role: "Writer", goal: "" }, message: "Agent goal must not be blank" },
    { name: "whitespace goal", options: { role: "Writer", goal: "   " }, message: "Agent goal must not be blank" },
    {
      name: "role and goal blank: the role is reported first",
      options: { role: " ", goal: " " },
      message: "Agent role must not be blank"
    },
    {
      name: "maxIterations 0",
      options: { role: "Writer", goal: "g", maxIterations: 0 },
      message: "Agent maxIterations must be > 0, got: 0"
    },
    {
      name: "maxIterations -3",
      options: { role: "Writer", goal: "g", maxIterations: -3 },
      message: "Agent maxIterations must be > 0, got: -3"
    },
    {
      name: "maxIterations 1.5 (not a whole number of iterations)",
      options: { role: "Writer", goal: "g", maxIterations: 1.5 },
      message: "Agent maxIterations must be > 0, got: 1.5"
    },
    {
      name: "maxIterations NaN",
      options: { role: "Writer", goal: "g", maxIterations: Number.NaN },
      message: "Agent maxIterations must be > 0, got: NaN"
    },
    {
      name: "blank goal is reported before a bad maxIterations",
      options: { role: "Writer", goal: "", maxIterations: 0 },
      message: "Agent goal must not be blank"
    }
  ]
  it.effect("Task.make returns a frozen task: its context cannot be changed afterwards", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      const context: Array<Task.Task> = []
      const a = yield* Task.make({ description: "Task A", expectedOutput: "A", agent: writer, context })
      context.push(a) // the caller's array is copied, not kept
      expect(a.context).toEqual([])
      expect(() => {
        ;(a as Mutable<Task.Task>).context = [a]
      }).toThrow(TypeError)
      expect(() => (a.context as Array<Task.Task>).push(a)).toThrow(TypeError)
    }))

  for (const row of rows) {
    it.effect(`${row.name} -> ValidationError "${row.message}"`, () =>
      Effect.gen(function*() {
        const error = yield* validationError(Agent.make(row.options))
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toBe(row.message)
      }))
  }

  it.effect("maxIterations 1 is accepted (its run, one attempt then a forced final answer, is tested in Sequential)", () =>
    Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Writer", goal: "g", maxIterations: 1 })
      expect(agent.maxIterations).toBe(1)
    }))

  it.effect("defaults: maxIterations 25, no delegation, not verbose, no format, background, tools or llm", () =>
    Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
      expect(agent._tag).toBe("Agent")
      expect(agent.role).toBe("Writer")
      expect(agent.goal).toBe("Write clear prose")
      expect(agent.maxIterations).toBe(25)
      expect(agent.allowDelegation).toBe(false)
      expect(agent.verbose).toBe(false)
      expect(agent.responseFormat).toBe("")
      expect(agent.background).toBe("")
      expect(Object.keys(agent.toolkit.tools)).toEqual([])
      expect(agent.llm).toBeUndefined()
      expect(Agent.defaults).toEqual({
        maxIterations: 25,
        allowDelegation: false,
        verbose: false,
        responseFormat: "",
        background: ""
      })
    }))

  it.effect("given options are kept as given", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([])
      const agent = yield* Agent.make({
        role: " Senior Writer ",
        goal: "Write",
        background: "Ten years at a newspaper",
        allowDelegation: true,
        verbose: true,
        maxIterations: 7,
        responseFormat: "Bullet points",
        llm: model.layer
      })
      expect(agent.role).toBe(" Senior Writer ")
      expect(agent.background).toBe("Ten years at a newspaper")
      expect(agent.allowDelegation).toBe(true)
      expect(agent.verbose).toBe(true)
      expect(agent.maxIterations).toBe(7)
      expect(agent.responseFormat).toBe("Bullet points")
      expect(agent.llm).toBe(model.layer)
    }))
})

// -----------------------------------------------------------------------------
// Task.make
// -----------------------------------------------------------------------------

describe("Task.make validation", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly options: Omit<Task.Options, "agent">
    readonly message: string
  }> = [
    {
      name: "empty description",
      options: { description: "", expectedOutput: "e" },
      message: "Task description must not be blank"
    },
    {
      name: "whitespace description",
      options: { description: "  \n ", expectedOutput: "e" },
      message: "Task description must not be blank"
    },
    {
      name: "empty expectedOutput",
      options: { description: "d", expectedOutput: "" },
      message: "Task expectedOutput must not be blank"
    },
    {
      name: "whitespace expectedOutput",
      options: { description: "d", expectedOutput: "   " },
      message: "Task expectedOutput must not be blank"
    },
    {
      name: "both blank: the description is reported first",
      options: { description: " ", expectedOutput: " " },
      message: "Task description must not be blank"
    },
    {
      name: "maxOutputRetries -1",
      options: { description: "d", expectedOutput: "e", maxOutputRetries: -1 },
      message: "Task maxOutputRetries must be >= 0, got: -1"
    },
    {
      name: "maxOutputRetries 2.5 (not a whole number of retries)",
      options: { description: "d", expectedOutput: "e", maxOutputRetries: 2.5 },
      message: "Task maxOutputRetries must be >= 0, got: 2.5"
    }
  ]
  for (const row of rows) {
    it.effect(`${row.name} -> ValidationError "${row.message}"`, () =>
      Effect.gen(function*() {
        const writer = yield* writerOf()
        const error = yield* validationError(Task.make({ ...row.options, agent: writer }))
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toBe(row.message)
      }))
  }

  it.effect("defaults: maxOutputRetries 3, empty context, no outputType", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      const task = yield* Task.make({ description: "Write {topic}", expectedOutput: "Two paragraphs", agent: writer })
      expect(task._tag).toBe("Task")
      expect(task.description).toBe("Write {topic}")
      expect(task.expectedOutput).toBe("Two paragraphs")
      expect(task.agent).toBe(writer)
      expect(task.maxOutputRetries).toBe(3)
      expect(Task.defaults.maxOutputRetries).toBe(3)
      expect(task.context).toEqual([])
      expect(task.outputType).toBeUndefined()
    }))

  it.effect("maxOutputRetries 0 is allowed", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      const task = yield* Task.make({ description: "d", expectedOutput: "e", agent: writer, maxOutputRetries: 0 })
      expect(task.maxOutputRetries).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// Ensemble.make
// -----------------------------------------------------------------------------

describe("Ensemble.make validation", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly config: Effect.Effect<Ensemble.Config<ReadonlyArray<Agent.Any>>, EnsembleError.ValidationError>
    readonly message: string
  }> = [
    {
      name: "no tasks",
      config: Effect.map(writerOf(), (writer) => ({ agents: [writer], tasks: [] })),
      message: "Ensemble must have at least one task"
    },
    {
      name: "no agents",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
        return { agents: [], tasks: [write] }
      }),
      message: "Ensemble must have at least one agent"
    },
    {
      name: "no tasks and no agents: the tasks are reported first",
      config: Effect.succeed({ agents: [], tasks: [] }),
      message: "Ensemble must have at least one task"
    },
    {
      name: "a task whose agent is not in the list",
      config: Effect.gen(function*() {
        const researcher = yield* researcherOf()
        const writer = yield* writerOf()
        const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
        const write = yield* Task.make({ description: "Write the report", expectedOutput: "Prose", agent: writer })
        return { agents: [researcher], tasks: [research, write] }
      }),
      message: "Task 'Write the report' references agent 'Writer' which is not in the ensemble's agent list"
    },
    {
      name: "agent membership is by identity: another agent with the same role does not count",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const lookalike = yield* writerOf()
        const write = yield* Task.make({ description: "Write the report", expectedOutput: "Prose", agent: writer })
        return { agents: [lookalike], tasks: [write] }
      }),
      message: "Task 'Write the report' references agent 'Writer' which is not in the ensemble's agent list"
    },
    {
      name: "agent membership is by identity: a case variant of the role does not count either",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const lookalike = yield* Agent.make({ role: "writer", goal: "Write clear prose" })
        const write = yield* Task.make({ description: "Write the report", expectedOutput: "Prose", agent: writer })
        return { agents: [lookalike], tasks: [write] }
      }),
      message: "Task 'Write the report' references agent 'Writer' which is not in the ensemble's agent list"
    },
    {
      name: "a context task that appears later in the list",
      config: Effect.gen(function*() {
        const researcher = yield* researcherOf()
        const writer = yield* writerOf()
        const research = yield* Task.make({ description: "Research it", expectedOutput: "Facts", agent: researcher })
        const write = yield* Task.make({
          description: "Write it up",
          expectedOutput: "Prose",
          agent: writer,
          context: [research]
        })
        return { agents: [researcher, writer], tasks: [write, research] }
      }),
      message: "Task 'Write it up' references context task 'Research it' which appears later in the task list"
    },
    {
      name: "a context task that is not in the list",
      config: Effect.gen(function*() {
        const researcher = yield* researcherOf()
        const writer = yield* writerOf()
        const research = yield* Task.make({ description: "Research it", expectedOutput: "Facts", agent: researcher })
        const write = yield* Task.make({
          description: "Write it up",
          expectedOutput: "Prose",
          agent: writer,
          context: [research]
        })
        return { agents: [researcher, writer], tasks: [write] }
      }),
      message: "Task 'Write it up' references context task 'Research it' which is not in the ensemble's task list"
    },
    {
      name: "a context task equal to a listed one but not the same object",
      config: Effect.gen(function*() {
        const researcher = yield* researcherOf()
        const options = { description: "Research it", expectedOutput: "Facts", agent: researcher }
        const research = yield* Task.make(options)
        const twin = yield* Task.make(options)
        const write = yield* Task.make({
          description: "Write it up",
          expectedOutput: "Prose",
          agent: researcher,
          context: [twin]
        })
        return { agents: [researcher], tasks: [research, write] }
      }),
      message: "Task 'Write it up' references context task 'Research it' which is not in the ensemble's task list"
    },
    {
      // Task.make cannot build a cycle: a task exists only after the tasks in its
      // context, and tasks are frozen. So the cycle is made by hand, on an
      // unfrozen copy whose context is written after the fact.
      name: "a circular context (A -> B -> A, built by hand)",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const a: Mutable<Task.Task> = { ...(yield* Task.make({ description: "Task A", expectedOutput: "A", agent: writer })) }
        const b = yield* Task.make({ description: "Task B", expectedOutput: "B", agent: writer, context: [a] })
        a.context = [b]
        // In list order the ordering rule would also fail; the cycle is reported first.
        return { agents: [writer], tasks: [a, b] }
      }),
      message: "Circular context dependency detected involving task: 'Task A'"
    },
    {
      // Built by hand too: Task.make cannot make a task its own context. The spec's own message.
      name: "a task in its own context (built by hand)",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const a: Mutable<Task.Task> = { ...(yield* Task.make({ description: "Task A", expectedOutput: "A", agent: writer })) }
        a.context = [a]
        return { agents: [writer], tasks: [a] }
      }),
      message: "Task cannot reference itself in context"
    },
    {
      // Built by hand: a three-task cycle behind a valid first task.
      name: "a longer cycle (B -> C -> D -> B) after a valid task",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const a = yield* Task.make({ description: "Task A", expectedOutput: "A", agent: writer })
        const b: Mutable<Task.Task> = {
          ...(yield* Task.make({ description: "Task B", expectedOutput: "B", agent: writer, context: [a] }))
        }
        const c = yield* Task.make({ description: "Task C", expectedOutput: "C", agent: writer, context: [b] })
        const d = yield* Task.make({ description: "Task D", expectedOutput: "D", agent: writer, context: [c] })
        b.context = [a, d]
        return { agents: [writer], tasks: [a, b, c, d] }
      }),
      message: "Circular context dependency detected involving task: 'Task B'"
    }
  ]
  for (const row of rows) {
    it.effect(`${row.name} -> ValidationError "${row.message}"`, () =>
      Effect.gen(function*() {
        const config = yield* row.config
        const error = yield* validationError(Ensemble.make(config))
        expect(error._tag).toBe("ValidationError")
        expect(error.message).toBe(row.message)
      }))
  }

  it.effect("a valid ensemble: workflow defaults to SEQUENTIAL, inputs to {}, agents and tasks kept", () =>
    Effect.gen(function*() {
      const researcher = yield* researcherOf()
      const writer = yield* writerOf()
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({
        description: "Write",
        expectedOutput: "Prose",
        agent: writer,
        context: [research]
      })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
      expect(ensemble._tag).toBe("Ensemble")
      expect(ensemble.workflow).toBe("SEQUENTIAL")
      expect(ensemble.inputs).toEqual({})
      expect(ensemble.agents).toEqual([researcher, writer])
      expect(ensemble.agents[0]).toBe(researcher)
      expect(ensemble.tasks[0]).toBe(research)
      expect(ensemble.tasks[1]).toBe(write)
    }))

  it.effect("valid: all tasks on one agent, and two tasks sharing one context task", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      const base = yield* Task.make({ description: "Base", expectedOutput: "B", agent: writer })
      const left = yield* Task.make({ description: "Left", expectedOutput: "L", agent: writer, context: [base] })
      const right = yield* Task.make({ description: "Right", expectedOutput: "R", agent: writer, context: [base] })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [base, left, right] })
      expect(ensemble.tasks.map((task) => task.description)).toEqual(["Base", "Left", "Right"])
    }))
})

// -----------------------------------------------------------------------------
// Templates
// -----------------------------------------------------------------------------

describe("Template.variables", () => {
  const rows: ReadonlyArray<{ readonly template: string; readonly variables: ReadonlyArray<string> }> = [
    { template: "Research {topic} for {audience}", variables: ["topic", "audience"] },
    { template: "{topic}, {topic} and {audience} then {topic}", variables: ["topic", "audience"] },
    { template: "No placeholders here", variables: [] },
    { template: "Keep {{braces}} literal", variables: [] },
    { template: "{a}{{b}}{c}", variables: ["a", "c"] },
    { template: "Names are word characters: {snake_case1} {with space} {dash-ed} {}", variables: ["snake_case1"] },
    { template: "{{escaped}} then {real}", variables: ["real"] }
  ]
  for (const row of rows) {
    it.effect(`${JSON.stringify(row.template)} -> ${JSON.stringify(row.variables)}`, () =>
      Effect.sync(() => {
        expect(Template.variables(row.template)).toEqual(row.variables)
      }))
  }
})

describe("Template.resolve", () => {
  const rows: ReadonlyArray<{
    readonly name: string
    readonly template: string
    readonly inputs: Readonly<Record<string, string>>
    readonly result: string
  }> = [
    {
      name: "fills each placeholder",
      template: "Research {topic} for {audience}",
      inputs: { topic: "Effect", audience: "kids" },
      result: "Research Effect for kids"
    },
    {
      name: "fills a repeated placeholder everywhere",
      template: "{x} and {x}",
      inputs: { x: "y" },
      result: "y and y"
    },
    {
      name: "{{x}} is a literal {x}, even when x is given",
      template: "Use {{topic}} for {topic}",
      inputs: { topic: "AI" },
      result: "Use {topic} for AI"
    },
    {
      name: "{{x}} needs no input",
      template: "Keep {{topic}}",
      inputs: {},
      result: "Keep {topic}"
    },
    {
      name: "extra inputs are ignored",
      template: "Hi {name}",
      inputs: { name: "Ada", unused: "x" },
      result: "Hi Ada"
    },
    {
      name: "no placeholders, no inputs",
      template: "Plain text",
      inputs: {},
      result: "Plain text"
    },
    {
      name: "a value is not itself resolved",
      template: "Hi {a}",
      inputs: { a: "{b}", b: "no" },
      result: "Hi {b}"
    },
    {
      name: "a value with $ patterns is inserted as is",
      template: "Cost: {price}",
      inputs: { price: "$& $1 $$" },
      result: "Cost: $& $1 $$"
    },
    { name: "an empty value is a value", template: "[{x}]", inputs: { x: "" }, result: "[]" }
  ]
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        expect(yield* Template.resolve(row.template, row.inputs)).toBe(row.result)
      }))
  }

  it.effect("missing variables: PromptTemplateError lists all of them, in order, with the template", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Template.resolve("Use {a}, {b} and {c}", { b: "given" }))
      expect(error).toBeInstanceOf(EnsembleError.PromptTemplateError)
      expect(error._tag).toBe("PromptTemplateError")
      expect(error.missing).toEqual(["a", "c"])
      expect(error.template).toBe("Use {a}, {b} and {c}")
      expect(error.message).toBe(
        "Missing template variables: [a, c]. Provide them in run(inputs). Template: 'Use {a}, {b} and {c}'"
      )
    }))

  it.effect("an inherited property is not an input (only own keys count)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Template.resolve("{toString}", {}))
      expect(error.missing).toEqual(["toString"])
    }))

  it.effect("a long template is cut at 100 characters in the message", () =>
    Effect.gen(function*() {
      const template = `{missing} ${"x".repeat(120)}`
      const error = yield* Effect.flip(Template.resolve(template, {}))
      expect(error.message).toBe(
        `Missing template variables: [missing]. Provide them in run(inputs). Template: '${template.slice(0, 100)}…'`
      )
    }))
})

describe("Ensemble.run templates", () => {
  /** Researcher and writer, each with one templated task; the writer's task uses the research. */
  const twoTasks = (inputs?: Readonly<Record<string, string>>) =>
    Effect.gen(function*() {
      const researcher = yield* researcherOf()
      const writer = yield* writerOf()
      const research = yield* Task.make({
        description: "Research {topic}",
        expectedOutput: "Facts for {audience}",
        agent: researcher
      })
      const write = yield* Task.make({
        description: "Write about {topic} in a {style} style",
        expectedOutput: "{length} words",
        agent: writer
      })
      return yield* Ensemble.make({
        agents: [researcher, writer],
        tasks: [research, write],
        ...(inputs === undefined ? {} : { inputs })
      })
    })

  const missingRows: ReadonlyArray<{
    readonly name: string
    readonly inputs: Readonly<Record<string, string>>
    readonly missing: ReadonlyArray<string>
    readonly template: string
  }> = [
    {
      name: "no inputs: every variable of every task, once each, in order",
      inputs: {},
      missing: ["topic", "audience", "style", "length"],
      template: "Research {topic}"
    },
    {
      name: "the first task complete: the second task's variables, its first incomplete template shown",
      inputs: { topic: "Effect", audience: "kids" },
      missing: ["style", "length"],
      template: "Write about {topic} in a {style} style"
    },
    {
      name: "only an expectedOutput variable missing",
      inputs: { topic: "Effect", audience: "kids", style: "plain", extra: "ignored" },
      missing: ["length"],
      template: "{length} words"
    }
  ]
  for (const row of missingRows) {
    it.effect(`${row.name} -> PromptTemplateError before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
        const ensemble = yield* twoTasks()
        const error = yield* Effect.flip(Ensemble.run(ensemble, row.inputs)).pipe(Effect.provide(model.layer))
        expect(error).toBeInstanceOf(EnsembleError.PromptTemplateError)
        if (error._tag !== "PromptTemplateError") {
          throw new globalThis.Error(`expected PromptTemplateError, got ${error._tag}`)
        }
        expect(error.missing).toEqual(row.missing)
        expect(error.template).toBe(row.template)
        expect(error.message).toBe(
          `Missing template variables: [${row.missing.join(", ")}]. ` +
            `Provide them in run(inputs). Template: '${row.template}'`
        )
        expect(model.calls).toBe(0)
      }))
  }

  it.effect("all inputs given: each agent receives its filled prompts; extra inputs are ignored", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
      const ensemble = yield* twoTasks()
      const output = yield* Ensemble.run(ensemble, {
        topic: "Effect",
        audience: "kids",
        style: "plain",
        length: "200",
        unused: "never asked for"
      }).pipe(Effect.provide(model.layer))
      expect(model.calls).toBe(2)
      expect(prompts(model)).toEqual([
        [systemPrompt("Researcher", "Find reliable facts"), userPrompt("Research Effect", "Facts for kids")],
        [systemPrompt("Writer", "Write clear prose"), userPrompt("Write about Effect in a plain style", "200 words")]
      ])
      expect(output.raw).toBe("prose")
      expect(output.taskOutputs.map((task) => [task.agentRole, task.taskDescription, task.raw])).toEqual([
        ["Researcher", "Research Effect", "facts"],
        ["Writer", "Write about Effect in a plain style", "prose"]
      ])
    }))

  it.effect("build-time inputs are used when run gets none", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
      const ensemble = yield* twoTasks({ topic: "Effect", audience: "kids", style: "plain", length: "200" })
      expect(ensemble.inputs).toEqual({ topic: "Effect", audience: "kids", style: "plain", length: "200" })
      yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
      expect(prompts(model).map((request) => request[1])).toEqual([
        userPrompt("Research Effect", "Facts for kids"),
        userPrompt("Write about Effect in a plain style", "200 words")
      ])
    }))

  it.effect("run-time inputs override build-time inputs key by key; the rest are kept", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
      const ensemble = yield* twoTasks({ topic: "Effect", audience: "kids", style: "plain" })
      yield* Ensemble.run(ensemble, { topic: "Streams", length: "50" }).pipe(Effect.provide(model.layer))
      expect(prompts(model).map((request) => request[1])).toEqual([
        userPrompt("Research Streams", "Facts for kids"),
        userPrompt("Write about Streams in a plain style", "50 words")
      ])
      // The ensemble's own inputs are not changed by a run.
      expect(ensemble.inputs).toEqual({ topic: "Effect", audience: "kids", style: "plain" })
    }))

  it.effect("build-time inputs count when reporting what is missing", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
      const ensemble = yield* twoTasks({ topic: "Effect", style: "plain" })
      const error = yield* Effect.flip(Ensemble.run(ensemble, { audience: "kids" })).pipe(Effect.provide(model.layer))
      expect(error.message).toBe(
        "Missing template variables: [length]. Provide them in run(inputs). Template: '{length} words'"
      )
      expect(model.calls).toBe(0)
    }))

  it.effect("{{x}} reaches the model as a literal {x} and needs no input", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "explained" }])
      const writer = yield* writerOf()
      const task = yield* Task.make({
        description: "Explain the {{name}} syntax in {lang}",
        expectedOutput: "A {{name}} example",
        agent: writer
      })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task] })
      const output = yield* Ensemble.run(ensemble, { lang: "TypeScript" }).pipe(Effect.provide(model.layer))
      expect(prompts(model)).toEqual([[
        systemPrompt("Writer", "Write clear prose"),
        userPrompt("Explain the {name} syntax in TypeScript", "A {name} example")
      ]])
      expect(output.taskOutputs[0].taskDescription).toBe("Explain the {name} syntax in TypeScript")
    }))

  it.effect("a run with no templates needs no inputs", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "done" }])
      const writer = yield* writerOf()
      const task = yield* Task.make({ description: "Write a haiku", expectedOutput: "A haiku", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task] })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
      expect(output.raw).toBe("done")
      expect(model.calls).toBe(1)
    }))
})

// -----------------------------------------------------------------------------
// Role matching
// -----------------------------------------------------------------------------

describe("Role.same / Role.key", () => {
  const keyRows: ReadonlyArray<readonly [string, string]> = [
    ["Researcher", "researcher"],
    ["  Researcher ", "researcher"],
    ["RESEARCHER", "researcher"],
    ["\tSenior Writer\n", "senior writer"],
    ["Senior  Writer", "senior  writer"]
  ]
  for (const [role, key] of keyRows) {
    it.effect(`Role.key(${JSON.stringify(role)}) = ${JSON.stringify(key)}`, () =>
      Effect.sync(() => {
        expect(Role.key(role)).toBe(key)
      }))
  }

  const sameRows: ReadonlyArray<readonly [string, string, boolean]> = [
    ["researcher", "Researcher", true],
    [" Researcher ", "RESEARCHER", true],
    ["researcher\n", "\tresearcher", true],
    ["Writer", "Writer", true],
    ["Researcher", "Writer", false],
    ["Senior Writer", "SeniorWriter", false],
    ["Senior Writer", "Senior  Writer", false],
    ["Writer", "Writers", false]
  ]
  for (const [a, b, same] of sameRows) {
    it.effect(`Role.same(${JSON.stringify(a)}, ${JSON.stringify(b)}) = ${same}`, () =>
      Effect.sync(() => {
        expect(Role.same(a, b)).toBe(same)
        expect(Role.same(b, a)).toBe(same)
      }))
  }
})

// -----------------------------------------------------------------------------
// Unused agents
// -----------------------------------------------------------------------------

describe("Unused agents", () => {
  it.effect("an agent no task uses: the run succeeds, a warning is logged, the agent's model is never called", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "prose" }])
      const reviewerModel = ChatModel.scripted([{ text: "review" }])
      const logs = captureLogs()
      const writer = yield* writerOf()
      const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review", llm: reviewerModel.layer })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer, reviewer], tasks: [write] })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, logs.layer]))
      expect(output.raw).toBe("prose")
      expect(output.taskOutputs.map((task) => task.agentRole)).toEqual(["Writer"])
      expect(model.calls).toBe(1)
      expect(reviewerModel.calls).toBe(0)
      expect(logs.lines.filter((line) => line.includes("not used"))).toEqual([
        "Warn Agent 'Reviewer' is not used by any task"
      ])
    }))

  it.effect("a lookalike agent (same role, another object) is unused too", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "prose" }])
      const logs = captureLogs()
      const writer = yield* writerOf()
      const lookalike = yield* writerOf()
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer, lookalike], tasks: [write] })
      yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, logs.layer]))
      expect(logs.lines.filter((line) => line.includes("not used"))).toEqual([
        "Warn Agent 'Writer' is not used by any task"
      ])
    }))

  it.effect("every agent used: no warning", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "facts" }, { text: "prose" }])
      const logs = captureLogs()
      const researcher = yield* researcherOf()
      const writer = yield* writerOf()
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
      yield* Ensemble.run(ensemble).pipe(Effect.provide([model.layer, logs.layer]))
      expect(logs.lines.filter((line) => line.startsWith("Warn"))).toEqual([])
      expect(model.calls).toBe(2)
    }))
})

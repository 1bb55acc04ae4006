/**
 * Config validation with the specification's exact messages: `Agent.make`, `Task.make` and
 * `Ensemble.make` refuse bad configs with a `ValidationError` naming the field (never a throw), and
 * agents no task uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { researcherOf, writerOf, validationError, captureLogs, type Mutable } from "../support/validation.ts"

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
      // One Task value listed twice: its output could not be told apart (a later task's context, a
      // durable ensemble's child key), so it is refused rather than run twice.
      name: "the same task listed twice",
      config: Effect.gen(function*() {
        const writer = yield* writerOf()
        const a = yield* Task.make({ description: "Task A", expectedOutput: "A", agent: writer })
        return { agents: [writer], tasks: [a, a] }
      }),
      message:
        "Task 'Task A' appears twice in the task list: each entry is one task with its own output, so make a second Task (Task.make) to do the same work again"
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

// -----------------------------------------------------------------------------
// Options that are not options
// -----------------------------------------------------------------------------

describe("a key that is not an option is refused, not dropped", () => {
  const agentOptions = "role, goal, background, toolkit, llm, allowDelegation, verbose, maxIterations, responseFormat"
  const rows: ReadonlyArray<{ readonly name: string; readonly options: object; readonly message: string }> = [
    {
      name: "tools, a misspelt toolkit (the agent would run with no tools)",
      options: { role: "Writer", goal: "g", tools: [] },
      message: `Agent.make has no option "tools"; its options are ${agentOptions}`
    },
    {
      name: "a key named after Object.prototype, from JSON",
      options: JSON.parse(`{"role":"Writer","goal":"g","__proto__":{"allowDelegation":true}}`),
      message: `Agent.make has no option "__proto__"; its options are ${agentOptions}`
    },
    {
      name: "constructor",
      options: { role: "Writer", goal: "g", constructor: "x" },
      message: `Agent.make has no option "constructor"; its options are ${agentOptions}`
    },
    {
      name: "a long key is cut short in the message",
      options: { role: "Writer", goal: "g", ["k".repeat(1_000)]: 1 },
      message: `Agent.make has no option "${"k".repeat(60)}…"; its options are ${agentOptions}`
    }
  ]
  for (const row of rows) {
    it.effect(`Agent.make, ${row.name}`, () =>
      Effect.gen(function*() {
        const error = yield* validationError(Agent.make(row.options as Agent.Options<{}>))
        expect(error.message).toBe(row.message)
      }))
  }

  it.effect("Task.make and Ensemble.make too; an agent's _tag, spread into Agent.make with its options, is let through", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      const task = yield* validationError(Task.make({ description: "Write", expectedOutput: "Prose", agent: writer, dependsOn: [] } as Task.Options))
      expect(task.message).toBe(
        `Task.make has no option "dependsOn"; its options are description, expectedOutput, agent, context, outputType, maxOutputRetries`
      )
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* validationError(Ensemble.make({ agents: [writer], tasks: [write], workflw: "PARALLEL" } as Ensemble.Config<[typeof writer]>))
      expect(ensemble.message.startsWith(`Ensemble.make has no option "workflw"; its options are workflow,`)).toBe(true)
      // What a JavaScript caller spreading an agent into Agent.make passes: its tag with its options.
      const copy = yield* Agent.make({ _tag: "Agent", role: "Editor", goal: writer.goal, maxIterations: 3 } as Agent.Options<{}>)
      expect([copy.role, copy.goal, copy.maxIterations]).toEqual(["Editor", writer.goal, 3])
    }))
})

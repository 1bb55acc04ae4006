/**
 * Bad input from JavaScript callers and loaded configs (JSON, YAML): every
 * public constructor and run function answers a wrongly shaped value with a
 * `ValidationError` naming the field, never a thrown error, a defect or a
 * silent acceptance. The builders are called directly (not inside
 * `Effect.suspend`), so a throw at the call site fails the test.
 *
 * Values are passed through `loose` (typed `any` on purpose): this is what a
 * JavaScript caller or a parsed config hands over.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema, Stream } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { toolkit } from "../support/ensemble.ts"

const loose = (u: unknown): any => u

/** Runs a build that must fail with ValidationError (not throw, not die) and returns its message. */
const messageOf = <A, E>(build: () => Effect.Effect<A, E, never>) =>
  Effect.gen(function*() {
    const effect = build() // a throw here fails the test: builders must not throw at the call site
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) throw new Error("expected a ValidationError, the build succeeded")
    const error = Cause.squash(exit.cause)
    expect(error).toBeInstanceOf(EnsembleError.ValidationError)
    return (error as EnsembleError.ValidationError).message
  })

const writerOf = () => Agent.make({ role: "Writer", goal: "Write clear prose" })

describe("Agent.make: wrongly shaped options", () => {
  const rows: ReadonlyArray<{ readonly name: string; readonly options: unknown; readonly message: string }> = [
    { name: "no options", options: undefined, message: "Agent.make expects an options object with at least role and goal" },
    { name: "options null", options: null, message: "Agent.make expects an options object with at least role and goal" },
    { name: "llm null (the specification's rule)", options: { role: "Writer", goal: "g", llm: null }, message: "Agent LLM must not be null" },
    {
      name: "llm a model name",
      options: { role: "Writer", goal: "g", llm: "gpt-4.1" },
      message: "Agent llm must be a Layer providing ChatModel (for example ChatModel.layerLanguageModel), got: \"gpt-4.1\""
    },
    {
      name: "toolkit a plain object",
      options: { role: "Writer", goal: "g", toolkit: { lookup: () => "x" } },
      message: "Agent toolkit must be an effect/ai Toolkit (Toolkit.make(...)), got: an object"
    },
    {
      name: "toolkit with an entry that is not a Tool (the specification's tool-entry rule)",
      options: {
        role: "Writer",
        goal: "g",
        toolkit: Object.assign(function() {}, toolkit, { tools: { lookup: toolkit.tools.lookup, search: { name: "search" } } })
      },
      message: "Tool at index 1 (search) is not an effect/ai Tool: make it with Tool.make"
    },
    {
      name: "allowDelegation \"yes\"",
      options: { role: "Writer", goal: "g", allowDelegation: "yes" },
      message: "Agent allowDelegation must be true or false, got: \"yes\""
    },
    { name: "verbose 1", options: { role: "Writer", goal: "g", verbose: 1 }, message: "Agent verbose must be true or false, got: 1" },
    { name: "background 5", options: { role: "Writer", goal: "g", background: 5 }, message: "Agent background must be a string, got: 5" },
    {
      name: "responseFormat null",
      options: { role: "Writer", goal: "g", responseFormat: null },
      message: "Agent responseFormat must be a string, got: null"
    },
    { name: "maxIterations \"5\"", options: { role: "Writer", goal: "g", maxIterations: "5" }, message: "Agent maxIterations must be a number, got: \"5\"" },
    {
      name: "maxIterations 1e21",
      options: { role: "Writer", goal: "g", maxIterations: 1e21 },
      message: "Agent maxIterations must be at most 9007199254740991, got: 1e+21"
    }
  ]
  for (const row of rows) {
    it.effect(`${row.name} -> "${row.message}"`, () =>
      Effect.gen(function*() {
        expect(yield* messageOf(() => Agent.make(loose(row.options)))).toBe(row.message)
      }))
  }

  it.effect("a field given as a string fails; the same field undefined takes the default", () =>
    Effect.gen(function*() {
      expect(yield* messageOf(() => Agent.make(loose({ role: "Writer", goal: "g", maxIterations: "25" })))).toBe(
        "Agent maxIterations must be a number, got: \"25\""
      )
      const agent = yield* Agent.make({ role: "Writer", goal: "g", maxIterations: undefined, toolkit: undefined })
      expect(agent.maxIterations).toBe(25)
    }))
})

describe("Task.make: wrongly shaped options", () => {
  const rows: ReadonlyArray<{ readonly name: string; readonly options: (writer: Agent.Any) => unknown; readonly message: string }> = [
    { name: "agent undefined", options: () => ({ description: "d", expectedOutput: "e", agent: undefined }), message: "Task agent must not be null" },
    { name: "agent null", options: () => ({ description: "d", expectedOutput: "e", agent: null }), message: "Task agent must not be null" },
    { name: "agent missing", options: () => ({ description: "d", expectedOutput: "e" }), message: "Task agent must not be null" },
    {
      name: "agent a role name",
      options: () => ({ description: "d", expectedOutput: "e", agent: "Writer" }),
      message: "Task agent must be an agent made by Agent.make, got: \"Writer\""
    },
    {
      name: "agent built by hand without a toolkit",
      options: (writer) => {
        const { toolkit: _toolkit, ...rest } = writer
        return { description: "d", expectedOutput: "e", agent: rest }
      },
      message: "Task agent is not a valid agent: its toolkit is missing (build agents with Agent.make)"
    },
    {
      name: "context [undefined]",
      options: (writer) => ({ description: "d", expectedOutput: "e", agent: writer, context: [undefined] }),
      message: "Task context entry at index 0 must be a task made by Task.make, got: undefined"
    },
    {
      name: "context a string",
      options: (writer) => ({ description: "d", expectedOutput: "e", agent: writer, context: "research" }),
      message: "Task context must be an array of tasks, got: \"research\""
    },
    {
      name: "outputType a type name",
      options: (writer) => ({ description: "d", expectedOutput: "e", agent: writer, outputType: "number" }),
      message: "Task outputType must be a Schema (for example Schema.Struct({ ... })), got: \"number\""
    },
    {
      name: "maxOutputRetries \"3\"",
      options: (writer) => ({ description: "d", expectedOutput: "e", agent: writer, maxOutputRetries: "3" }),
      message: "Task maxOutputRetries must be a number, got: \"3\""
    },
    { name: "no options", options: () => undefined, message: "Task.make expects an options object with description, expectedOutput and agent" }
  ]
  for (const row of rows) {
    it.effect(`${row.name} -> "${row.message}"`, () =>
      Effect.gen(function*() {
        const writer = yield* writerOf()
        expect(yield* messageOf(() => Task.make(loose(row.options(writer))))).toBe(row.message)
      }))
  }

  it.effect("an outputType that is not a Schema fails; a Schema is accepted", () =>
    Effect.gen(function*() {
      const writer = yield* writerOf()
      expect(yield* messageOf(() => Task.make(loose({ description: "d", expectedOutput: "e", agent: writer, outputType: Number })))).toBe(
        "Task outputType must be a Schema (for example Schema.Struct({ ... })), got: a function"
      )
      const task = yield* Task.make({ description: "d", expectedOutput: "e", agent: writer, outputType: Schema.Number })
      expect(task.outputType).toBe(Schema.Number)
    }))
})

describe("Ensemble.make: wrongly shaped config", () => {
  const fixture = Effect.gen(function*() {
    const writer = yield* writerOf()
    const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts" })
    const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
    return { writer, researcher, write }
  })
  type Fixture = Effect.Success<typeof fixture>
  const rows: ReadonlyArray<{ readonly name: string; readonly config: (f: Fixture) => unknown; readonly message: string }> = [
    { name: "no config", config: () => undefined, message: "Ensemble.make expects a config object with agents and tasks" },
    {
      name: "agents undefined",
      config: (f) => ({ agents: undefined, tasks: [f.write] }),
      message: "Ensemble agents must be an array of agents made by Agent.make, got: undefined"
    },
    {
      name: "tasks null",
      config: (f) => ({ agents: [f.writer], tasks: null }),
      message: "Ensemble tasks must be an array of tasks made by Task.make, got: null"
    },
    {
      name: "agents [a, undefined]",
      config: (f) => ({ agents: [f.writer, undefined], tasks: [f.write] }),
      message: "Ensemble agents entry at index 1 must be an agent made by Agent.make, got: undefined"
    },
    {
      name: "tasks [t, {}]",
      config: (f) => ({ agents: [f.writer], tasks: [f.write, {}] }),
      message: "Ensemble tasks entry at index 1 must be a task made by Task.make, got: an object"
    },
    {
      name: "a hand-built task without context",
      config: (f) => ({ agents: [f.writer], tasks: [{ ...f.write, context: undefined }] }),
      message: "Ensemble tasks entry at index 0 is not a valid task: its context is missing (build tasks with Task.make)"
    },
    {
      name: "a hand-built agent with a blank role",
      config: (f) => ({ agents: [{ ...f.writer, role: " " }], tasks: [f.write] }),
      message: "Ensemble agents entry at index 0 is not a valid agent: Agent role must not be blank"
    },
    {
      name: "maxDelegationDepth \"3\"",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], maxDelegationDepth: "3" }),
      message: "Ensemble maxDelegationDepth must be a number, got: \"3\""
    },
    {
      name: "verbose \"yes\"",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], verbose: "yes" }),
      message: "Ensemble verbose must be true or false, got: \"yes\""
    },
    {
      name: "inputs with a non-string value",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], inputs: { topic: 5 } }),
      message: "Ensemble inputs value for 'topic' must be a string, got: 5"
    },
    {
      name: "managerLlm a string",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], workflow: "HIERARCHICAL", managerLlm: "gpt-4.1" }),
      message: "Ensemble managerLlm must be a Layer providing ChatModel, got: \"gpt-4.1\""
    },
    {
      name: "allowedWorkers \"Writer\" (not read letter by letter)",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], workflow: "HIERARCHICAL", constraints: { allowedWorkers: "Writer" } }),
      message: "HierarchicalConstraints.allowedWorkers must be an array of roles, got: \"Writer\""
    },
    {
      name: "requiredStages not nested",
      config: (f) => ({
        agents: [f.writer, f.researcher],
        tasks: [f.write],
        workflow: "HIERARCHICAL",
        constraints: { requiredStages: ["Researcher", "Writer"] }
      }),
      message: "HierarchicalConstraints.requiredStages entry at index 0 must be an array of roles, got: \"Researcher\""
    },
    {
      name: "maxCallsPerWorker value \"2\"",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], workflow: "HIERARCHICAL", constraints: { maxCallsPerWorker: { Writer: "2" } } }),
      message: "HierarchicalConstraints.maxCallsPerWorker value for 'Writer' must be a number, got: \"2\""
    },
    {
      name: "globalMaxDelegations 1e21",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], workflow: "HIERARCHICAL", constraints: { globalMaxDelegations: 1e21 } }),
      message: "HierarchicalConstraints.globalMaxDelegations must be at most 9007199254740991, got: 1e+21"
    },
    {
      name: "constraints a string, even outside HIERARCHICAL",
      config: (f) => ({ agents: [f.writer], tasks: [f.write], constraints: "none" }),
      message: "HierarchicalConstraints must be an object"
    }
  ]
  for (const row of rows) {
    it.effect(`${row.name} -> "${row.message}"`, () =>
      Effect.gen(function*() {
        const f = yield* fixture
        expect(yield* messageOf(() => Ensemble.make(loose(row.config(f))))).toBe(row.message)
      }))
  }
})

describe("Ensemble.run / stream: wrongly shaped ensemble or inputs, before any model call", () => {
  const templated = Effect.gen(function*() {
    const writer = yield* writerOf()
    const write = yield* Task.make({ description: "Write about {topic}", expectedOutput: "Prose", agent: writer })
    return yield* Ensemble.make({ agents: [writer], tasks: [write] })
  })

  const rows: ReadonlyArray<{ readonly name: string; readonly inputs: unknown; readonly message: string }> = [
    { name: "an input value undefined", inputs: { topic: undefined }, message: "Ensemble.run inputs value for 'topic' must be a string, got: undefined" },
    { name: "an input value null", inputs: { topic: null }, message: "Ensemble.run inputs value for 'topic' must be a string, got: null" },
    { name: "an input value a number", inputs: { topic: 42 }, message: "Ensemble.run inputs value for 'topic' must be a string, got: 42" },
    { name: "inputs null", inputs: null, message: "Ensemble.run inputs must be an object of strings by variable name, got: null" },
    { name: "inputs an array", inputs: ["Effect"], message: "Ensemble.run inputs must be an object of strings by variable name, got: an array of 1" }
  ]
  for (const row of rows) {
    it.effect(`run: ${row.name} -> "${row.message}"`, () =>
      Effect.gen(function*() {
        const ensemble = yield* templated
        const model = ChatModel.scripted([{ text: "never" }])
        const message = yield* messageOf(() => Ensemble.run(ensemble, loose(row.inputs)).pipe(Effect.provide(model.layer)))
        expect(message).toBe(row.message)
        expect(model.calls).toBe(0)
      }))
  }

  it.effect("stream: an input value undefined fails the stream with the same ValidationError", () =>
    Effect.gen(function*() {
      const ensemble = yield* templated
      const model = ChatModel.scripted([{ text: "never" }])
      const error = yield* Effect.flip(
        Stream.runDrain(Ensemble.stream(ensemble, loose({ topic: undefined }))).pipe(Effect.provide(model.layer))
      )
      expect(error.message).toBe("Ensemble.run inputs value for 'topic' must be a string, got: undefined")
      expect(model.calls).toBe(0)
    }))

  it.effect("run: something that is not an ensemble", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* messageOf(() => Ensemble.run<never>(loose({ agents: [] })).pipe(Effect.provide(model.layer)))
      expect(message).toBe("Ensemble.run expects an ensemble made by Ensemble.make, got: an object")
    }))

  it.effect("run: an ensemble changed by hand after make is checked again", () =>
    Effect.gen(function*() {
      const ensemble = yield* templated
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* messageOf(() =>
        Ensemble.run<never>(loose({ ...ensemble, agents: [undefined] }), { topic: "Effect" }).pipe(Effect.provide(model.layer))
      )
      expect(message).toBe("Ensemble agents entry at index 0 must be an agent made by Agent.make, got: undefined")
      expect(model.calls).toBe(0)
    }))

  it.effect("make returns a frozen ensemble: its lists cannot be changed after the checks", () =>
    Effect.gen(function*() {
      const ensemble = yield* templated
      expect(Object.isFrozen(ensemble)).toBe(true)
      expect(() => (ensemble.agents as Array<Agent.Any>).push(ensemble.agents[0])).toThrow(TypeError)
    }))
})

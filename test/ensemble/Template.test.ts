/**
 * `Template`: the variables of a template; `resolve` (all missing variables listed in order, only
 * own keys count, long templates cut in the message); and `Ensemble.run` filling the templates
 * (build-time and run-time inputs, `{{x}}` as a literal, missing inputs before any model call).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Ensemble, EnsembleError, Task, Template } from "../../src/ensemble/index.ts"
import { prompts, userPrompt, systemPrompt, researcherOf, writerOf } from "../support/validation.ts"

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
      if (error._tag !== "PromptTemplateError") throw error
      expect(error.missing).toEqual(["a", "c"])
      expect(error.template).toBe("Use {a}, {b} and {c}")
      expect(error.message).toBe(
        "Missing template variables: [a, c]. Provide them in run(inputs). Template: 'Use {a}, {b} and {c}'"
      )
    }))

  it.effect("an inherited property is not an input (only own keys count)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Template.resolve("{toString}", {}))
      expect(error._tag === "PromptTemplateError" && error.missing).toEqual(["toString"])
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

  describe("wrong types from JavaScript: typed errors, never a TypeError", () => {
    it.effect.each([
      { name: "inputs null", template: "Research {topic}", inputs: null },
      { name: "inputs a string", template: "Research {topic}", inputs: "topic" },
      { name: "inputs an array", template: "Research {topic}", inputs: ["topic"] },
      { name: "a template that is a number", template: 5, inputs: {} },
      { name: "a template that is undefined", template: undefined, inputs: {} },
      { name: "an input that is a number", template: "Research {topic}", inputs: { topic: 5 } },
      { name: "an input that is an object", template: "Research {topic}", inputs: { topic: { a: 1 } } },
      { name: "an input that is a symbol", template: "Research {topic}", inputs: { topic: Symbol("x") } },
      { name: "an input whose toString throws", template: "Research {topic}", inputs: new Map([["topic", { toString: () => { throw new Error("no") } }]]) },
      { name: "a record whose getter throws", template: "Research {topic}", inputs: Object.defineProperty({}, "topic", { enumerable: true, get: () => { throw new Error("no") } }) }
    ])("resolve with $name: ValidationError", ({ inputs, template }) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Template.resolve(template as never, inputs as never))
        expect(error).toBeInstanceOf(EnsembleError.ValidationError)
      }))

    it("variables of a template that is not a string throws a ValidationError", () => {
      expect(() => Template.variables(5 as never)).toThrow(EnsembleError.ValidationError)
      expect(() => Template.variables(null as never)).toThrow("A template must be a string (got null)")
    })
  })
})

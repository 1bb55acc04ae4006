/**
 * Structured output of a task in the provider's JSON mode: when the task's model says it has one
 * (`info.structuredOutputs`), every request of the task's agent (its tool loop, its final answer,
 * every re-ask) carries the output's JSON Schema as `responseFormat`, in OpenAI's strict form
 * when the Schema has one, and the prompt shows that same JSON Schema; the answer decodes, and an
 * answer that does not is re-asked as without JSON mode (a separate conversation showing the
 * error and the schema, at most `maxOutputRetries` times, then the same error). A model without
 * JSON mode is never sent a `responseFormat`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ChatModel, DirectReturn } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { Lookup, toolkit } from "../support/ensemble.ts"
import { asTaskExecutionError, closing, offered } from "../support/sequential.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { Rating, ratingDecodeError as decodeError, ratingJsonSchema } from "../support/outputSchemas.ts"

/** Rating's JSON Schema in OpenAI's strict form: what the provider is sent and the agent is shown. */
const strictRating = ratingJsonSchema(true)
/** The responseFormat of a task whose schema has a strict form (the provider is told to enforce it). */
const format = (schema: unknown) => ({
  name: "task_output",
  description: "The answer to the task: JSON matching this schema.",
  schema,
  strict: true
})
const outputFormat = (schema: unknown) =>
  "Answer with JSON only: no markdown fences, no text before or after it. " +
  `It must match this JSON Schema:\n${JSON.stringify(schema, null, 2)}`
const analystSystem = ["You are Analyst.", "Your goal: Score companies", closing].join("\n\n")
const ratingUser = (schema: unknown) => `## Task\nRate ACME\n\n## Expected output\nA rating\n\n## Output format\n${outputFormat(schema)}`
const right = `{"company": "ACME", "score": "7.5"}`

const ratingEnsemble = (options: {
  readonly llm?: ChatModel.ScriptedModel
  readonly maxOutputRetries?: number
  readonly maxIterations?: number
  readonly outputType?: Schema.Top & { readonly DecodingServices: never }
} = {}) =>
  Effect.gen(function*() {
    const analyst = yield* Agent.make({
      role: "Analyst",
      goal: "Score companies",
      toolkit,
      ...(options.llm === undefined ? {} : { llm: options.llm.layer }),
      ...(options.maxIterations === undefined ? {} : { maxIterations: options.maxIterations })
    })
    const rate = yield* Task.make({
      description: "Rate ACME",
      expectedOutput: "A rating",
      agent: analyst,
      outputType: options.outputType ?? Rating,
      ...(options.maxOutputRetries === undefined ? {} : { maxOutputRetries: options.maxOutputRetries })
    })
    return yield* Ensemble.make({ agents: [analyst], tasks: [rate] })
  })

/** Handlers of the lookup tool that answer at once. */
const lookups = toolkit.toLayer({ lookup: ({ query }) => Effect.succeed(`found ${query}`) })

const correction = (error: string, previous: string) =>
  `Your answer could not be read as the required JSON.\n\nError: ${error}\n\nYour answer was:\n${previous}\n\n${outputFormat(strictRating)}`

const lookupCall = { toolCalls: [{ id: "c1", name: Lookup.name, params: { query: "ACME" } }] }

describe("a task whose model has a JSON mode", () => {
  it.effect("every request of its tool loop carries the Schema as responseFormat; the JSON answer decodes", () => {
    const model = ChatModel.scripted([lookupCall, { text: right }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble())

      expect(model.calls).toBe(2)
      expect(model.requests.map((request) => request.responseFormat)).toEqual([format(strictRating), format(strictRating)])
      expect(requestTranscripts(model)[0]).toEqual([`system: ${analystSystem}`, `user: ${ratingUser(strictRating)}`])
      expect(offered(model)[0]).toEqual({ tools: ["lookup"], toolChoice: "auto" })
      expect(output.taskOutputs[0].raw).toBe(right)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
      expect(output.taskOutputs[0].toolCallCount).toBe(1)
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("the final answer at maxIterations carries it too", () => {
    const model = ChatModel.scripted([lookupCall, { text: right }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble({ maxIterations: 1 }))

      expect(model.calls).toBe(2)
      expect(offered(model)[1].toolChoice).toBe("none")
      expect(model.requests.every((request) => request.responseFormat?.name === "task_output")).toBe(true)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("an answer that does not decode is re-asked as without JSON mode, the re-ask in JSON mode too", () => {
    const wrong = `{"company": "ACME", "score": 7.5}`
    const model = ChatModel.scripted([{ text: wrong }, { text: right }, { text: "never" }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const error = yield* decodeError(JSON.parse(wrong))
      const output = yield* Ensemble.run(yield* ratingEnsemble())

      expect(model.calls).toBe(2)
      expect(requestTranscripts(model)).toEqual([
        [`system: ${analystSystem}`, `user: ${ratingUser(strictRating)}`],
        [`system: ${analystSystem}`, `user: ${correction(error, wrong)}`]
      ])
      expect(model.requests.map((request) => request.responseFormat)).toEqual([format(strictRating), format(strictRating)])
      expect(output.taskOutputs[0].raw).toBe(right)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("after maxOutputRetries re-asks the task fails with the same error as without JSON mode", () => {
    const answers = [`{"company": "ACME", "score": 1}`, "no JSON here"]
    const model = ChatModel.scripted([...answers.map((text) => ({ text })), { text: "never" }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const error = asTaskExecutionError(yield* Effect.flip(Ensemble.run(yield* ratingEnsemble({ maxOutputRetries: 1 }))))

      expect(model.calls).toBe(2)
      expect(error.reason).toMatch(
        /^the output did not match the task's outputType after 2 attempt\(s\); last error: not valid JSON \(/
      )
      expect(error.message).toBe(`Task 'Rate ACME' (agent 'Analyst') failed: ${error.reason}`)
      expect(error.completedOutputs).toEqual([])
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("a Schema whose answer is not an object is asked for as { value } and unwrapped", () => {
    const Tags = Schema.Array(Schema.String)
    const wrapped = {
      type: "object",
      properties: { value: { type: "array", items: { type: "string" } } },
      required: ["value"],
      additionalProperties: false
    }
    const model = ChatModel.scripted([{ text: `{"value": ["fast", "cheap"]}` }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble({ outputType: Tags }))

      expect(model.requests[0].responseFormat).toEqual(format(wrapped))
      expect(requestTranscripts(model)[0][1]).toBe(`user: ${ratingUser(wrapped)}`)
      expect(output.taskOutputs[0].parsedOutput).toEqual(["fast", "cheap"])
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("a Schema with no strict form is sent as it is", () => {
    const Note = Schema.Struct({ text: Schema.String, tag: Schema.optionalKey(Schema.String) })
    const model = ChatModel.scripted([{ text: `{"text": "ok"}` }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble({ outputType: Note }))

      const schema = model.requests[0].responseFormat?.schema
      expect(schema).toMatchObject({ type: "object", required: ["text"] })
      expect(model.requests[0].responseFormat?.strict).toBe(false) // the provider must not enforce it
      expect(requestTranscripts(model)[0][1]).toBe(`user: ${ratingUser(schema)}`)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ text: "ok" })
    }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
  })

  it.effect("a direct return is the answer, read as without JSON mode", () => {
    const handlers = toolkit.toLayer({ lookup: () => DirectReturn.final(right) })
    const model = ChatModel.scripted([lookupCall, { text: "never" }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble())

      expect(model.calls).toBe(1)
      expect(model.requests[0].responseFormat).toEqual(format(strictRating))
      expect(output.taskOutputs[0].raw).toBe(right)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
    }).pipe(Effect.provide(model.layer), Effect.provide(handlers))
  })

  it.effect("a direct return is the answer even when the model's own text decodes", () => {
    const handlers = toolkit.toLayer({ lookup: () => DirectReturn.final(right) })
    const own = `{"company": "ACME", "score": "1"}`
    const model = ChatModel.scripted([{ text: own, ...lookupCall }, { text: "never" }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const output = yield* Ensemble.run(yield* ratingEnsemble())

      expect(model.calls).toBe(1)
      expect(output.taskOutputs[0].raw).toBe(right)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
    }).pipe(Effect.provide(model.layer), Effect.provide(handlers))
  })
})

describe("the JSON mode is the task's model's", () => {
  it.effect("a model without one is never sent a responseFormat", () =>
    Effect.forEach([undefined, false], (structuredOutputs) => {
      const model = ChatModel.scripted(
        [lookupCall, { text: "not JSON" }, { text: right }],
        structuredOutputs === undefined ? undefined : { structuredOutputs }
      )
      return Effect.gen(function*() {
        const output = yield* Ensemble.run(yield* ratingEnsemble())

        expect(model.calls).toBe(3)
        expect(model.requests.map((request) => request.responseFormat)).toEqual([undefined, undefined, undefined])
        expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
      }).pipe(Effect.provide(model.layer), Effect.provide(lookups))
    }, { discard: true }))

  it.effect("an agent's own model with a JSON mode gets it; the ensemble's model without one does not", () => {
    const own = ChatModel.scripted([{ text: right }], { structuredOutputs: true })
    const shared = ChatModel.scripted([{ text: right }])
    return Effect.gen(function*() {
      const analyst = yield* Agent.make({ role: "Analyst", goal: "Score companies", llm: own.layer })
      const checker = yield* Agent.make({ role: "Checker", goal: "Check scores" })
      const rate = yield* Task.make({ description: "Rate ACME", expectedOutput: "A rating", agent: analyst, outputType: Rating })
      const check = yield* Task.make({ description: "Check it", expectedOutput: "A rating", agent: checker, outputType: Rating })
      const output = yield* Ensemble.run(yield* Ensemble.make({ agents: [analyst, checker], tasks: [rate, check] }))

      expect(own.requests.map((request) => request.responseFormat)).toEqual([format(strictRating)])
      expect(shared.requests.map((request) => request.responseFormat)).toEqual([undefined])
      expect(output.taskOutputs.map((task) => task.parsedOutput)).toEqual([{ company: "ACME", score: 7.5 }, { company: "ACME", score: 7.5 }])
    }).pipe(Effect.provide(shared.layer))
  })

  it.effect("a task without an outputType is never sent one", () => {
    const model = ChatModel.scripted([{ text: "plain words" }], { structuredOutputs: true })
    return Effect.gen(function*() {
      const analyst = yield* Agent.make({ role: "Analyst", goal: "Score companies" })
      const rate = yield* Task.make({ description: "Rate ACME", expectedOutput: "A rating", agent: analyst })
      const output = yield* Ensemble.run(yield* Ensemble.make({ agents: [analyst], tasks: [rate] }))

      expect(model.requests[0].responseFormat).toBeUndefined()
      expect(output.raw).toBe("plain words")
    }).pipe(Effect.provide(model.layer))
  })
})

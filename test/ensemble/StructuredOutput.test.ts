/**
 * Structured output of a task (`outputType`): the JSON Schema is in the prompt and the answer
 * decodes; an invalid answer (or text that is no JSON) gets one separate correction call showing the
 * error; exhausting `maxOutputRetries` fails the task.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { requestTranscripts } from "../support/transcript.ts"
import { closing, offered, summary, asTaskExecutionError } from "../support/sequential.ts"
import { Rating, ratingDecodeError as decodeError, ratingJsonSchema as ratingSchemaOf } from "../support/outputSchemas.ts"

// -----------------------------------------------------------------------------
// Structured output
// -----------------------------------------------------------------------------

/** The JSON Schema of Rating's encoded side, as the prompt shows it. */
const ratingJsonSchema = ratingSchemaOf(false)
const outputFormat = "Answer with JSON only: no markdown fences, no text before or after it. " +
  `It must match this JSON Schema:\n${JSON.stringify(ratingJsonSchema, null, 2)}`
const analystSystem = ["You are Analyst.", "Your goal: Score companies", closing].join("\n\n")
const ratingUser = `## Task\nRate ACME\n\n## Expected output\nA rating\n\n## Output format\n${outputFormat}`

const makeRatingEnsemble = (maxOutputRetries?: number) =>
  Effect.gen(function*() {
    const analyst = yield* Agent.make({ role: "Analyst", goal: "Score companies" })
    const rate = yield* Task.make({
      description: "Rate {company}",
      expectedOutput: "A rating",
      agent: analyst,
      outputType: Rating,
      ...(maxOutputRetries === undefined ? {} : { maxOutputRetries })
    })
    return yield* Ensemble.make({ agents: [analyst], tasks: [rate] })
  })

const correction = (error: string, previous: string) =>
  `Your answer could not be read as the required JSON.\n\nError: ${error}\n\nYour answer was:\n${previous}\n\n${outputFormat}`

interface DecodeRow {
  readonly name: string
  readonly answer: string
}

const json = `{"company": "ACME", "score": "7.5"}`
const decodeRows: ReadonlyArray<DecodeRow> = [
  { name: "bare JSON", answer: json },
  { name: "JSON with surrounding whitespace", answer: `\n  ${json}\n` },
  { name: "a ```json fenced block", answer: "```json\n" + json + "\n```" },
  { name: "a plain ``` fenced block inside prose", answer: "Here it is:\n```\n" + json + "\n```\nDone." },
  { name: "JSON inside prose", answer: `Here is my rating: ${json} I hope it helps.` },
  { name: "JSON inside prose with a bracketed remark after it", answer: `Rating: ${json} (scores are in [0, 10]).` },
  { name: "JSON inside prose with a bracketed remark before it", answer: `As asked [see brief], my rating: ${json}` }
]

describe("structured output: the JSON Schema is in the prompt and the answer decodes", () => {
  for (const row of decodeRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ text: row.answer }, { text: "never" }])
      return Effect.gen(function*() {
        const ensemble = yield* makeRatingEnsemble()
        const output = yield* Ensemble.run(ensemble, { company: "ACME" })

        expect(model.calls).toBe(1)
        expect(requestTranscripts(model)).toEqual([[`system: ${analystSystem}`, `user: ${ratingUser}`]])
        const [rating] = output.taskOutputs
        expect(rating.raw).toBe(row.answer)
        // the decoded value: score is a number, not the string the JSON holds
        expect(rating.parsedOutput).toEqual({ company: "ACME", score: 7.5 })
        expect(output.raw).toBe(row.answer)
      }).pipe(Effect.provide(model.layer))
    })
  }
})

describe("structured output: an invalid answer", () => {
  it.effect("gets one separate correction call (system prompt + correction only) and then succeeds", () => {
    const wrong = `{"company": "ACME", "score": 7.5}`
    const right = `{"company": "ACME", "score": "7.5"}`
    const model = ChatModel.scripted([{ text: wrong }, { text: right }, { text: "never" }])
    return Effect.gen(function*() {
      const error = yield* decodeError(JSON.parse(wrong))
      const ensemble = yield* makeRatingEnsemble()
      const output = yield* Ensemble.run(ensemble, { company: "ACME" })

      expect(model.calls).toBe(2)
      expect(requestTranscripts(model)).toEqual([
        [`system: ${analystSystem}`, `user: ${ratingUser}`],
        // not the whole history: only the system prompt and the correction
        [`system: ${analystSystem}`, `user: ${correction(error, wrong)}`]
      ])
      expect(offered(model)[1]).toEqual({ tools: [], toolChoice: "auto" })
      expect(output.taskOutputs.map(summary)).toEqual([
        {
          raw: right,
          taskDescription: "Rate ACME",
          agentRole: "Analyst",
          toolCallCount: 0,
          parsedOutput: { company: "ACME", score: 7.5 }
        }
      ])
    }).pipe(Effect.provide(model.layer))
  })

  it.effect("text that is no JSON at all is shown with a JSON error and corrected", () => {
    const prose = "ACME looks solid, I would say seven and a half."
    const right = `{"company": "ACME", "score": "7.5"}`
    const model = ChatModel.scripted([{ text: prose }, { text: right }])
    return Effect.gen(function*() {
      const ensemble = yield* makeRatingEnsemble()
      const output = yield* Ensemble.run(ensemble, { company: "ACME" })

      expect(model.calls).toBe(2)
      const [system, user] = requestTranscripts(model)[1]
      expect(system).toBe(`system: ${analystSystem}`)
      expect(user.startsWith("user: Your answer could not be read as the required JSON.\n\nError: not valid JSON (")).toBe(true)
      expect(user.endsWith(`\n\nYour answer was:\n${prose}\n\n${outputFormat}`)).toBe(true)
      expect(output.taskOutputs[0].parsedOutput).toEqual({ company: "ACME", score: 7.5 })
      expect(output.raw).toBe(right)
    }).pipe(Effect.provide(model.layer))
  })
})

interface RetryRow {
  readonly maxOutputRetries: number | undefined
  readonly attempts: number
}

const retryRows: ReadonlyArray<RetryRow> = [
  { maxOutputRetries: 0, attempts: 1 },
  { maxOutputRetries: 1, attempts: 2 },
  { maxOutputRetries: undefined, attempts: 4 } // the default, 3
]

describe("structured output: exhausting maxOutputRetries fails the task", () => {
  for (const row of retryRows) {
    it.effect(`maxOutputRetries ${row.maxOutputRetries ?? "default (3)"}: TaskExecutionError after ${row.attempts} attempt(s)`, () => {
      const answers = Array.from({ length: row.attempts }, (_, i) => `{"company": "ACME", "score": ${i}}`)
      const model = ChatModel.scripted([...answers.map((text) => ({ text })), { text: "never" }])
      return Effect.gen(function*() {
        const lastError = yield* decodeError(JSON.parse(answers[answers.length - 1]))
        const ensemble = yield* makeRatingEnsemble(row.maxOutputRetries)
        const error = asTaskExecutionError(yield* Effect.flip(Ensemble.run(ensemble, { company: "ACME" })))

        const reason =
          `the output did not match the task's outputType after ${row.attempts} attempt(s); last error: ${lastError}`
        expect(error._tag).toBe("TaskExecutionError")
        expect(error.reason).toBe(reason)
        expect(error.message).toBe(`Task 'Rate ACME' (agent 'Analyst') failed: ${reason}`)
        expect(error.taskDescription).toBe("Rate ACME")
        expect(error.agentRole).toBe("Analyst")
        expect(error.completedOutputs).toEqual([])
        expect(model.calls).toBe(row.attempts)
        // every correction shows the previous answer, in a conversation of its own
        const corrections = yield* Effect.forEach(
          answers.slice(0, -1),
          (answer) => Effect.map(decodeError(JSON.parse(answer)), (e) => [`system: ${analystSystem}`, `user: ${correction(e, answer)}`])
        )
        expect(requestTranscripts(model)).toEqual([[`system: ${analystSystem}`, `user: ${ratingUser}`], ...corrections])
      }).pipe(Effect.provide(model.layer))
    })
  }
})

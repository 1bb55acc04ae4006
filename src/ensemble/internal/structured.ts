/**
 * A task's `outputType`: how its agent is asked for it, how its answers are
 * read, and the re-asks after one that does not decode (the specification's:
 * each in a short conversation of its own showing the error and the required
 * schema, at most `maxOutputRetries` of them).
 *
 * The agent is always prompted with the JSON Schema. When the task's model
 * answers in the provider's own JSON mode (`info.structuredOutputs`), the
 * task asks the way a chain's structured output does: each of its agent's
 * `Chain.run`s (the work and every re-ask) passes `output` in the `"native"`
 * strategy (`StructuredOutput`), so every model request carries the Schema
 * as `responseFormat` and the run decodes the answer itself — with no re-asks
 * of its own (`retries: 0`): the re-asks stay the task's.
 *
 * @internal
 */
import { Effect, type Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import * as Chain from "../../Chain.ts"
import type { ChatModel } from "../../ChatModel.ts"
import type { RunError } from "../../LoopError.ts"
import * as Mode from "../../Mode.ts"
import type * as Outcome from "../../Outcome.ts"
import * as StructuredOutput from "../../StructuredOutput.ts"
import { decodeText } from "../../internal/structured/decode.ts"
import { storedLimits } from "../../internal/jsonBounds.ts"
import * as AgentPrompt from "../AgentPrompt.ts"
import { TaskFailure } from "./taskFailure.ts"

/** @internal a task's answer: its text, and (for an `outputType`) what it decoded to */
export interface Answer {
  readonly raw: string
  readonly parsed: unknown
}

/** An answer that did not decode, and the decode error. */
class Rejected {
  readonly raw: string
  readonly error: string
  constructor(raw: string, error: string) {
    this.raw = raw
    this.error = error
  }
}

/** @internal an answer read: decoded, not decoded (`Rejected`), or the run that gave it failed */
export type Verdict = Effect.Effect<Answer, Rejected | TaskFailure, ChatModel>

/** @internal how a task asks for its `outputType` */
export interface Asking {
  readonly schema: Schema.Codec<unknown, unknown>
  /** The JSON Schema the agent is shown, in its prompt and in every re-ask. */
  readonly jsonSchema: unknown
  /** In the provider's JSON mode: the `output` every run of the task passes; absent, the answer's text is decoded. */
  readonly output: StructuredOutput.StructuredOutput<unknown> | undefined
}

const shown = new WeakMap<Schema.Codec<unknown, unknown>, unknown>()

/** @internal the JSON Schema an agent is shown for a task's `outputType` (made once per Schema) */
export const jsonSchemaOf = (outputType: Schema.Codec<unknown, unknown>): unknown => {
  let jsonSchema = shown.get(outputType)
  if (jsonSchema === undefined) {
    jsonSchema = Tool.getJsonSchemaFromSchema(outputType)
    shown.set(outputType, jsonSchema)
  }
  return jsonSchema
}

/** The response format's name and description. */
const format = { name: "task_output", description: "The answer to the task: JSON matching this schema." } as const

/**
 * The `output` of a task's runs in the provider's JSON mode: the Schema in
 * OpenAI's strict form when it has one (OpenAI's JSON mode refuses others),
 * else as it is; `undefined` when it cannot be asked for that way.
 */
const nativeOutput = (outputType: Schema.Codec<unknown, unknown>): StructuredOutput.StructuredOutput<unknown> | undefined => {
  const schema = outputType as StructuredOutput.OutputSchema
  const strict = StructuredOutput.make(schema, { ...format, strategy: "native", retries: 0, strict: true })
  if (strict.problem === undefined) return strict
  const plain = StructuredOutput.make(schema, { ...format, strategy: "native", retries: 0 })
  return plain.problem === undefined ? plain : undefined
}

const byText = new WeakMap<Schema.Codec<unknown, unknown>, Asking>()
const byNativeMode = new WeakMap<Schema.Codec<unknown, unknown>, Asking>()

/**
 * @internal how a task with `outputType` asks for it: by its text, or (`native`)
 * in the provider's JSON mode — as a chain's structured output asks: its answer
 * an object (`{ "value": … }` around a Schema whose answer is not one), in
 * OpenAI's strict form when the Schema has one — and the agent shown that
 * JSON Schema; made once per Schema
 */
export const askingOf = (outputType: Schema.Codec<unknown, unknown>, native: boolean): Asking => {
  const cache = native ? byNativeMode : byText
  let asking = cache.get(outputType)
  if (asking === undefined) {
    const output = native ? nativeOutput(outputType) : undefined
    asking = { schema: outputType, jsonSchema: output === undefined ? jsonSchemaOf(outputType) : output.jsonSchema, output }
    cache.set(outputType, asking)
  }
  return asking
}

/**
 * @internal `raw` decoded by the task's Schema; `fromResults` when `raw` is
 * the results of a tool round that ended the run (held to the limits they
 * were stored under, not to a model's argument limits)
 */
export const judged = (asking: Asking, raw: string, fromResults = false): Verdict =>
  Effect.mapBoth(decodeText(asking.schema, raw, undefined, fromResults ? storedLimits : undefined), {
    onFailure: (error) => new Rejected(raw, error),
    onSuccess: (parsed): Answer => ({ raw, parsed })
  })

/** @internal the answer of a run that ended on a tool round (a direct return, a `ReturnBehavior`): its results' text */
export const resultsText = (results: ReadonlyArray<{ readonly encoded: unknown }>): string =>
  results.map((r) => typeof r.encoded === "string" ? r.encoded : JSON.stringify(r.encoded)).join("\n\n")

/** @internal a run's last chain, its answer's text, and that answer read */
export interface Answered {
  readonly chain: Chain.Chain
  readonly raw: string
  readonly verdict: Verdict
}

/**
 * @internal the answer of a run in the provider's JSON mode that ended `Ok`:
 * its decoded `output`; a run that ended on a tool round (a direct return, a
 * `ReturnBehavior`) answered with the results, read as without JSON mode
 */
export const nativeOk = (asking: Asking, ok: Outcome.AnyOk): Answered => {
  if (ok.reason === "direct-return" || ok.reason === "return-behavior") {
    const raw = resultsText(ok.extra)
    return { chain: ok.chain, raw, verdict: judged(asking, raw, true) }
  }
  const raw = Chain.text(ok.chain)
  return { chain: ok.chain, raw, verdict: Effect.succeed({ raw, parsed: ok.output }) }
}

/**
 * @internal the answer of a run in the provider's JSON mode that failed because
 * it did not decode (`OutputInvalid`): the answer and the decode error, or the
 * results of a run that ended on a tool round, read as without JSON mode;
 * `undefined` for a run that failed otherwise
 */
export const nativeRejected = (asking: Asking, error: RunError): Answered | undefined => {
  if (error.reason._tag !== "OutputInvalid") return undefined
  const chain = error.chain
  // The run ended on a tool round (the last message holds its results): the results are the answer.
  if (chain.messages[chain.messages.length - 1]?.role === "tool") {
    const raw = resultsText(chain.lastToolResults)
    return { chain, raw, verdict: judged(asking, raw, true) }
  }
  return { chain, raw: error.reason.raw, verdict: Effect.fail(new Rejected(error.reason.raw, error.reason.error)) }
}

/** One re-ask: the system prompt and the correction, alone; its answer read. */
const reAsk = (asking: Asking, ask: Chain.Chain): Verdict => {
  if (asking.output === undefined) {
    return Chain.run(ask, { mode: Mode.whileNeedsResponse, maxRuns: 1 }).pipe(
      Effect.mapError((failure) => new TaskFailure(failure.message)),
      Effect.flatMap((outcome) => judged(asking, Chain.text(outcome.chain)))
    )
  }
  return Effect.matchEffect(Chain.run(ask, { mode: Mode.whileNeedsResponse, maxRuns: 1, output: asking.output }), {
    onFailure: (failure) => nativeRejected(asking, failure)?.verdict ?? Effect.fail(new TaskFailure(failure.message)),
    onSuccess: (outcome) =>
      outcome._tag === "Ok" ? nativeOk(asking, outcome).verdict : judged(asking, Chain.text(outcome.chain))
  })
}

/**
 * @internal the task's answer from its `first` one: decoded, or asked again in
 * a short separate conversation after each that did not decode, up to the
 * task's `maxOutputRetries` times
 */
export const corrected = (
  asking: Asking,
  maxOutputRetries: number,
  system: string,
  first: Verdict
): Effect.Effect<Answer, TaskFailure, ChatModel> => {
  const attempt = (verdict: Verdict, retriesLeft: number, attempts: number): Effect.Effect<Answer, TaskFailure, ChatModel> =>
    Effect.catch(verdict, (failure) => {
      if (failure instanceof TaskFailure) return Effect.fail(failure)
      if (retriesLeft === 0) {
        return Effect.fail(
          new TaskFailure(
            `the output did not match the task's outputType after ${attempts} attempt(s); last error: ${failure.error}`
          )
        )
      }
      const ask = Chain.make({ system, user: AgentPrompt.correction(failure.error, failure.raw, asking.jsonSchema) })
      return attempt(reAsk(asking, ask), retriesLeft - 1, attempts + 1)
    })
  return attempt(first, maxOutputRetries, 1)
}

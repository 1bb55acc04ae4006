/**
 * A run with an `output` (`StructuredOutput`): the mode runs as usual, with
 * a final-answer tool added (`"tool"`) or the answer's JSON Schema on every
 * request (`"native"`); then the answer is decoded, and re-asked with the
 * decode error at most `retries` times. The chain the caller gets back
 * (outcome or `RunError`) has the caller's toolkit, never the final-answer
 * tool.
 *
 * @internal
 */
import { Effect, Schema, Stream } from "effect"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import { ChatModel, infoOf, type ResponseFormat } from "../chatModel.ts"
import { InvalidInput, RunError } from "../../LoopError.ts"
import { OutputInvalid } from "./outputInvalid.ts"
import * as Outcome from "../../Outcome.ts"
import * as ReturnBehavior from "../../ReturnBehavior.ts"
import { isStructuredOutput, make, type OutputSchema, type StructuredOutput } from "../../StructuredOutput.ts"
import { type Chain, text } from "../chain.ts"
import { addUser } from "../chainInput.ts"
import { decodeText, decodeValue } from "./decode.ts"
import { redactedShort } from "../redact.ts"
import type { Limits } from "../jsonBounds.ts"

/** One run of the mode on `chain` (the caller's options, without `output`). */
type RunOnce<R> = (chain: Chain) => Effect.Effect<Outcome.Final, RunError, R>

/** The longest decode error the model or the caller is shown. */
const maxErrorText = 2_000

/** `error` redacted, then cut. */
const bounded = (error: string): string => redactedShort(error, maxErrorText)

/** What the attempts so far have seen: how many answers did not decode. */
interface Attempts {
  failed: number
}

/** The answer inside what the model gave: `value` of `{ value }` when the output is asked for wrapped. */
const unwrap = (output: StructuredOutput<unknown>, given: unknown): unknown =>
  output.wrapped && typeof given === "object" && given !== null && Object.hasOwn(given, "value")
    ? (given as { readonly value: unknown }).value
    : given

/** The final-answer tool: the output's JSON Schema as parameters, decoded by its handler, ending the loop. */
const finalTool = (output: StructuredOutput<unknown>) =>
  Tool.dynamic(output.name, {
    description: output.description,
    parameters: output.jsonSchema as { readonly [key: string]: unknown },
    success: Schema.Unknown,
    failure: Schema.String
  }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")

/**
 * The final-answer tool's handler: arguments that decode are the answer;
 * others are fed back with the error while re-asks are left, and end the
 * run once they are not (the run then fails with `OutputInvalid`).
 */
const finalHandler = (output: StructuredOutput<unknown>, attempts: Attempts) => (params: unknown) =>
  Effect.catch(Effect.as(decodeValue(output.schema, unwrap(output, params)), params), (error) => {
    attempts.failed++
    return attempts.failed > output.retries
      ? Effect.succeed(params)
      : Effect.fail(
        `The answer did not match the required schema: ${bounded(error)}. Call \`${output.name}\` again with corrected arguments.`
      )
  })

/** The `ChatModel` with `format` on every request. */
const withFormat = (model: ChatModel["Service"], format: ResponseFormat): ChatModel["Service"] =>
  ChatModel.of({
    ...model,
    generate: (request) => model.generate({ ...request, responseFormat: format }),
    stream: (request) => Stream.suspend(() => model.stream({ ...request, responseFormat: format }))
  })

/** @internal a run's `output` option as a StructuredOutput, or what is wrong with it */
export const outputOf = (spec: unknown): StructuredOutput<unknown> | InvalidInput => {
  const output = isStructuredOutput(spec)
    ? spec
    : Schema.isSchema(spec)
    ? make(spec as OutputSchema)
    : new InvalidInput({ field: "output", rule: "must be a Schema or StructuredOutput.make(schema, options)", value: spec })
  return output instanceof InvalidInput ? output : output.problem ?? output
}

/**
 * @internal a run with `output`: answers decoded (and re-asked) until one
 * decodes or the re-asks run out; an answer given as text is held to
 * `limits`, the run's tool-argument limits
 */
export const structuredRun = <R>(
  chain: Chain,
  spec: unknown,
  runOnce: RunOnce<R>,
  limits: Limits
): Effect.Effect<Outcome.Final, RunError, R | ChatModel> => {
  const output = outputOf(spec)
  if (output instanceof InvalidInput) return Effect.fail(new RunError({ reason: output, chain }))
  return Effect.flatMap(Effect.service(ChatModel), (model): Effect.Effect<Outcome.Final, RunError, R> => {
    const native = output.strategy === "native" || (output.strategy === "auto" && infoOf(model)?.structuredOutputs === true)
    const attempts: Attempts = { failed: 0 }
    if (native) {
      const format: ResponseFormat = { name: output.name, description: output.description, schema: output.jsonSchema, strict: output.strict }
      const asked = attempt(chain, chain, output, attempts, runOnce, false, limits)
      return Effect.provideService(asked, ChatModel, withFormat(model, format)) as Effect.Effect<Outcome.Final, RunError, R>
    }
    if (Object.hasOwn(chain.toolkit.tools, output.name)) {
      const reason = new InvalidInput({
        field: "output.name",
        rule: "must not be the name of one of the chain's tools: give the output another name",
        value: output.name
      })
      return Effect.fail(new RunError({ reason, chain }))
    }
    const tool = finalTool(output)
    const handlers = Toolkit.make(tool).toLayer(
      Object.fromEntries([[output.name, finalHandler(output, attempts)]]) as never
    )
    const withTool = chain.copy({ toolkit: Toolkit.merge(chain.toolkit, Toolkit.make(tool)) })
    const asked = attempt(chain, withTool, output, attempts, runOnce, true, limits)
    return Effect.provide(asked, handlers) as Effect.Effect<Outcome.Final, RunError, R>
  })
}

/** One run and the judgement of its answer; a re-ask runs again with the decode error added. */
const attempt = <R>(
  original: Chain,
  current: Chain,
  output: StructuredOutput<unknown>,
  attempts: Attempts,
  runOnce: RunOnce<R>,
  viaTool: boolean,
  limits: Limits
): Effect.Effect<Outcome.Final, RunError, R> => {
  const restore = (chain: Chain): Chain => chain.toolkit === original.toolkit ? chain : chain.copy({ toolkit: original.toolkit })
  return runOnce(current).pipe(
    Effect.mapError((error) => new RunError({ reason: error.reason, chain: restore(error.chain) })),
    Effect.flatMap((outcome): Effect.Effect<Outcome.Final, RunError, R> => {
      if (outcome._tag === "Pause") return Effect.succeed(new Outcome.Pause(restore(outcome.chain), outcome.reason))
      const called = viaTool && outcome.reason === "return-behavior"
        ? outcome.extra.find((result) => result.name === output.name && !result.isFailure)
        : undefined
      const raw = called === undefined ? text(outcome.chain) : JSON.stringify(called.result) ?? "null"
      const decoded = called === undefined ? decodeText(output.schema, raw, (json) => unwrap(output, json), limits) : decodeValue(output.schema, unwrap(output, called.result))
      return Effect.matchEffect(decoded, {
        onSuccess: (value) => Effect.succeed(new Outcome.Ok(restore(outcome.chain), outcome.reason, outcome.extra, value) as Outcome.AnyOk),
        onFailure: (error) => {
          // A tool answer was counted by its handler; a text answer is counted here.
          if (called === undefined) attempts.failed++
          const failed = Math.max(attempts.failed, 1)
          if (called !== undefined || failed > output.retries) {
            const reason = new OutputInvalid({ raw, error: bounded(error), attempts: failed })
            return Effect.fail(new RunError({ reason, chain: restore(outcome.chain) }))
          }
          return attempt(original, addUser(reAsk(output, viaTool, error))(outcome.chain), output, attempts, runOnce, viaTool, limits)
        }
      })
    })
  )
}

/** What the model is told after an answer that did not decode. */
const reAsk = (output: StructuredOutput<unknown>, viaTool: boolean, error: string): string =>
  viaTool
    ? `Give your final answer by calling \`${output.name}\` with the answer as its arguments ` +
      `(your text answer did not decode: ${bounded(error)}).`
    : `Your answer did not match the required JSON Schema: ${bounded(error)}. Answer again with only the corrected JSON.`

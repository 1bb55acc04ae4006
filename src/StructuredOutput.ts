/**
 * A run that ends in a typed value: pass `output` to `Chain.run` (a Schema,
 * or one made here with options) and the `Ok` outcome carries `output`, the
 * decoded answer.
 *
 * How the model is asked for it (`strategy`):
 * - `"tool"`: a final-answer tool (`final_answer`) whose arguments are the
 *   answer is added to the run's tools. Arguments that do not decode are
 *   fed back to the model as a failed call with the decode error, so it can
 *   correct them. It works with every model that calls tools.
 * - `"native"`: every request carries the answer's JSON Schema as
 *   `responseFormat`, which a provider with a JSON mode honours (OpenAI's
 *   structured outputs through `loopwork/ai-sdk`); the final text is decoded.
 * - `"auto"` (the default): `"native"` when the `ChatModel` says it supports
 *   it (`info.structuredOutputs`), else `"tool"`.
 *
 * Either way, an answer that does not decode (also a text answer under the
 * tool strategy: its JSON is tried first) is re-asked with the decode error,
 * at most `retries` times (default 2); after that the run fails with
 * `LoopError.OutputInvalid`, which carries the raw answer and the error, and
 * the `RunError` carries the chain. A Schema whose answer is not an object
 * is asked for as `{ "value": … }` (providers want an object) and unwrapped.
 *
 * `strict: true` sends the JSON Schema in OpenAI's strict form (every
 * property required, no others allowed); a Schema without that form (an
 * optional key, a record) is refused before any model call.
 *
 * @since 0.3.0
 */
import { type JsonSchema, Result, Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import type * as AnyTool from "effect/ai/Tool"
import { InvalidInput } from "./LoopError.ts"
import type { AnyOk, Pause } from "./Outcome.ts"
import { NotStrict, strictJsonSchema as strictForm } from "./internal/structured/strict.ts"

/**
 * How the model is asked for the answer.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "loopwork"
 *
 * const strategy: StructuredOutput.Strategy = "tool"
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export type Strategy = "auto" | "tool" | "native"

/**
 * Options of {@link make}.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "loopwork"
 *
 * const options: StructuredOutput.Options = { strategy: "native", retries: 1, strict: true }
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** The final-answer tool's name, and the response format's (default `"final_answer"`). */
  readonly name?: string | undefined
  /** What the model is told the answer is. */
  readonly description?: string | undefined
  readonly strategy?: Strategy | undefined
  /** Re-asks after an answer that does not decode (default 2). */
  readonly retries?: number | undefined
  /** Send the JSON Schema in OpenAI's strict form (default false). */
  readonly strict?: boolean | undefined
}

/**
 * The defaults of {@link Options}.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "loopwork"
 *
 * StructuredOutput.defaults.retries // 2
 * ```
 *
 * @category constants
 * @since 0.3.0
 */
export const defaults = {
  name: "final_answer",
  description: "Call this once you have the final answer; its arguments are the answer.",
  strategy: "auto" as Strategy,
  retries: 2,
  strict: false
} as const

const TypeId = "~loopwork/StructuredOutput" as const

/**
 * What a run's answer must be: the Schema, how the model is asked, and the
 * JSON Schema it is shown.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { StructuredOutput } from "loopwork"
 *
 * const output: StructuredOutput.StructuredOutput<{ readonly name: string }> = StructuredOutput.make(
 *   Schema.Struct({ name: Schema.String })
 * )
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export interface StructuredOutput<A> {
  readonly [TypeId]: typeof TypeId
  readonly schema: Schema.Codec<A, unknown>
  readonly name: string
  readonly description: string
  readonly strategy: Strategy
  readonly retries: number
  /** The JSON Schema the model is shown: the answer's, or `{ value }` around it when the answer is not an object. */
  readonly jsonSchema: JsonSchema.JsonSchema
  /** Whether the answer is asked for as `{ "value": … }`. */
  readonly wrapped: boolean
  /** Whether `jsonSchema` is in OpenAI's strict form (the provider is told to enforce it only then). */
  readonly strict: boolean
  /** What is wrong with the options, reported by `Chain.run` before any model call. */
  readonly problem: InvalidInput | undefined
}

/**
 * A Schema usable as an output: decoding needs no services.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import type { StructuredOutput } from "loopwork"
 *
 * const Person: StructuredOutput.OutputSchema = Schema.Struct({ name: Schema.String })
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export type OutputSchema = Schema.Top & { readonly DecodingServices: never }

/**
 * A run's `output` option: a Schema, or a {@link StructuredOutput} with options.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import type { StructuredOutput } from "loopwork"
 *
 * const output: StructuredOutput.Spec = Schema.Array(Schema.String)
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export type Spec = OutputSchema | StructuredOutput<unknown>

/**
 * The value type of a {@link Spec}.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import type { StructuredOutput } from "loopwork"
 *
 * type Names = StructuredOutput.ValueOf<Schema.$Array<Schema.String>> // ReadonlyArray<string>
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export type ValueOf<S> = S extends StructuredOutput<infer A> ? A : S extends OutputSchema ? S["Type"] : never

/**
 * What `Chain.run` with `output` succeeds with: `Ok` carrying the decoded
 * `output`, or `Pause` (resume with the same `output` to get it).
 *
 * @example
 * ```ts
 * import type { StructuredOutput } from "loopwork"
 *
 * const name = (final: StructuredOutput.Final<{ readonly name: string }>) => final._tag === "Ok" ? final.output.name : undefined
 * ```
 *
 * @category models
 * @since 0.3.0
 */
export type Final<A, T extends Record<string, AnyTool.Any> = {}> = (AnyOk<T> & { readonly output: A }) | Pause<T>

const namePattern = /^[a-zA-Z0-9_-]{1,64}$/

const invalid = (field: string, rule: string, value: unknown) => new InvalidInput({ field: `output.${field}`, rule, value })

/** The first problem of the options (they may come from JSON or JavaScript). */
const optionsProblem = (options: Options): InvalidInput | undefined => {
  const { description, name, retries, strategy, strict } = options
  if (name !== undefined && (typeof name !== "string" || !namePattern.test(name))) {
    return invalid("name", "must be 1 to 64 letters, digits, '_' or '-' (a tool name every provider accepts)", name)
  }
  if (description !== undefined && (typeof description !== "string" || description.length > 1024)) {
    return invalid("description", "must be a string of at most 1,024 characters", description)
  }
  if (strategy !== undefined && strategy !== "auto" && strategy !== "tool" && strategy !== "native") {
    return invalid("strategy", 'must be "auto", "tool" or "native"', strategy)
  }
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= 100)) {
    return invalid("retries", "must be a whole number from 0 to 100", retries)
  }
  if (strict !== undefined && typeof strict !== "boolean") return invalid("strict", "must be true or false", strict)
  return undefined
}

/** The JSON Schema the model is shown, and whether the answer is wrapped as `{ value }`. */
const shown = (schema: Schema.Top, strict: boolean): { readonly jsonSchema: JsonSchema.JsonSchema; readonly wrapped: boolean } | InvalidInput => {
  let own: JsonSchema.JsonSchema
  try {
    own = Tool.getJsonSchemaFromSchema(schema)
  } catch (error) {
    return invalid("schema", `must have a JSON Schema form to show the model (${error instanceof Error ? error.message : String(error)})`, "(a Schema)")
  }
  const wrapped = own.type !== "object"
  const whole: JsonSchema.JsonSchema = wrapped
    ? { type: "object", properties: { value: own }, required: ["value"], additionalProperties: false }
    : own
  if (!strict) return { jsonSchema: whole, wrapped }
  const strictSchema = strictForm(whole)
  return strictSchema instanceof NotStrict
    ? invalid("strict", `needs a Schema with a strict form: ${strictSchema.reason}`, true)
    : { jsonSchema: strictSchema, wrapped }
}

/**
 * A run's output: `schema` and how the model is asked for it. Never throws:
 * bad options or a Schema without a JSON Schema form are kept as `problem`,
 * which `Chain.run` reports as an `InvalidInput` before any model call.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Chain, Mode, StructuredOutput } from "loopwork"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const Verdict = StructuredOutput.make(Schema.Struct({ approved: Schema.Boolean, reason: Schema.String }), { retries: 1 })
 * const model = ScriptedModel.make([{ toolCalls: [{ name: "final_answer", params: { approved: true, reason: "fine" } }] }])
 * const program = Chain.run(Chain.make({ user: "Review the refund" }), { mode: Mode.whileNeedsResponse, output: Verdict }).pipe(
 *   Effect.map((final) => final._tag === "Ok" ? final.output.approved : undefined),
 *   Effect.provide(model.layer)
 * )
 * // Effect.runPromise(program) resolves to true
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = <S extends OutputSchema>(schema: S, options: Options = {}): StructuredOutput<S["Type"]> => {
  const base = {
    [TypeId]: TypeId,
    schema: schema as unknown as Schema.Codec<S["Type"], unknown>,
    name: defaults.name as string,
    description: defaults.description as string,
    strategy: defaults.strategy,
    retries: defaults.retries as number,
    jsonSchema: {},
    wrapped: false,
    strict: false
  }
  const problem = !Schema.isSchema(schema)
    ? invalid("schema", "must be a Schema (for example Schema.Struct({ ... }))", schema)
    : typeof options !== "object" || options === null
    ? invalid("options", "must be an object", options)
    : optionsProblem(options)
  if (problem !== undefined) return { ...base, problem }
  const form = shown(schema, options.strict ?? defaults.strict)
  if (form instanceof InvalidInput) return { ...base, problem: form }
  return {
    ...base,
    ...form,
    name: options.name ?? defaults.name,
    description: options.description ?? defaults.description,
    strategy: options.strategy ?? defaults.strategy,
    retries: options.retries ?? defaults.retries,
    strict: options.strict ?? defaults.strict,
    problem: undefined
  }
}

/**
 * Whether `u` was made by {@link make}.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { StructuredOutput } from "loopwork"
 *
 * StructuredOutput.isStructuredOutput(StructuredOutput.make(Schema.String)) // true
 * ```
 *
 * @category guards
 * @since 0.3.0
 */
export const isStructuredOutput = (u: unknown): u is StructuredOutput<unknown> =>
  typeof u === "object" && u !== null && Object.hasOwn(u, TypeId) &&
  ((u as { readonly problem?: unknown }).problem instanceof InvalidInput || hasOutputFields(u as Partial<Record<keyof StructuredOutput<unknown>, unknown>>))

/**
 * Whether the fields the loop reads have their types (or `make` found a
 * problem, which the run reports): a value parsed from JSON that carries
 * the marker key is no `StructuredOutput` (its `schema` cannot be a Schema,
 * nor its `problem` an `InvalidInput`), and is refused like any other bad
 * `output`.
 */
const hasOutputFields = (u: Partial<Record<keyof StructuredOutput<unknown>, unknown>>): boolean =>
  Schema.isSchema(u.schema) &&
  typeof u.name === "string" &&
  typeof u.description === "string" &&
  typeof u.strategy === "string" &&
  typeof u.retries === "number" &&
  typeof u.jsonSchema === "object" && u.jsonSchema !== null &&
  typeof u.wrapped === "boolean" &&
  typeof u.strict === "boolean"

/**
 * `jsonSchema` in OpenAI's strict form — every object's properties all
 * required and `additionalProperties: false`, at every depth — or an
 * `InvalidInput` saying why it has none (an optional key: use
 * `Schema.NullOr`; a record with free keys). For tool parameters too.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { StructuredOutput } from "loopwork"
 *
 * const strict = StructuredOutput.strictJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"] })
 * Result.isSuccess(strict) // true: { ..., required: ["q"], additionalProperties: false }
 * ```
 *
 * @category utils
 * @since 0.3.0
 */
export const strictJsonSchema = (jsonSchema: JsonSchema.JsonSchema): Result.Result<JsonSchema.JsonSchema, InvalidInput> => {
  const strict = strictForm(jsonSchema)
  return strict instanceof NotStrict
    ? Result.fail(new InvalidInput({ field: "jsonSchema", rule: `must have a strict form: ${strict.reason}`, value: "(a JSON Schema)" }))
    : Result.succeed(strict)
}

/**
 * Config checking for ensembles: each config (Agent, Task, Ensemble options,
 * run inputs, constraints) is one `Schema.Struct` whose fields are *rules*.
 * A rule accepts what its check accepts and otherwise fails with a message
 * written for the user ("Agent role must not be blank"). Decoding stops at
 * the first broken rule, in field order, and becomes a `ValidationError`.
 *
 * These configs come from JSON, YAML and JavaScript as well as TypeScript, so
 * every rule starts from `unknown`.
 *
 * @internal
 */
import { thrownMessage } from "../../internal/errorText.ts"
import { redactedShort, redactSecrets } from "../../internal/redact.ts"
import { Cause, Effect, Result, Schema, SchemaIssue } from "effect"
import { ValidationError } from "../EnsembleError.ts"
import { accepts, asField, passing } from "./ruleStruct.ts"

/** @internal a check: `undefined` when the value is accepted, else what is wrong */
export type Check = (u: unknown) => string | undefined

/**
 * A schema of `T` accepting exactly what `check` accepts; anything else fails
 * with the check's message. (Decoding a config Struct of rules runs the
 * checks directly when they all pass: `ruleStruct.ts`.)
 *
 * @internal
 */
export const rule = <T>(check: Check): Schema.declareConstructor<T, T, readonly []> =>
  Schema.declareConstructor<T>()([], () => (u) => {
    const message = check(u)
    return message === undefined ? Effect.succeed(u as T) : Effect.fail(new SchemaIssue.InvalidValue({ message }))
  })

/** @internal a rule for a key that must be present: absent, it reports what `undefined` would */
export const required = <T>(check: Check) =>
  asField(rule<T>(check).annotateKey({ messageMissingKey: check(undefined) }), check, false)

/** @internal a rule for a key that may be absent or `undefined` */
export const optional = <T>(check: Check) => asField(Schema.optional(rule<T>(check)), check, true)

/** @internal a value as the messages show it: strings quoted, functions and symbols named */
export const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(redactedShort(u, 60))
  if (typeof u === "number" || typeof u === "bigint" || typeof u === "boolean" || u === undefined || u === null) {
    return String(u)
  }
  if (typeof u === "function") return "a function"
  if (typeof u === "symbol") return "a symbol"
  try {
    if (Array.isArray(u)) return `an array of ${u.length}`
  } catch {
    return "an object that cannot be read"
  }
  return "an object"
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Decodes `input` with a config schema, when the effect runs (so a builder
 * never throws where it is called); the first broken rule becomes a
 * `ValidationError` with its message.
 *
 * @internal
 */
export const decode = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown
): Effect.Effect<S["Type"], ValidationError> => Effect.suspend(() => Effect.fromResult(decodeNow(schema, input)))

/**
 * @internal {@link decode}, at once: for a caller that is already running
 * (such as `Ensemble.run`); `label` names what was given in the message of
 * a value that cannot be read
 */
export const decodeNow = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  label = "the value given"
): Result.Result<S["Type"], ValidationError> => {
  const passed = passing(schema, input)
  if (passed !== undefined) return Result.succeed(passed as S["Type"])
  const decoded = decodedOrWhy(schema, input)
  return typeof decoded === "string"
    ? Result.fail(new ValidationError({ message: redactSecrets(decoded) }))
    : "unreadable" in decoded
    ? Result.fail(new ValidationError({ message: redactSecrets(`${label}: ${decoded.unreadable}`) }))
    : Result.succeed(decoded.value)
}

/**
 * @internal the message of the first broken rule, or `undefined` when
 * `input` passes; `label`, if given, names what cannot be read
 */
export const problem = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown,
  label?: string
): string | undefined => {
  if (accepts(schema, input)) return undefined
  const decoded = decodedOrWhy(schema, input)
  if (typeof decoded === "string") return decoded
  if (!("unreadable" in decoded)) return undefined
  return label === undefined ? decoded.unreadable : `${label}: ${decoded.unreadable}`
}

/**
 * What Schema decodes `input` to, or the message of its first broken rule,
 * or (`unreadable`) why it could not be read: a getter that throws or a
 * Proxy from JavaScript makes Schema throw, and that is said, never thrown.
 */
const decodedOrWhy = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown
): { readonly value: S["Type"] } | { readonly unreadable: string } | string => {
  try {
    const result = Schema.decodeUnknownResult(schema)(input)
    return Result.isSuccess(result) ? { value: result.success } : firstMessage(result.failure)
  } catch (error) {
    return { unreadable: unreadable(error) }
  }
}

/**
 * @internal the message for a value a read of which threw: what it threw
 * (Schema wraps it in an error of its own, whose cause holds it)
 */
export const unreadable = (error: unknown): string => {
  const cause: unknown = error instanceof Error ? error.cause : undefined
  const thrown = Cause.isCause(cause) ? Cause.squash(cause) : error
  return `one of its values cannot be read (${thrownMessage(thrown)}); pass plain data, without getters that throw or Proxies`
}

const firstMessage = (error: Schema.SchemaError): string => formatter(error.issue).issues[0]?.message ?? error.message

/**
 * `decode` for a maker's options (`Agent.make`, `Task.make`, …): a key the
 * options have no field for is refused first (a misspelt `toolkit` would
 * otherwise be dropped without a word), except `_tag`, which a value spread
 * into its maker brings along.
 *
 * @internal
 */
export const decodeOptions = <S extends Schema.ConstraintDecoder<unknown> & { readonly fields: Schema.Struct.Fields }>(
  maker: string,
  schema: S,
  input: unknown
): Effect.Effect<S["Type"], ValidationError> =>
  Effect.suspend(() => {
    const unknown = unknownOption(maker, schema.fields, input)
    return unknown === undefined ? Effect.fromResult(decodeNow(schema, input, `${maker} options`)) : Effect.fail(unknown)
  })

/** @internal the first key of `input` that `fields` has no field for (`_tag` aside), as the error saying so */
export const unknownOption = (maker: string, fields: Schema.Struct.Fields, input: unknown): ValidationError | undefined => {
  let keys: ReadonlyArray<string>
  try {
    if (!isRecord(input)) return undefined
    keys = Object.keys(input)
  } catch (error) {
    return new ValidationError({ message: redactSecrets(`${maker} options: ${unreadable(error)}`) })
  }
  for (const key of keys) {
    if (key === "_tag" || Object.hasOwn(fields, key)) continue
    return new ValidationError({
      message: `${maker} has no option ${show(key)}; its options are ${Object.keys(fields).join(", ")}`
    })
  }
  return undefined
}

// -----------------------------------------------------------------------------
// Checks used by several configs
// -----------------------------------------------------------------------------

/** @internal a string with something besides whitespace */
export const isNonBlank = (u: unknown): u is string => typeof u === "string" && u.trim().length > 0

/** @internal a whole number from `min` up to `Number.MAX_SAFE_INTEGER` */
export const isCount = (u: unknown, min: number): u is number =>
  typeof u === "number" && Number.isSafeInteger(u) && u >= min

/**
 * A check for a count: `label must be > 0, got: N` (or `>= 0` for `min` 0),
 * the specification's wording, with a clearer message for a value that is
 * not a number at all or is too large to count with.
 *
 * @internal
 */
export const count = (label: string, min: 0 | 1): Check => (u) => {
  if (isCount(u, min)) return undefined
  if (typeof u !== "number") return `${label} must be a number, got: ${show(u)}`
  if (u > Number.MAX_SAFE_INTEGER && Number.isFinite(u)) {
    return `${label} must be at most ${Number.MAX_SAFE_INTEGER}, got: ${u}`
  }
  return `${label} must be ${min === 1 ? "> 0" : ">= 0"}, got: ${u}`
}

/** @internal `undefined` or a `count` */
export const optionalCount = (label: string, min: 0 | 1): Check => {
  const check = count(label, min)
  return (u) => (u === undefined ? undefined : check(u))
}

/** @internal a string (blank allowed) */
export const text = (label: string): Check => (u) =>
  typeof u === "string" ? undefined : `${label} must be a string, got: ${show(u)}`

/** @internal true or false */
export const flag = (label: string): Check => (u) =>
  typeof u === "boolean" ? undefined : `${label} must be true or false, got: ${show(u)}`

/** @internal one of the given strings */
export const oneOf = (label: string, values: ReadonlyArray<string>): Check => (u) =>
  typeof u === "string" && values.includes(u) ? undefined : `${label} must be ${values.join(", ")}, got: ${show(u)}`

/**
 * An array whose every entry passes `entry`; the message names the first
 * entry that does not, by index.
 *
 * @internal
 */
export const list = (label: string, what: string, entry: Check): Check => (u) => {
  if (!Array.isArray(u)) return `${label} must be an array of ${what}, got: ${show(u)}`
  for (let index = 0; index < u.length; index++) {
    const wrong = entry(u[index])
    if (wrong !== undefined) return `${label} entry at index ${index} ${wrong}`
  }
  return undefined
}

/**
 * The first of `fields` a value does not have. A value made by hand (not by
 * `Agent.make` / `Task.make`) has no defaults, so options that may be left
 * out are required of it.
 *
 * @internal
 */
export const missingField = (u: object, fields: ReadonlyArray<string>): string | undefined =>
  fields.find((field) => (u as Readonly<Record<string, unknown>>)[field] === undefined)

/** @internal a plain record (an object, not an array), for its own string keys */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Text inputs: a record of strings (template variables, by name). Only own
 * keys count, so a name like `constructor` or `__proto__` is an input like
 * any other.
 *
 * @internal
 */
export const inputs = (label: string): Check => (u) => {
  try {
    return inputsProblem(label, u)
  } catch {
    // A getter or a Proxy from JavaScript: no value to check, and no defect either.
    return `${label} could not be read: one of its properties threw when it was read; give plain strings`
  }
}

/**
 * @internal what is wrong with `u` as text inputs (see {@link inputs}), or
 * `undefined`; with `into`, each input is copied there as it is read (once,
 * `__proto__` too, as an own key). A read that throws is the caller's.
 */
export const inputsProblem = (label: string, u: unknown, into?: Record<string, string>): string | undefined => {
  if (u === undefined) return undefined
  if (!isRecord(u)) return `${label} must be an object of strings by variable name, got: ${show(u)}`
  for (const [name, value] of Object.entries(u)) {
    if (typeof value !== "string") return `${label} value for '${name}' must be a string, got: ${show(value)}`
    if (into !== undefined) Object.defineProperty(into, name, { value, enumerable: true, writable: true, configurable: true })
  }
  return undefined
}

/**
 * Reading a model's answer as a value of a Schema: the JSON in a text
 * (the whole text, a fenced block, or the first balanced object or array
 * that parses), then the Schema's decoding. Shared by a run's `output`
 * (`StructuredOutput`) and an ensemble task's `outputType`.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { defaultLimits } from "../arrival.ts"
import { messageOf } from "../describe.ts"
import * as JsonBounds from "../jsonBounds.ts"
import { redactSecrets } from "../redact.ts"

/** The end of the balanced `{…}` or `[…]` starting at `start` (strings respected), or -1. */
const balancedEnd = (text: string, start: number): number => {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
      continue
    }
    if (c === "\"") inString = true
    else if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") {
      depth--
      if (depth === 0) return i
    }
  }
  return -1
}

/**
 * At most this many openings are scanned for a balanced candidate: each scan
 * may read to the end of the text, and a hostile answer (`[[[[…`) would
 * otherwise cost the square of its length.
 */
const maxOpenings = 64

/**
 * @internal the JSON in an answer: the whole text, else a fenced block, else
 * the first balanced object or array in the prose that parses; throws the
 * first parse error when none does
 */
export const parseJson = (text: string): unknown => {
  const trimmed = text.trim()
  const candidates: Array<string> = [trimmed]
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(trimmed)
  if (fenced !== null) candidates.push(fenced[1].trim())
  let openings = 0
  for (let start = 0; start < trimmed.length && openings < maxOpenings; start++) {
    if (trimmed[start] !== "{" && trimmed[start] !== "[") continue
    openings++
    const end = balancedEnd(trimmed, start)
    if (end >= 0) candidates.push(trimmed.slice(start, end + 1))
  }
  let first: unknown
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate)
    } catch (error) {
      first ??= error
    }
  }
  throw first
}

/** The message of what a parse threw (a `RangeError` for JSON nested too deeply for the stack, …). */
const parseMessage = (error: unknown): string => error instanceof Error ? error.message : String(error)

/**
 * @internal `text` decoded by `schema`: its JSON (passed through `unwrap`)
 * when it has some and it is within `limits` (for a model's text, the run's
 * tool-argument limits: an answer given as text is held to what the same
 * answer given as a final-answer tool's arguments would be; for tool
 * results that end a run, the limits they were stored under), else the
 * text itself (a string Schema); fails with the decode error's message
 */
export const decodeText = (
  schema: Schema.Codec<unknown, unknown>,
  text: string,
  unwrap: (json: unknown) => unknown = (json) => json,
  limits: JsonBounds.Limits = defaultLimits
): Effect.Effect<unknown, string> => {
  let json: unknown
  try {
    json = parseJson(text)
  } catch (error) {
    // A plain answer may be the value itself (a string schema), held to the same limits.
    const plain = text.trim()
    const tooLarge = JsonBounds.check(plain, limits)
    if (tooLarge !== undefined) return Effect.fail(`the answer is ${JsonBounds.describe(tooLarge)}`)
    return decodeValue(schema, plain).pipe(
      Effect.mapError((failed) => failed.startsWith(schemaFailed) ? failed : `not valid JSON (${parseMessage(error)})`)
    )
  }
  const value = unwrap(json)
  const problem = JsonBounds.check(value, limits)
  return problem === undefined ? decodeValue(schema, value) : Effect.fail(`the answer is ${JsonBounds.describe(problem)}`)
}

/** Each schema's JSON decoder, made once (`Schema.toCodecJson` builds a new schema). */
const decoders = new WeakMap<Schema.Codec<unknown, unknown>, (value: unknown) => Effect.Effect<unknown, Schema.SchemaError>>()

/**
 * `schema`'s decoder of JSON: through its JSON codec, the form its JSON
 * Schema describes to the model (a `Date` as ISO text, a `BigInt` as
 * digits, an optional key also as `null`).
 */
const jsonDecoder = (schema: Schema.Codec<unknown, unknown>) => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = Schema.decodeUnknownEffect(Schema.toCodecJson(schema))
    decoders.set(schema, decoder)
  }
  return decoder
}

/**
 * @internal `value` (JSON) decoded by `schema`'s JSON codec; fails with the
 * decode error's message, and with what a schema that throws or dies said
 * (credentials redacted): the model's answer, not the run, is what failed
 */
export const decodeValue = (schema: Schema.Codec<unknown, unknown>, value: unknown): Effect.Effect<unknown, string> =>
  Effect.suspend(() => jsonDecoder(schema)(value)).pipe(
    Effect.mapError((error) => error.message),
    Effect.catchDefect((defect) => Effect.fail(`${schemaFailed}${redactSecrets(messageOf(defect))}`))
  )

/** How the failure of a schema that throws or dies on an answer begins. */
const schemaFailed = "the output's schema failed on this answer: "

/**
 * The output Schemas the structured-output tests ask for, with the JSON
 * Schemas they are expected to go out as (test/ensemble/StructuredOutput*,
 * test/ai-sdk/structuredOutput).
 */
import { Effect, Schema } from "effect"

/** The encoded form differs from the decoded one: score is a string in JSON, a number once decoded. */
export const Rating = Schema.Struct({ company: Schema.String, score: Schema.NumberFromString })

/** Rating's JSON Schema (its encoded side), as a prompt shows it; `strict`: in OpenAI's strict form. */
export const ratingJsonSchema = (strict: boolean) => ({
  type: "object",
  properties: { company: { type: "string" }, score: { type: "string" } },
  required: ["company", "score"],
  additionalProperties: !strict
})

/** The schema error a Rating answer gives, computed with the Schema itself. */
export const ratingDecodeError = (json: unknown): Effect.Effect<string> =>
  Schema.decodeUnknownEffect(Rating)(json).pipe(
    Effect.flip,
    Effect.map((error) => error.message),
    Effect.orElseSucceed(() => "decoded unexpectedly")
  )

export const Verdict = Schema.Struct({ approved: Schema.Boolean, reason: Schema.String })

/** Verdict's JSON Schema in OpenAI's strict form. */
export const strictVerdictSchema = {
  type: "object",
  properties: { approved: { type: "boolean" }, reason: { type: "string" } },
  required: ["approved", "reason"],
  additionalProperties: false
}

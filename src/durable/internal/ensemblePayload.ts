/**
 * What a durable ensemble's `execute` is given, checked as `Ensemble.run`
 * checks its inputs: an object with a string `id` and `inputs` of strings
 * by variable name. From JavaScript anything may come; what is wrong is a
 * `ValidationError`, and what passes is copied (its entries read once).
 *
 * @internal
 */
import { Result } from "effect"
import { ValidationError } from "../../ensemble/EnsembleError.ts"
import { inputsProblem, isRecord, show } from "../../ensemble/internal/rules.ts"
import { thrownMessage } from "../../internal/errorText.ts"
import { redactSecrets } from "../../internal/redact.ts"

const label = "DurableEnsemble execution"

const invalid = (message: string) => Result.fail(new ValidationError({ message: redactSecrets(message) }))

/** The copy of `given` if it is an object of strings by name (or absent: none), else what is wrong. */
const inputsOf = (given: unknown): Record<string, string> | string => {
  const copy: Record<string, string> = {}
  return inputsProblem(`${label} inputs`, given, copy) ?? copy
}

/** @internal the payload to run, `{ id, inputs }` copied, or the `ValidationError` of what was given */
export const payloadOf = (fields: unknown): Result.Result<{ readonly id: string; readonly inputs: Record<string, string> }, ValidationError> => {
  try {
    if (!isRecord(fields)) return invalid(`${label} must be given { id, inputs }, got: ${show(fields)}`)
    const id = fields.id
    if (typeof id !== "string") return invalid(`${label} id must be a string (the same id is the same execution), got: ${show(id)}`)
    const inputs = inputsOf(fields.inputs)
    return typeof inputs === "string" ? invalid(inputs) : Result.succeed({ id, inputs })
  } catch (error) {
    // A getter or a Proxy from JavaScript.
    return invalid(`${label} was given a value that cannot be read (${thrownMessage(error)}); give plain strings`)
  }
}

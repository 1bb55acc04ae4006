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
import { isRecord, show } from "../../ensemble/internal/rules.ts"
import { thrownMessage } from "../../internal/errorText.ts"
import { redactSecrets } from "../../internal/redact.ts"

const label = "DurableEnsemble execution"

const invalid = (message: string) => Result.fail(new ValidationError({ message: redactSecrets(message) }))

/** The copy of `given` if it is an object of strings by name (or absent: none), else what is wrong. */
const inputsOf = (given: unknown): Record<string, string> | string => {
  if (given === undefined) return {}
  if (!isRecord(given)) return `${label} inputs must be an object of strings by variable name, got: ${show(given)}`
  // Own data keys of the copy, "__proto__" too (defined, not set).
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(given)) {
    if (typeof value !== "string") return `${label} inputs value for '${name}' must be a string, got: ${show(value)}`
    Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true })
  }
  return copy
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

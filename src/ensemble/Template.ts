/**
 * Templates: `{name}` placeholders in a task's description and expected
 * output, filled from `run(inputs)`. Names are letters, digits and `_`;
 * `{{name}}` is a literal `{name}`. Every missing name is reported at once,
 * before any model call. Extra inputs are ignored. Inputs are read as a
 * `Map` (or a record's own keys only): a name like `constructor`,
 * `toString` or `__proto__` is a variable like any other, never a property
 * inherited from `Object.prototype`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { PromptTemplateError, ValidationError } from "./EnsembleError.ts"
import * as Engine from "./internal/template.ts"
import { thrownMessage } from "../internal/errorText.ts"

/** What is wrong with a template from JavaScript that is not a string. */
const notText = (template: unknown): ValidationError =>
  new ValidationError({ message: `A template must be a string (got ${template === null ? "null" : typeof template})` })

/**
 * The variable names a template uses, in order of first use. A template
 * that is not a string (from JavaScript) throws a `ValidationError`.
 *
 * @example
 * ```ts
 * import { Template } from "loopwork/ensemble"
 *
 * Template.variables("Research {topic} for {audience}; keep {{braces}}") // ["topic", "audience"]
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const variables = (template: string): ReadonlyArray<string> => {
  if (typeof template !== "string") throw notText(template)
  return [...Engine.variables(template)]
}

/** The inputs as a `Map` of their own string keys; `undefined` for inputs that are neither a record nor a `Map`, or cannot be read. */
const asMap = (inputs: Readonly<Record<string, string>> | ReadonlyMap<string, string>): ReadonlyMap<string, string> | undefined => {
  if (inputs instanceof Map) return inputs
  if (typeof inputs !== "object" || inputs === null || Array.isArray(inputs)) return undefined
  try {
    return new Map(Object.entries(inputs as Readonly<Record<string, string>>))
  } catch {
    // A getter that throws, a revoked proxy: not inputs that can be read.
    return undefined
  }
}

/** `inputs` as a Map of strings, or why they are not (from JavaScript, a Proxy whose reads throw too). */
const readInputs = (inputs: unknown): ReadonlyMap<string, string> | ValidationError => {
  try {
    const values = asMap(inputs as Readonly<Record<string, string>>)
    if (values === undefined) return new ValidationError({ message: "Template inputs must be a record or a Map of strings" })
    // Copied as read: a Map from JavaScript may be a Proxy that answers differently later.
    const read = new Map<string, string>()
    for (const [key, value] of values) {
      if (typeof value !== "string") {
        return new ValidationError({ message: `Template inputs must be strings (got ${value === null ? "null" : typeof value})` })
      }
      read.set(key, value)
    }
    return read
  } catch (error) {
    return new ValidationError({ message: `Template inputs cannot be read (${thrownMessage(error)})` })
  }
}

/**
 * Fills a template from a record or a `Map` of inputs; fails with
 * `PromptTemplateError` listing every missing variable, and with a
 * `ValidationError` for a template or inputs of the wrong type (from
 * JavaScript).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Template } from "loopwork/ensemble"
 *
 * Effect.runSync(Template.resolve("Research {topic}", { topic: "Effect" })) // "Research Effect"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const resolve = (
  template: string,
  inputs: Readonly<Record<string, string>> | ReadonlyMap<string, string>
): Effect.Effect<string, PromptTemplateError | ValidationError> => {
  if (typeof template !== "string") return Effect.fail(notText(template))
  const values = readInputs(inputs)
  if (values instanceof ValidationError) return Effect.fail(values)
  const missing = variables(template).filter((name) => !values.has(name))
  if (missing.length > 0) return Effect.fail(new PromptTemplateError({ missing, template }))
  return Effect.succeed(Engine.fill(template, values))
}

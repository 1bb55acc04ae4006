/**
 * Templates: `{name}` placeholders in a task's description and expected
 * output, filled from `run(inputs)`. Names are letters, digits and `_`;
 * `{{name}}` is a literal `{name}`. Every missing name is reported at once,
 * before any model call. Extra inputs are ignored.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { PromptTemplateError } from "./EnsembleError.ts"

const placeholder = /\{\{(\w+)\}\}|\{(\w+)\}/g

/**
 * The variable names a template uses, in order of first use.
 *
 * @example
 * ```ts
 * import { Template } from "loopwork/ensemble"
 *
 * Template.variables("Research {topic} for {audience}; keep {{braces}}") // ["topic", "audience"]
 * ```
 *
 * @since 0.1.0
 */
export const variables = (template: string): ReadonlyArray<string> => {
  const names: Array<string> = []
  for (const match of template.matchAll(placeholder)) {
    const name = match[2]
    if (name !== undefined && !names.includes(name)) names.push(name)
  }
  return names
}

/**
 * Fills a template; fails with `PromptTemplateError` listing every missing
 * variable.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Template } from "loopwork/ensemble"
 *
 * Effect.runSync(Template.resolve("Research {topic}", { topic: "Effect" })) // "Research Effect"
 * ```
 *
 * @since 0.1.0
 */
export const resolve = (
  template: string,
  inputs: Readonly<Record<string, string>>
): Effect.Effect<string, PromptTemplateError> => {
  const missing = variables(template).filter((name) => !Object.hasOwn(inputs, name))
  if (missing.length > 0) return Effect.fail(new PromptTemplateError({ missing, template }))
  return Effect.succeed(
    template.replace(placeholder, (_, escaped: string | undefined, name: string | undefined) =>
      escaped !== undefined ? `{${escaped}}` : inputs[name!]
    )
  )
}

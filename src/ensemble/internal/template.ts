/**
 * The template engine behind `Template` (public) and `Ensemble.run`, which
 * fills every task's templates on each run: `{name}` placeholders (letters,
 * digits, `_`) and `{{name}}` escapes. A template without a brace has
 * neither, and is read no further.
 *
 * @internal
 */

const placeholder = /\{\{(\w+)\}\}|\{(\w+)\}/g

const none: ReadonlyArray<string> = Object.freeze([])

/** @internal the variable names a template uses, in order of first use */
export const variables = (template: string): ReadonlyArray<string> => {
  if (!template.includes("{")) return none
  const names: Array<string> = []
  for (const match of template.matchAll(placeholder)) {
    const name = match[2]
    if (name !== undefined && !names.includes(name)) names.push(name)
  }
  return names
}

/** @internal `template` with each variable replaced by its value (`""` for a missing one) and each escape unescaped */
export const fill = (template: string, values: ReadonlyMap<string, string>): string =>
  template.includes("{")
    ? template.replace(placeholder, (_, escaped: string | undefined, name: string | undefined) =>
      escaped !== undefined ? `{${escaped}}` : values.get(name ?? "") ?? "")
    : template

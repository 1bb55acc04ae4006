/**
 * Canonical JSON text: keys sorted at every level (by UTF-16 code units), no
 * whitespace, numbers and strings as `JSON.stringify` writes them, `undefined`
 * fields left out. Two JSON values are equal iff their canonical texts are.
 *
 * @internal
 */

/**
 * The canonical JSON text of `value`. The caller bounds the depth (the
 * recursion follows it).
 *
 * @internal
 */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => item === undefined ? "null" : canonical(item)).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const fields: Array<string> = []
    for (const key of Object.keys(value).sort()) {
      const field = (value as Record<string, unknown>)[key]
      if (field !== undefined) fields.push(`${JSON.stringify(key)}:${canonical(field)}`)
    }
    return `{${fields.join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

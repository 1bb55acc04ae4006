/**
 * Canonical JSON text: keys sorted at every level (by UTF-16 code units), no
 * whitespace, numbers and strings as `JSON.stringify` writes them, `undefined`
 * fields left out. Two JSON values are equal iff their canonical texts are.
 *
 * @internal
 */

/**
 * The canonical JSON text of `value`. The caller bounds the depth (the
 * recursion follows it). `-0` is written as `JSON.stringify` writes it
 * (`0`, for a value about to be stored), or, with `negativeZero: "-0"`, as
 * `-0`: a parsed document holding `-0` was not written by `JSON.stringify`,
 * and must not pass for one that holds `0`.
 *
 * @internal
 */
export const canonical = (value: unknown, negativeZero: "0" | "-0" = "0"): string => {
  // Array.from visits holes too (as undefined): a sparse array is written as JSON.stringify writes it.
  if (Array.isArray(value)) return `[${Array.from(value, (item) => item === undefined ? "null" : canonical(item, negativeZero)).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const fields: Array<string> = []
    for (const key of Object.keys(value).sort()) {
      const field = (value as Record<string, unknown>)[key]
      if (field !== undefined) fields.push(`${JSON.stringify(key)}:${canonical(field, negativeZero)}`)
    }
    return `{${fields.join(",")}}`
  }
  if (negativeZero === "-0" && Object.is(value, -0)) return "-0"
  return JSON.stringify(value) ?? "null"
}

/**
 * Whether `value` holds a `-0` anywhere (which `JSON.stringify` writes as
 * `0`). The caller bounds the depth.
 *
 * @internal
 */
export const holdsNegativeZero = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.some(holdsNegativeZero)
  if (typeof value === "object" && value !== null) return Object.values(value).some(holdsNegativeZero)
  return Object.is(value, -0)
}

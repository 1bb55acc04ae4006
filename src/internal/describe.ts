/**
 * Text for a value the loop did not make (a thrown value, a failure, a
 * defect), for error messages.
 *
 * @internal
 */

/**
 * `String(u)`, or a short description when that throws (`String` of an
 * array nested 100,000 deep overflows the stack; an object's `toString` may
 * throw).
 *
 * @internal
 */
export const safeString = (u: unknown): string => {
  try {
    return String(u)
  } catch {
    return `(a value that cannot be shown: ${Object.prototype.toString.call(u)})`
  }
}

/** An `Error`'s message, or the value as `String` gives it. */
export const messageOf = (u: unknown): string => u instanceof globalThis.Error ? safeString(u.message) : safeString(u)

/** An `Error`'s message, a string as it is, anything else as JSON (or `String` when it is not JSON). */
export const describe = (u: unknown): string => {
  if (u instanceof globalThis.Error) return safeString(u.message)
  if (typeof u === "string") return u
  try {
    return JSON.stringify(u) ?? safeString(u)
  } catch {
    return safeString(u)
  }
}

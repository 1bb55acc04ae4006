/**
 * Text for a value the loop did not make (a thrown value, a failure, a
 * defect), for error messages.
 *
 * @internal
 */

/** An `Error`'s message, or the value as `String` gives it. */
export const messageOf = (u: unknown): string => u instanceof globalThis.Error ? u.message : String(u)

/** An `Error`'s message, a string as it is, anything else as JSON (or `String` when it is not JSON). */
export const describe = (u: unknown): string => {
  if (u instanceof globalThis.Error) return u.message
  if (typeof u === "string") return u
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

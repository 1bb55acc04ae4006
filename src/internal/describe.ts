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
    try {
      return `(a value that cannot be shown: ${Object.prototype.toString.call(u)})`
    } catch {
      // A revoked proxy refuses even that.
      return "(a value that cannot be shown)"
    }
  }
}

/** A property of `u`, or `undefined` when reading it throws (a hostile getter). */
const read = (u: object, key: "name" | "cause" | "message"): unknown => {
  try {
    return (u as Record<typeof key, unknown>)[key]
  } catch {
    return undefined
  }
}

/** @internal whether `u` is an `Error`; `false` when asking throws (a revoked proxy) */
export const isError = (u: unknown): u is Error => {
  try {
    return u instanceof globalThis.Error
  } catch {
    return false
  }
}

/**
 * An `Error`'s message, or the value as `String` gives it. An error with an
 * empty message (effect's `PersistenceError`, say, whose text is in its
 * cause) is shown by its name and its cause's message.
 */
export const messageOf = (u: unknown): string => {
  if (!isError(u)) return safeString(u)
  const message = safeString(read(u, "message"))
  if (message !== "") return message
  const name = safeString(read(u, "name"))
  const cause = read(u, "cause")
  const because = isError(cause) ? safeString(read(cause, "message")) : ""
  return because === "" ? name : `${name}: ${because}`
}

/** An `Error`'s message (as {@link messageOf} gives it), a string as it is, anything else as JSON (or `String` when it is not JSON). */
export const describe = (u: unknown): string => {
  if (isError(u)) return messageOf(u)
  if (typeof u === "string") return u
  try {
    return JSON.stringify(u) ?? safeString(u)
  } catch {
    return safeString(u)
  }
}

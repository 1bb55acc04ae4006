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

/** A property of `u`, or `undefined` when reading it throws (a hostile getter). */
const read = (u: object, key: "name" | "cause" | "message"): unknown => {
  try {
    return (u as Record<typeof key, unknown>)[key]
  } catch {
    return undefined
  }
}

/**
 * An `Error`'s message, or the value as `String` gives it. An error with an
 * empty message (effect's `PersistenceError`, say, whose text is in its
 * cause) is shown by its name and its cause's message.
 */
export const messageOf = (u: unknown): string => {
  if (!(u instanceof globalThis.Error)) return safeString(u)
  const message = safeString(read(u, "message"))
  if (message !== "") return message
  const name = safeString(read(u, "name"))
  const cause = read(u, "cause")
  const because = cause instanceof globalThis.Error ? safeString(read(cause, "message")) : ""
  return because === "" ? name : `${name}: ${because}`
}

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

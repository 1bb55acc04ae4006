/**
 * How the loop's errors print: safe, short renderings of bad values, and the
 * property and stack tricks that keep a `RunError`'s chain and a provider's
 * request out of every printout.
 *
 * @internal
 */
import { describe, messageOf, safeString } from "./describe.ts"
import { redactedShort, redactSecrets } from "./redact.ts"

/** @internal makes an own property non-enumerable (still readable and writable) */
export const hide = (self: object, key: string): void => {
  const descriptor = Object.getOwnPropertyDescriptor(self, key)
  if (descriptor !== undefined && descriptor.enumerable === true) {
    Object.defineProperty(self, key, { ...descriptor, enumerable: false })
  }
}

/**
 * Makes `error.stack` begin with `error.toString()` rather than with the bare
 * message, so what Node prints for an uncaught error shows the summary too.
 * The frames are V8's, formatted when first read.
 *
 * @internal
 */
export const headStack = (error: Error): void => {
  const native = Object.getOwnPropertyDescriptor(error, "stack")
  const get = native?.get
  if (get === undefined || native?.configurable !== true) return
  let stack: string | undefined
  Object.defineProperty(error, "stack", {
    get: () => stack ??= printed(error.toString(), [], get.call(error) as string | undefined),
    set: (value: unknown) => {
      stack = String(value)
    },
    enumerable: false,
    configurable: true
  })
}

/** @internal `header` (with `fields` appended), then the stack's frames, as Node prints an error */
export const printed = (header: string, fields: ReadonlyArray<string>, stack: string | undefined): string => {
  let out = fields.length === 0 ? header : `${header} { ${fields.join(", ")} }`
  if (stack !== undefined) {
    // Only the frame lines: the stack's first lines repeat the message, which may be multi-line.
    for (const line of stack.split("\n")) if (/^\s+at /.test(line)) out += `\n${line}`
  }
  return out
}

/** The longest rendering of a bad value an error message quotes. */
const maxShown = 200

/** @internal a bad value for an error message: JSON where it can be, at most 200 characters */
export const describeValue = (value: unknown): string => {
  // Redacted before it is cut: a cut key's head no longer looks like one.
  const shown = redactSecrets(renderValue(value))
  return shown.length <= maxShown ? shown : `${shown.slice(0, maxShown)}… (${shown.length} characters)`
}

const renderValue = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number" || typeof value === "bigint" || value === undefined) return String(value)
  if (typeof value === "function") return "a function"
  try {
    return JSON.stringify(value) ?? safeString(value)
  } catch {
    return safeString(value)
  }
}

/**
 * @internal an id a client gave, as a message shows it: credentials
 * redacted, then at most 80 characters (a cut key's head no longer looks
 * like one, so redacting after the cut would let it through)
 */
export const shownId = (id: string): string => redactedShort(id, 80)

/** @internal the first ten of `items` as `show` gives them, and how many more there are */
export const listed = (items: ReadonlyArray<string>, show: (item: string) => string): string => {
  const shown = items.slice(0, 10).map(show).join(", ")
  return items.length > 10 ? `${shown} and ${items.length - 10} more` : shown
}

/**
 * @internal what a step's `Error` outcome held, as a failure with a `_tag`
 * and a `message`, when it was not one (from JavaScript: a string, a plain
 * `Error`, `null`)
 */
export const untaggedFailure = (failure: unknown): { readonly _tag: string; readonly message: string } => ({
  _tag: "UntaggedFailure",
  message: `a step ended the loop with Outcome.Error holding ${redactedShort(describe(failure), maxShown)}, not a failure ` +
    `with a _tag and a message: give Outcome.Error a Schema.TaggedError`
})

/**
 * @internal what `u` (a thrown value, a defect) says, for a message the
 * library writes: its message, redacted, then cut to `max` characters
 */
export const thrownMessage = (u: unknown, max = 200): string => redactedShort(messageOf(u), max)

/** @internal a value as short JSON for a message, redacted (a hostile document may hold anything) */
export const shortJson = (value: unknown): string => {
  if (value === undefined) return "nothing"
  let text: string
  try {
    text = JSON.stringify(value) ?? typeof value
  } catch {
    text = typeof value
  }
  return redactedShort(text, 60)
}

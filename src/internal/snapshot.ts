/**
 * A copy of what a client hands over (decisions, edited arguments, external
 * results), taken once before anything is checked: the loop checks the
 * copy and keeps the copy, so a getter that answers differently on a later
 * read, or an object the client changes after the call, cannot change what
 * was checked and approved. A value that cannot be copied (a getter that
 * throws, a proxy, a function, nesting too deep to copy) is refused.
 *
 * @internal
 */
import { Result } from "effect"
import { messageOf } from "./describe.ts"
import { redactSecrets } from "./redact.ts"

/** @internal `input` copied (`structuredClone`), or why it cannot be */
export const snapshot = (input: unknown): Result.Result<unknown, string> => {
  try {
    return Result.succeed(structuredClone(input))
  } catch (error) {
    // Nested too deeply for structuredClone's recursion: copied without recursion instead, so the
    // checks that follow refuse the copy as too deep, and nothing of the caller's value is kept (a
    // getter that throws a RangeError once must not get its value past the copy).
    if (error instanceof RangeError) return deepCopy(input)
    return Result.fail(`it cannot be copied (${redactSecrets(messageOf(error))})`)
  }
}

/** Arrays and plain objects of JSON-like data copied without recursion; anything else cannot be. */
const deepCopy = (input: unknown): Result.Result<unknown, string> => {
  try {
    const root = { value: input }
    const out: { value?: unknown } = {}
    const stack: Array<readonly [from: Record<string, unknown>, to: Record<string, unknown>]> = [[root, out]]
    // Each object copied once, as structuredClone does: a shared one stays shared, a cycle stays a cycle
    // (which the checks refuse), and the work is bounded by the objects there are, not the paths to them.
    const copies = new Map<object, unknown>()
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      const [from, to] = top
      for (const key of Object.keys(from)) {
        const value = from[key]
        let copy: unknown = value
        if (typeof value === "function" || typeof value === "symbol") return Result.fail(`it cannot be copied (it holds a ${typeof value})`)
        if (typeof value === "object" && value !== null && copies.has(value)) copy = copies.get(value)
        else if (typeof value === "object" && value !== null) {
          const proto: unknown = Object.getPrototypeOf(value)
          if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return Result.fail("it cannot be copied (it holds an object that is not plain data)")
          copy = Array.isArray(value) ? new Array<unknown>(value.length) : {}
          copies.set(value, copy)
          stack.push([value as Record<string, unknown>, copy as Record<string, unknown>])
        }
        Object.defineProperty(to, key, { value: copy, enumerable: true, writable: true, configurable: true })
      }
    }
    return Result.succeed(out.value)
  } catch (error) {
    return Result.fail(`it cannot be copied (${redactSecrets(messageOf(error))})`)
  }
}

/**
 * @internal {@link snapshot} of a record of answers by call id: what is
 * copied must be an object of its own keys, not a `Map`, a `Set`, a `Date`
 * or an array (a record schema reads a `Map` as having no keys: a `Map` of
 * decisions would decide nothing, silently); anything else not an object
 * is left to the schema, which says what it is
 */
export const recordSnapshot = (input: unknown): Result.Result<unknown, string> => {
  const copied = snapshot(input)
  if (Result.isFailure(copied) || typeof copied.success !== "object" || copied.success === null) return copied
  const proto: unknown = Object.getPrototypeOf(copied.success)
  return proto === Object.prototype || proto === null ? copied : Result.fail("an object of call ids, not a Map or an array")
}

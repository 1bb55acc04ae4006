/**
 * A copy of what a client hands over (decisions, edited arguments, external
 * results), taken once before anything is checked: the loop checks the
 * copy and keeps the copy, so a getter that answers differently on a later
 * read, or an object the client changes after the call, cannot change what
 * was checked and approved. A value that cannot be copied (a getter that
 * throws, a proxy, a function) is refused; one nested too deeply to copy is
 * left to the checks, which refuse it as too deep.
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
    // Nested too deeply to copy: too deeply to keep in a chain as well, so the checks that follow
    // refuse it (with the value's own error), and nothing of it is kept to change later.
    if (error instanceof RangeError) return Result.succeed(input)
    return Result.fail(`it cannot be copied (${redactSecrets(messageOf(error))})`)
  }
}

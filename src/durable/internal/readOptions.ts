/**
 * Options read once, when a layer is built: from JavaScript a getter may
 * throw, and that is an `InvalidInput` of the options, not a defect. What is
 * read is a copy, so a getter that answers differently later changes
 * nothing.
 *
 * @internal
 */
import { Effect } from "effect"
import { readably } from "../../internal/checks.ts"
import type { InvalidInput } from "../../LoopError.ts"

/** @internal the `keys` of `options`, each read once, or the `InvalidInput` of a read that threw */
export const readOptions = <O extends object, K extends keyof O>(options: O, keys: ReadonlyArray<K>): Effect.Effect<Pick<O, K>, InvalidInput> =>
  Effect.suspend(() => {
    const read: Partial<Pick<O, K>> = {}
    const problem = readably("options", () => {
      for (const key of keys) read[key] = options[key]
      return undefined
    })
    return problem === undefined ? Effect.succeed(read as Pick<O, K>) : Effect.fail(problem)
  })

/**
 * The names a durable workflow may take. A durable ensemble named `n`
 * registers child workflows `n/task` and `n/delegation`, and effect's
 * cluster engine keeps its clock as the workflow `-/DurableClock`: a name a
 * caller gives that is one of those would be the same workflow as another's,
 * and which body ran would depend on the order of the layers. The engine
 * stores `Workflow/<name>` in a column of 150 characters, so a name, with its
 * longest child suffix, must fit there.
 *
 * @internal
 */
import { InvalidInput } from "../../LoopError.ts"

/** @internal the suffixes of a durable ensemble's child workflows, after its own name */
export const childSuffix = { task: "/task", delegation: "/delegation" } as const

const suffixes: ReadonlyArray<string> = Object.values(childSuffix)

/** effect's cluster engine keeps its durable clock as this workflow. */
const clockName = "-/DurableClock"

/** The longest name: `Workflow/` (9), the name and `/delegation` (11) in 150 characters. */
const maxLength = 128

/**
 * @internal the problem of `name` as a durable workflow's name, or
 * `undefined`: 1 to 128 characters, not ending with a child's suffix, not
 * effect's clock
 */
export const nameProblem = (name: unknown): InvalidInput | undefined => {
  const rule = `must be 1 to ${maxLength} characters, not ending with ${suffixes.join(" or ")} (the names of a durable ensemble's child workflows) and not ${clockName}`
  if (typeof name !== "string" || name.length === 0 || name.length > maxLength) {
    return new InvalidInput({ field: "name", rule, value: typeof name === "string" ? `(${name.length} characters)` : typeof name })
  }
  if (name === clockName || suffixes.some((suffix) => name.endsWith(suffix))) return new InvalidInput({ field: "name", rule, value: name })
  return undefined
}

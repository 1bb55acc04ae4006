/**
 * The names a durable workflow may take. A durable ensemble named `n`
 * registers child workflows `n/task` and `n/delegation`, and effect's
 * cluster engine keeps its clock as the workflow `-/DurableClock`: a
 * workflow of one of those names would be the same workflow as another's,
 * and which body ran would depend on the order of the layers. So the names
 * made in a process are kept, and a name that is another's child, or whose
 * children are another's name, is refused; a name made again for the same
 * kind of workflow is not (a module loaded twice, a test).
 *
 * A name is at most 222 characters: with `/` and an execution id as the
 * engine makes them (32 characters), it is the key of the execution's
 * waiting calls, kept in a column of 255.
 *
 * @internal
 */
import { Context, Effect } from "effect"
import { InvalidInput } from "../../LoopError.ts"

/** @internal the suffixes of a durable ensemble's child workflows, after its own name */
export const childSuffix = { task: "/task", delegation: "/delegation" } as const

/** effect's cluster engine keeps its durable clock as this workflow. */
const clockName = "-/DurableClock"

const maxLength = 222

/** The names of durable chains and ensembles made in this process, and of the ensembles' children (by parent). */
const made = new Set<string>()
const children = new Map<string, string>()

const refused = (name: string, rule: string) => new InvalidInput({ field: "name", rule, value: name })

/**
 * @internal the problem of `name` as a durable workflow's name (an
 * ensemble's when `ensemble`), or `undefined`, and then the name is kept
 */
export const claimName = (name: unknown, ensemble: boolean): InvalidInput | undefined => {
  if (typeof name !== "string" || name.length === 0 || name.length > maxLength) {
    return new InvalidInput({
      field: "name",
      rule: `must be a string of 1 to ${maxLength} characters`,
      value: typeof name === "string" ? `(${name.length} characters)` : name
    })
  }
  if (name === clockName) return refused(name, `must not be ${clockName}, the workflow of effect's durable clock`)
  const parent = children.get(name)
  if (parent !== undefined) return refused(name, `is the name of a child workflow of the durable ensemble '${parent}'`)
  const own = ensemble ? Object.values(childSuffix).map((suffix) => `${name}${suffix}`) : []
  const taken = own.find((child) => made.has(child))
  if (taken !== undefined) return refused(name, `would give the durable ensemble a child workflow '${taken}', the name of another workflow`)
  made.add(name)
  for (const child of own) children.set(child, name)
  return undefined
}

/** effect's engine keeps `Workflow/<name>` in a column of 150 characters on PostgreSQL. */
const pgMaxLength = 150 - "Workflow/".length

/**
 * @internal whether the workflow engine of the context stores on
 * PostgreSQL: the `DurablePostgres` layers say so (an application's own
 * PostgreSQL client beside another engine does not)
 */
export const OnPostgres = Context.Reference<boolean>("loopwork/durable/OnPostgres", { defaultValue: () => false })

/**
 * @internal fails when the engine stores on PostgreSQL and one of `names`,
 * a workflow's and its children's, is longer than its column holds (in
 * characters, as PostgreSQL counts them): there every execution would die
 * when the engine stores its first message
 */
export const fitsEngine = (names: ReadonlyArray<string>): Effect.Effect<void, InvalidInput> =>
  Effect.flatMap(Effect.service(OnPostgres), (pg) => {
    const long = pg ? names.find((name) => [...name].length > pgMaxLength) : undefined
    return long === undefined ? Effect.void : Effect.fail(new InvalidInput({
      field: "name",
      rule: `on PostgreSQL, effect's engine stores a workflow's name, and its durable ensemble children's, in ${pgMaxLength} characters: shorten it`,
      value: long
    }))
  })

/**
 * The options of a `DurablePostgres` layer, from JavaScript: copied once
 * (each getter read once, a throw an `InvalidInput`), and the pool options
 * `@effect/sql-pg` would otherwise take as they are checked first. There, a
 * `maxConnections` of 0 or NaN leaves the layer waiting for ever, a
 * timeout that is not a duration or a startup parameter that is not a
 * string is a defect, and so is a password that is not `Redacted`.
 *
 * @internal
 */
import { Duration, Effect, Redacted, Result } from "effect"
import { thrownMessage } from "../../internal/errorText.ts"
import { InvalidInput } from "../../LoopError.ts"

type Rule = (value: unknown, options: Readonly<Record<string, unknown>>) => string | undefined

const text: Rule = (u) => typeof u === "string" ? undefined : "a string"
// A number of milliseconds from 0, Infinity included (effect reads NaN as 0); anything else as effect reads it.
const duration: Rule = (u) =>
  (typeof u !== "number" || u >= 0) && Duration.fromInput(u as Duration.Input)._tag === "Some"
    ? undefined
    : "a duration (\"5 seconds\", or milliseconds)"
const count = (min: number): Rule => (u) => typeof u === "number" && Number.isFinite(u) && u >= min ? undefined : `a number from ${min}`

/** The pool options checked here (any other is handed over as it is), by name. */
const rules: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["host", text],
  ["path", text],
  ["database", text],
  ["username", text],
  ["applicationName", text],
  ["startupOptions", text],
  ["port", (u) => typeof u === "number" && Number.isSafeInteger(u) && u >= 1 && u <= 65535 ? undefined : "a port, 1 to 65535"],
  ["password", (u) => Redacted.isRedacted(u) || Effect.isEffect(u) ? undefined : "kept Redacted: password: Redacted.make(…)"],
  ["connectTimeout", duration],
  ["keepAlive", duration],
  ["idleTimeout", duration],
  ["connectionTTL", duration],
  ["maxConnections", count(1)],
  ["minConnections", (u, options) =>
    count(0)(u, options) ?? (typeof options.maxConnections === "number" && (u as number) > options.maxConnections ? "at most maxConnections" : undefined)],
  ["startupParameters", (u) =>
    typeof u === "object" && u !== null && !Array.isArray(u) && Object.values(u).every((value) => typeof value === "string")
      ? undefined
      : "a record of strings by parameter name"]
])

/** Values not shown in a message: they may hold a credential. */
const hidden: ReadonlySet<string> = new Set(["password", "startupParameters", "startupOptions"])

/** Options read by name too: a class's getter or a non-enumerable property is not copied by a spread. */
const known: ReadonlyArray<string> = [
  ...rules.keys(),
  "url", "name", "synchronous", "pollInterval", "failoverAfter", "ssl", "stream", "types", "spanAttributes",
  "transformResultNames", "transformQueryNames", "transformJson"
]

/** @internal the options copied (each read once) and their pool options checked, or the first problem */
export const copied = <O extends object>(options: O): Result.Result<O, InvalidInput> => {
  let copy: Record<string, unknown>
  try {
    if (typeof options !== "object" || options === null) throw new TypeError("not an object")
    // Each value read once, inherited ones too (as @effect/sql-pg reads them); a getter or Proxy trap that throws stops here.
    // Null-prototype: a "__proto__" key (from JSON) is a key like any other.
    copy = Object.create(null) as Record<string, unknown>
    for (const key in options) copy[key] = (options as Readonly<Record<string, unknown>>)[key]
    for (const key of known) if (!Object.hasOwn(copy, key) && key in options) copy[key] = (options as Readonly<Record<string, unknown>>)[key]
    for (const [field, rule] of rules) {
      const value = copy[field]
      const broken = value === undefined ? undefined : rule(value, copy)
      if (broken !== undefined) return Result.fail(new InvalidInput({ field, rule: `must be ${broken}`, value: hidden.has(field) ? "(not shown)" : value }))
    }
  } catch (error) {
    return Result.fail(new InvalidInput({ field: "options", rule: `the connection options: an object whose fields can be read (${thrownMessage(error)})`, value: "(not shown)" }))
  }
  return Result.succeed(copy as O)
}

/**
 * The rules of a config `Schema.Struct` run as plain checks, field by field
 * in the Struct's order, for a value that passes them all. That is the usual
 * case, and a frequent one: `Ensemble.run` checks its ensemble, every agent
 * and every task again on every run. A value that breaks a rule (or that the
 * plain checks cannot judge) goes through Schema's parser, which words the
 * failure, so the result is always what Schema would give.
 *
 * @internal
 */
import { Schema } from "effect"

/** A field of a config Struct: its rule's check, and whether the key may be left out (or `undefined`). */
interface Field {
  readonly check: (u: unknown) => string | undefined
  readonly optional: boolean
}

const fields = new WeakMap<object, Field>()

/** @internal records `schema` as a field that accepts exactly what `check` accepts (and, if `optional`, `undefined` or no key) */
export const asField = <S extends object>(schema: S, check: Field["check"], optional: boolean): S => {
  fields.set(schema, { check, optional })
  return schema
}

/** A Struct's fields in order: their keys, and the fields at the same positions. */
interface Plan {
  readonly keys: ReadonlyArray<string>
  readonly fields: ReadonlyArray<Field>
}

const plans = new WeakMap<object, Plan | null>()

/** The fields of a Struct made only of rule fields (no checks of its own, no index signatures), or `null`. */
const planOf = (schema: object): Plan | null => {
  if (!Schema.isSchema(schema)) return null
  const ast = schema.ast
  if (ast._tag !== "Objects" || ast.checks !== undefined || ast.indexSignatures.length > 0 || !("fields" in schema)) return null
  const keys: Array<string> = []
  const all: Array<Field> = []
  for (const [key, value] of Object.entries(schema.fields as Readonly<Record<string, object>>)) {
    const field = fields.get(value)
    if (field === undefined || key === "__proto__") return null
    keys.push(key)
    all.push(field)
  }
  return { keys, fields: all }
}

const cachedPlan = (schema: object): Plan | null => {
  let plan = plans.get(schema)
  if (plan === undefined) {
    plan = planOf(schema)
    plans.set(schema, plan)
  }
  return plan
}

/**
 * Whether every rule of `schema` accepts `input`, its values read once each
 * and, with `out`, copied there as Schema would decode them. `false` when
 * one does not (or a check threw, or `schema` is not a Struct of rules):
 * then decode with Schema, for its failure.
 */
const passes = (schema: object, input: unknown, out: Record<string, unknown> | undefined): boolean => {
  const plan = cachedPlan(schema)
  if (plan === null || typeof input !== "object" || input === null || Array.isArray(input)) return false
  const record = input as Readonly<Record<string, unknown>>
  const { fields, keys } = plan
  try {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const field = fields[i]
      if (!(key in record)) {
        if (field.optional) continue
        return false
      }
      const value = record[key]
      if (!(field.optional && value === undefined) && field.check(value) !== undefined) return false
      if (out !== undefined) out[key] = value
    }
  } catch {
    return false
  }
  return true
}

/** @internal whether every rule of `schema` accepts `input` (when `false`, Schema words the failure) */
export const accepts = (schema: object, input: unknown): boolean => passes(schema, input, undefined)

/** @internal what Schema decodes `input` to when every rule of `schema` accepts it, else `undefined` (decode with Schema) */
export const passing = (schema: object, input: unknown): object | undefined => {
  const out: Record<string, unknown> = {}
  return passes(schema, input, out) ? out : undefined
}

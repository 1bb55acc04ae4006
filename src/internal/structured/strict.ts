/**
 * A JSON Schema in OpenAI's strict form (structured outputs and strict
 * function tools): every object lists all its properties as required and
 * allows no others. A Schema that cannot be put in that form (an optional
 * key, a record with free keys) is refused with the reason, rather than
 * sent and rejected by the provider.
 *
 * @internal
 */
import type { JsonSchema } from "effect"

/** @internal why a JSON Schema has no strict form */
export class NotStrict {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

/** Deeper than this, a schema is refused (a recursive schema is written with `$ref`, not nesting). */
const maxDepth = 64

/** Keywords whose value is one subschema. */
const single = ["items", "not", "contains", "additionalItems"] as const
/** Keywords whose value is a list of subschemas. */
const lists = ["anyOf", "oneOf", "allOf", "prefixItems"] as const
/** Keywords whose value is a record of subschemas, by name. */
const records = ["$defs", "definitions"] as const

type Node = { readonly [key: string]: unknown }

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

const mapRecord = (record: unknown, path: string, depth: number): Node => {
  if (!isNode(record)) return {}
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, strictAt(value, `${path}.${key}`, depth)]))
}

const strictObject = (node: Node, path: string, depth: number): Node => {
  const additional = node.additionalProperties
  if (isNode(additional) || (node.patternProperties !== undefined && isNode(node.patternProperties))) {
    throw new NotStrict(`${path} allows keys of any name (a record); strict mode needs every key listed`)
  }
  const properties = isNode(node.properties) ? node.properties : {}
  const keys = Object.keys(properties)
  const required = new Set(Array.isArray(node.required) ? node.required : [])
  for (const key of keys) {
    if (!required.has(key)) {
      throw new NotStrict(
        `${path}.${key} is optional; strict mode needs every property required: ` +
          "write it as Schema.NullOr(...) for a value that may be absent"
      )
    }
  }
  return { ...node, properties: mapRecord(properties, path, depth), required: keys, additionalProperties: false }
}

const strictAt = (schema: unknown, path: string, depth: number): unknown => {
  if (!isNode(schema)) return schema
  if (depth > maxDepth) throw new NotStrict(`${path} is nested more than ${maxDepth} levels deep`)
  let node: Node = schema.type === "object" || isNode(schema.properties) ? strictObject(schema, path, depth + 1) : schema
  for (const key of single) {
    if (isNode(node[key])) node = { ...node, [key]: strictAt(node[key], `${path}.${key}`, depth + 1) }
  }
  for (const key of lists) {
    const list = node[key]
    if (Array.isArray(list)) node = { ...node, [key]: list.map((item, i) => strictAt(item, `${path}.${key}[${i}]`, depth + 1)) }
  }
  for (const key of records) {
    if (isNode(node[key])) node = { ...node, [key]: mapRecord(node[key], `${path}.${key}`, depth + 1) }
  }
  return node
}

/**
 * @internal `schema` in OpenAI's strict form: objects with all their
 * properties required and `additionalProperties: false`, at every depth
 * (`$defs` included); a `NotStrict` when it has no such form
 */
export const strictJsonSchema = (schema: JsonSchema.JsonSchema): JsonSchema.JsonSchema | NotStrict => {
  try {
    return strictAt(schema, "$", 0) as JsonSchema.JsonSchema
  } catch (error) {
    if (error instanceof NotStrict) return error
    throw error
  }
}

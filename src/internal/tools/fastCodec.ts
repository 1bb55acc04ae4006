/**
 * Codecs for the schemas most tools declare — parameters that are a plain
 * struct of strings, numbers and booleans, a result that is one of those —
 * that check the value themselves instead of going through the Schema
 * parser, and hand anything they do not accept to the Schema codec, so every
 * failure (and its message) is the Schema codec's own.
 *
 * A value they accept, the Schema codec would accept too with the same
 * output: a struct decodes to a new object with the declared keys in their
 * order (each one an own data property of the input, which is read without
 * running a getter, so a value Schema is handed has not been read before);
 * a primitive encodes to itself. Only ASTs whose parsing nothing else changes qualify:
 * no checks, no encoding, no context (optional keys, defaults), no index
 * signatures, no `__proto__` key.
 *
 * @internal
 */
import { type Effect, Exit, type Schema, type SchemaAST } from "effect"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

type Primitive = "string" | "number" | "boolean"

/** The `typeof` a primitive keyword with nothing else to it accepts, or `undefined`. */
const primitiveOf = (ast: SchemaAST.AST): Primitive | undefined => {
  if (ast.checks !== undefined || ast.encoding !== undefined || ast.context !== undefined) return undefined
  switch (ast._tag) {
    case "String":
      return "string"
    case "Number":
      return "number"
    case "Boolean":
      return "boolean"
    default:
      return undefined
  }
}

/** The keys of a plain struct of primitives and, at the same index, their kinds; or `undefined`. */
interface Fields {
  readonly keys: ReadonlyArray<string>
  readonly kinds: ReadonlyArray<Primitive>
}

const plainStruct = (ast: SchemaAST.AST): Fields | undefined => {
  if (ast._tag !== "Objects" || ast.checks !== undefined || ast.encoding !== undefined || ast.context !== undefined) return undefined
  if (ast.encodingChecks !== undefined || ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0) return undefined
  const keys: Array<string> = []
  const kinds: Array<Primitive> = []
  for (const property of ast.propertySignatures) {
    const kind = primitiveOf(property.type)
    if (typeof property.name !== "string" || property.name === "__proto__" || kind === undefined) return undefined
    keys.push(property.name)
    kinds.push(kind)
  }
  return { keys, kinds }
}

/**
 * A decoder for `ast` that decodes a plain struct of primitives
 * itself and hands every other value to `full` (the Schema decoder of the
 * same schema); `full` itself for any other schema.
 *
 * @internal
 */
export const fastDecoder = (ast: SchemaAST.AST, full: Codec): Codec => {
  const fields = plainStruct(ast)
  if (fields === undefined) return full
  const { keys, kinds } = fields
  return (u) => {
    const out: Record<string, unknown> = {}
    try {
      if (typeof u !== "object" || u === null || Array.isArray(u)) return full(u)
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]
        // Own data properties only, read without calling anything: a getter (which may answer
        // differently when read again), an inherited value and the like are Schema's to read, once.
        const own = Object.getOwnPropertyDescriptor(u, key)
        if (own === undefined || !("value" in own) || typeof own.value !== kinds[i]) return full(u)
        out[key] = own.value
      }
    } catch {
      // A value that cannot be looked at (a revoked proxy, a trap that throws): the Schema decoder says what that comes to.
      return full(u)
    }
    return Exit.succeed(out)
  }
}

/**
 * An encoder for `ast` that encodes a primitive of its own kind as itself
 * and hands every other value to `full`; `full` itself unless `ast` is a
 * plain primitive keyword.
 *
 * @internal
 */
export const fastEncoder = (ast: SchemaAST.AST, full: Codec): Codec => {
  const kind = primitiveOf(ast)
  if (kind === undefined) return full
  return (u) => typeof u === kind ? Exit.succeed(u) : full(u)
}

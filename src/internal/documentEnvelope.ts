/**
 * What `Chain.decode` reads first: the stored document as JSON text or as an
 * object, bounded before anything reads its values, taken as a copy when it
 * is an object (so the signature check and the Schema read the same
 * values), and of the format and a version this loopwork reads.
 *
 * @internal
 */
import { Effect } from "effect"
import { ChainCodecError, formatVersion } from "./chainDocument.ts"
import { shortJson, thrownMessage } from "./errorText.ts"
import * as JsonBounds from "./jsonBounds.ts"

/** @internal how deep and large a document may be: stored values up to the ceiling, plus the document's own levels */
export const documentLimits: JsonBounds.Limits = {
  maxDepth: JsonBounds.depthCeiling + 8,
  maxSize: JsonBounds.storedLimits.maxSize
}

/** @internal a decoding failure saying `reason` */
export const decodeFailure = (reason: string) => new ChainCodecError({ operation: "decode", reason })

/**
 * @internal the document `input` holds (JSON text or an object), checked
 * and copied as the module says, or the `ChainCodecError` saying why not
 */
export const checkEnvelope = (input: unknown): Effect.Effect<Record<string, unknown>, ChainCodecError> => {
  let document = input
  if (typeof input === "string") {
    try {
      document = JSON.parse(input)
    } catch (error) {
      return Effect.fail(decodeFailure(`the text is not valid JSON (${(error as SyntaxError).message})`))
    }
  }
  if (typeof document !== "object" || document === null || isArrayOrUnreadable(document)) {
    return Effect.fail(decodeFailure("expected a JSON object written by Chain.encode"))
  }
  // Bounded first: everything after reads (and quotes) the document's values.
  const problem = JsonBounds.check(document, documentLimits)
  if (problem !== undefined) return Effect.fail(decodeFailure(`the document is ${JsonBounds.describe(problem)}`))
  // A document handed over as an object is read once, into a copy that the signature check and the
  // Schema both read: a getter or a Proxy answering differently to each must not pass a changed document.
  const read = typeof input === "string" ? document : jsonCopy(document)
  if (typeof read === "string") return Effect.fail(decodeFailure(read))
  const format = Object.hasOwn(read, "format") ? (read as { format?: unknown }).format : undefined
  const version = Object.hasOwn(read, "version") ? (read as { version?: unknown }).version : undefined
  if (format !== "loopwork/chain") {
    return Effect.fail(decodeFailure(`expected format "loopwork/chain", got ${shortJson(format)}`))
  }
  if (version !== 1 && version !== formatVersion) {
    return Effect.fail(decodeFailure(
      `unsupported format version ${version === undefined ? "(missing)" : shortJson(version)}; this loopwork reads versions 1 and ${formatVersion}`
    ))
  }
  return Effect.succeed(read as Record<string, unknown>)
}

/** `document` as its JSON text reads back, bounded again; or why it cannot be. */
const jsonCopy = (document: object): object | string => {
  let copy: unknown
  try {
    copy = JSON.parse(JSON.stringify(document))
  } catch (error) {
    return `the document cannot be read (${thrownMessage(error)})`
  }
  const problem = JsonBounds.check(copy, documentLimits)
  if (problem !== undefined) return `the document is ${JsonBounds.describe(problem)}`
  return typeof copy === "object" && copy !== null && !Array.isArray(copy) ? copy : "expected a JSON object written by Chain.encode"
}

/** Whether `value` is an array, or cannot even say (a revoked Proxy: Array.isArray throws). */
const isArrayOrUnreadable = (value: object): boolean => {
  try {
    return Array.isArray(value)
  } catch {
    return true
  }
}

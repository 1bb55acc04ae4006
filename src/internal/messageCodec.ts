/**
 * Encoding a chain's messages for its JSON document, fast: Schema-encoding a
 * message costs 10–20 µs, while the loop's messages have a few known shapes
 * whose encoded form is the message without effect/ai's marker key (the
 * values are already JSON: tool arguments and encoded results). Anything else
 * goes through the Schema.
 *
 * Keys are written in the Schema's order whatever the order of the message
 * object, so a decoded chain encodes to the same text as the chain it came
 * from. A property test checks the fast and the Schema encoding agree.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import * as JsonBounds from "./jsonBounds.ts"

/**
 * A known shape: its fields copied in the Schema's order (an object literal
 * written in that order, read field by field), how many there are, and
 * whether the copied values are what the Schema takes for them.
 */
interface Shape {
  readonly fields: number
  readonly copy: (value: Readonly<Record<string, unknown>>) => Record<string, unknown>
  readonly valid: (copied: Readonly<Record<string, unknown>>) => boolean
  /** Its fields holding strings. */
  readonly strings: ReadonlyArray<string>
  /** Its field holding a JSON value of the caller's (tool arguments, a result), if any. */
  readonly value?: string
}

const isString = (u: unknown): u is string => typeof u === "string"
const isBoolean = (u: unknown): u is boolean => typeof u === "boolean"

/**
 * Options the fast path takes: none (a record without enumerable own keys,
 * which the Schema encodes as `{}`); provider options go through the Schema.
 */
const noOptions = (options: unknown): boolean => {
  if (typeof options !== "object" || options === null || Array.isArray(options)) return false
  for (const key in options) if (Object.hasOwn(options, key)) return false
  return true
}

const textShape: Shape = {
  fields: 3,
  copy: (p) => ({ options: p.options, type: p.type, text: p.text }),
  valid: (p) => noOptions(p.options) && isString(p.text),
  strings: ["type", "text"]
}

const partShapes: ReadonlyMap<unknown, Shape> = new Map<unknown, Shape>([
  ["text", textShape],
  ["reasoning", textShape],
  ["tool-call", {
    fields: 6,
    copy: (p) => ({ options: p.options, type: p.type, id: p.id, name: p.name, params: p.params, providerExecuted: p.providerExecuted }),
    valid: (p) => noOptions(p.options) && isString(p.id) && isString(p.name) && isBoolean(p.providerExecuted),
    strings: ["type", "id", "name"],
    value: "params"
  }],
  ["tool-result", {
    fields: 7,
    copy: (p) => ({
      options: p.options,
      type: p.type,
      id: p.id,
      name: p.name,
      isFailure: p.isFailure,
      result: p.result,
      providerExecuted: p.providerExecuted
    }),
    valid: (p) => noOptions(p.options) && isString(p.id) && isString(p.name) && isBoolean(p.isFailure) && isBoolean(p.providerExecuted),
    strings: ["type", "id", "name"],
    value: "result"
  }]
])
const messageShape: Shape = {
  fields: 3,
  copy: (m) => ({ options: m.options, role: m.role, content: m.content }),
  valid: (m) => noOptions(m.options),
  strings: ["role"]
}

/** The part types each role's messages hold on the fast path (a system message holds a string). */
const partsOf: ReadonlyMap<unknown, ReadonlySet<unknown>> = new Map([
  ["user", new Set(["text"])],
  ["assistant", new Set(["text", "reasoning", "tool-call", "tool-result"])],
  ["tool", new Set(["tool-result"])]
])
const partMarker = "~effect/ai/Prompt/Part"
const messageMarker = "~effect/ai/Prompt/Message"

/**
 * `value`'s fields in `shape`'s order, if it has exactly those (all defined
 * and valid) besides `marker`, which it must hold as effect/ai writes it.
 * Its options (none: see {@link noOptions}) are written as a fresh `{}`, as
 * the Schema writes them, never as the caller's object.
 */
const plainCopy = (value: object, shape: Shape, marker: string): Record<string, unknown> | undefined => {
  if ((value as Readonly<Record<string, unknown>>)[marker] !== marker) return undefined
  const out = shape.copy(value as Readonly<Record<string, unknown>>)
  for (const key in out) if (out[key] === undefined) return undefined
  if (!shape.valid(out) || Object.keys(value).length !== shape.fields + 1) return undefined
  out.options = {}
  return out
}

/**
 * The most characters of JSON a plain copy of `shape` takes besides its
 * strings and its value: the copy of a template whose strings are empty,
 * whose booleans are `false` (longer than `true`) and whose value is left
 * out.
 */
const overhead = (shape: Shape): number => {
  const template = { options: {}, type: "", text: "", id: "", name: "", params: 0, result: 0, providerExecuted: false, isFailure: false, role: "", content: "" }
  const copied = shape.copy(template)
  if (shape.value !== undefined) delete copied[shape.value]
  // The value's key: its quotes, its colon and a comma.
  return JSON.stringify(copied).length + (shape.value === undefined ? 0 : shape.value.length + 4)
}
const overheads: ReadonlyMap<Shape, number> = new Map([textShape, ...partShapes.values(), messageShape].map((shape) => [shape, overhead(shape)]))

/**
 * What the plain copies add up to: the most characters of JSON they take
 * without the caller's values they hold, and those values (tool arguments
 * and results, the caller's own objects), measured last, once every getter
 * the copies and the rest of the document read has run. The Schema's
 * encodings are measured last too: they hold the caller's values as well.
 */
interface Tally {
  fixed: number
  readonly values: Array<unknown>
  /** For each message in order, how many of `values` are its own, or -1 for one the Schema encodes. */
  readonly counts: Array<number>
}

/** Adds a plain copy of `shape` to `tally`: every character of its strings escaped, and its value. */
const count = (tally: Tally, shape: Shape, copied: Readonly<Record<string, unknown>>): void => {
  let size = overheads.get(shape) as number
  for (const key of shape.strings) size += (copied[key] as string).length * 6
  tally.fixed += size
  if (shape.value !== undefined) tally.values.push(copied[shape.value])
}

/**
 * The encoded parts of a message of `role`, or `undefined` when one is not of a shape its role holds.
 * Counts them in `tally`, with the commas between them.
 */
const plainParts = (role: unknown, content: unknown, tally: Tally): Array<Record<string, unknown>> | undefined => {
  const allowed = partsOf.get(role)
  if (allowed === undefined || !Array.isArray(content)) return undefined
  const parts: Array<Record<string, unknown>> = []
  for (const part of content) {
    if (typeof part !== "object" || part === null) return undefined
    const type: unknown = (part as { readonly type: unknown }).type
    const shape = allowed.has(type) ? partShapes.get(type) : undefined
    const plain = shape === undefined ? undefined : plainCopy(part, shape, partMarker)
    // The copy reads `type` again: a getter must not pick one shape and write another.
    if (plain === undefined || plain.type !== type) return undefined
    parts.push(plain)
    count(tally, shape as Shape, plain)
  }
  // Counted from the copies, not from the caller's `length`.
  tally.fixed += parts.length
  return parts
}

/** {@link plainMessage}'s copy, which may have counted some of its parts when it gives up. */
const copyMessage = (message: Prompt.Message, tally: Tally): Record<string, unknown> | undefined => {
  try {
    const out = plainCopy(message, messageShape, messageMarker)
    if (out === undefined || !partsOf.has(out.role) && out.role !== "system") return undefined
    count(tally, messageShape, out)
    if (out.role === "system") {
      if (!isString(out.content)) return undefined
      tally.fixed += out.content.length * 6
      return out
    }
    const content = plainParts(out.role, out.content, tally)
    if (content === undefined) return undefined
    // effect/ai writes a user or assistant message holding one plain text part as a string.
    const only = content.length === 1 && out.role !== "tool" ? content[0] : undefined
    out.content = only?.type === "text" ? only.text : content
    return out
  } catch {
    return undefined
  }
}

/**
 * The message as the Schema encodes it, or `undefined` when it is not one of
 * the known shapes (or cannot be read): the Schema then encodes it, or says
 * what is wrong. Counts it in `tally`.
 */
const plainMessage = (message: Prompt.Message, tally: Tally): Record<string, unknown> | undefined => {
  const fixed = tally.fixed
  const values = tally.values.length
  const out = copyMessage(message, tally)
  if (out === undefined) {
    // The Schema encodes it: what the copy counted before it gave up is taken back.
    tally.fixed = fixed
    tally.values.length = values
  }
  tally.counts.push(out === undefined ? -1 : tally.values.length - values)
  return out
}

/**
 * The most characters of JSON the counted messages take, or `NaN` when a
 * value of theirs is not JSON within `limits` (the document's, at least 6
 * levels deep: part options are at level 6, which the counts do not check).
 * In the document, a message is at level 3 (the document 1, its messages
 * 2), its content 4, a part 5, and a part's value starts at level 6. The
 * values are measured in the order of the messages (`encoded`: each message
 * as written), as the walk of the whole document would read them: a getter
 * of one message's value that changes a later message's is seen.
 */
const measure = (tally: Tally, encoded: ReadonlyArray<unknown>, limits: JsonBounds.Limits): number => {
  if (limits.maxDepth < 6) return Number.NaN
  const values: JsonBounds.Limits = { maxDepth: limits.maxDepth - 5, maxSize: limits.maxSize }
  const messages: JsonBounds.Limits = { maxDepth: limits.maxDepth - 2, maxSize: limits.maxSize }
  let bound = tally.fixed
  let next = 0
  for (let i = 0; i < tally.counts.length; i++) {
    // The message's own values, or -1 for one the Schema encoded (measured as written).
    const own = tally.counts[i]
    const found = own < 0 ? JsonBounds.bound(encoded[i], messages) : boundOfValues(tally.values, next, own, values)
    if (typeof found !== "number") return Number.NaN
    bound += found
    if (own > 0) next += own
  }
  return bound
}

/** The sum of the bounds of `count` values from `from`, or the first problem. */
const boundOfValues = (
  values: ReadonlyArray<unknown>,
  from: number,
  count: number,
  limits: JsonBounds.Limits
): JsonBounds.Problem | number => {
  let bound = 0
  for (let i = from; i < from + count; i++) {
    const found = JsonBounds.bound(values[i], limits)
    if (typeof found !== "number") return found
    bound += found
  }
  return bound
}

const encodeMessageSlowly = Schema.encodeEffect(Prompt.Message)

/**
 * The encoded messages: the plain copy where the shape is known, the
 * Schema's encoding otherwise. With them, `bound`: call it once the rest of
 * the document is encoded, for the most characters of JSON the messages take
 * (every character of their strings escaped, and the commas between them),
 * or `NaN` when that is not known (a value of theirs is not JSON within
 * `limits`, the limits of the whole document, or those limits allow fewer
 * than 6 levels). A `messages` whose length is not a count is a defect.
 *
 * @internal
 */
export const encodeMessages = (
  messages: ReadonlyArray<Prompt.Message>,
  limits: JsonBounds.Limits
): Effect.Effect<Encoded, Schema.SchemaError> => {
  // Read once: a Proxy may answer each read differently (the defect is the caller's ChainCodecError).
  const length: unknown = messages.length
  if (!Number.isSafeInteger(length) || (length as number) < 0) return Effect.die(new Error("the messages' length is not a count"))
  const out: Array<unknown> = new Array(length as number)
  const slow: Array<number> = []
  const tally: Tally = { fixed: length as number, values: [], counts: [] }
  for (let i = 0; i < out.length; i++) {
    const plain = plainMessage(messages[i], tally)
    if (plain === undefined) slow.push(i)
    else out[i] = plain
  }
  const encoded: Encoded = { messages: out, bound: () => measure(tally, out, limits) }
  if (slow.length === 0) return Effect.succeed(encoded)
  return Effect.as(
    Effect.forEach(slow, (i) =>
      Effect.map(encodeMessageSlowly(messages[i]), (message) => {
        out[i] = message
      }), { discard: true }),
    encoded
  )
}

/**
 * Encoded messages, and how to measure them (see {@link encodeMessages}).
 *
 * @internal
 */
export interface Encoded {
  readonly messages: ReadonlyArray<unknown>
  readonly bound: () => number
}

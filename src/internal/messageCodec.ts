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
import { Prompt } from "effect/ai"

/**
 * A known shape: its fields copied in the Schema's order (an object literal
 * written in that order, read field by field), and how many there are.
 */
interface Shape {
  readonly fields: number
  readonly copy: (value: Readonly<Record<string, unknown>>) => Record<string, unknown>
}

const partShapes: ReadonlyMap<string, Shape> = new Map<string, Shape>([
  ["text", { fields: 3, copy: (p) => ({ options: p.options, type: p.type, text: p.text }) }],
  ["reasoning", { fields: 3, copy: (p) => ({ options: p.options, type: p.type, text: p.text }) }],
  ["tool-call", {
    fields: 6,
    copy: (p) => ({ options: p.options, type: p.type, id: p.id, name: p.name, params: p.params, providerExecuted: p.providerExecuted })
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
    })
  }]
])
const messageShape: Shape = { fields: 3, copy: (m) => ({ options: m.options, role: m.role, content: m.content }) }
const partMarker = "~effect/ai/Prompt/Part"
const messageMarker = "~effect/ai/Prompt/Message"

/** `value`'s fields in `shape`'s order, if it has exactly those (all defined) besides `marker`. */
const plainCopy = (value: object, shape: Shape, marker: string): Record<string, unknown> | undefined => {
  const out = shape.copy(value as Readonly<Record<string, unknown>>)
  for (const key in out) if (out[key] === undefined) return undefined
  const keys = Object.keys(value).length
  return keys === shape.fields + (Object.hasOwn(value, marker) ? 1 : 0) ? out : undefined
}

const plainMessage = (message: Prompt.Message): Record<string, unknown> | undefined => {
  const out = plainCopy(message, messageShape, messageMarker)
  if (out === undefined || typeof message.content === "string") return out
  // effect/ai writes a user or assistant message holding one plain text part as a string.
  const only = message.content.length === 1 ? message.content[0] : undefined
  if (only?.type === "text" && Object.keys(only.options).length === 0) {
    out.content = only.text
    return out
  }
  const content: Array<Record<string, unknown>> = []
  for (const part of message.content) {
    const shape = partShapes.get(part.type)
    const plain = shape === undefined ? undefined : plainCopy(part, shape, partMarker)
    if (plain === undefined) return undefined
    content.push(plain)
  }
  out.content = content
  return out
}

const encodeMessageSlowly = Schema.encodeEffect(Prompt.Message)

/**
 * The encoded messages: the plain copy where the shape is known, the
 * Schema's encoding otherwise.
 *
 * @internal
 */
export const encodeMessages = (
  messages: ReadonlyArray<Prompt.Message>
): Effect.Effect<ReadonlyArray<unknown>, Schema.SchemaError> => {
  const out: Array<unknown> = new Array(messages.length)
  const slow: Array<number> = []
  for (let i = 0; i < messages.length; i++) {
    const plain = plainMessage(messages[i])
    if (plain === undefined) slow.push(i)
    else out[i] = plain
  }
  if (slow.length === 0) return Effect.succeed(out)
  return Effect.as(
    Effect.forEach(slow, (i) =>
      Effect.map(encodeMessageSlowly(messages[i]), (encoded) => {
        out[i] = encoded
      }), { discard: true }),
    out
  )
}

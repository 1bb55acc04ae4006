/**
 * Encoding a chain document's fields besides its messages, fast: the
 * Schema's encoding of them costs ~3 µs, while the loop's usual values have
 * known shapes (tool calls, stored results, a response with its usage,
 * counters, empty mode state and context) whose encoded form is a plain
 * copy of the declared fields. Any value outside those shapes (call states,
 * a mode state or context with entries, a field of another type) makes
 * {@link plainRest} give up, and the caller uses the Schema, which encodes
 * it or says what is wrong.
 *
 * Fields are written in the Schema's order; a field the Schema leaves out
 * when absent is left out, one present (even `undefined`, where the Schema
 * allows it) is written. A property test checks that this and the Schema's
 * encoding agree.
 *
 * @internal
 */
import * as Response from "effect/ai/Response"
import { FailureOrigin } from "../ToolCall.ts"
import type { Document } from "./chainDocument.ts"

type Rest = typeof Document.Type
type Encoded = typeof Document.Encoded
type CallEncoded = Encoded["pendingToolCalls"][number]
type ResultEncoded = { -readonly [K in keyof Encoded["lastToolResults"][number]]: Encoded["lastToolResults"][number][K] }
type ResponseEncoded = NonNullable<Encoded["lastResponse"]>
type UsageEncoded = NonNullable<ResponseEncoded["usage"]>

/** What stands for "not one of the known shapes": the Schema encodes it. */
const unknownShape: unique symbol = Symbol("unknownShape")
type Copy<A> = A | typeof unknownShape

/** What `Schema.Int` accepts: a number that is a safe integer. */
const isInt = (value: unknown): value is number => Number.isSafeInteger(value)
/** What the document's counts (`Count`) accept. */
const isCount = (value: unknown): value is number => isInt(value) && value >= 0
/** Membership in a literal union (what its Schema accepts). */
const oneOf = <L extends string>(literals: ReadonlyArray<L>) => {
  const set: ReadonlySet<unknown> = new Set(literals)
  return (value: unknown): value is L => set.has(value)
}
const isFinishReason = oneOf(Response.FinishReason.literals)
const isFailureOrigin = oneOf(FailureOrigin.literals)

const isPlain = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

/** Every item copied by `copy`, or the first item it cannot copy. */
const copyAll = <A>(items: unknown, copy: (item: unknown) => Copy<A>): Copy<Array<A>> => {
  if (!Array.isArray(items)) return unknownShape
  const out: Array<A> = new Array(items.length)
  for (let i = 0; i < items.length; i++) {
    const item = copy(items[i])
    if (item === unknownShape) return unknownShape
    out[i] = item
  }
  return out
}

// Each field is read once, then checked: a getter cannot pass the check with one value and be copied with another.
const toolCall = (call: unknown): Copy<CallEncoded> => {
  if (!isPlain(call) || !Object.hasOwn(call, "params")) return unknownShape
  const { id, name, params } = call
  return typeof id === "string" && typeof name === "string" && params !== undefined ? { id, name, params } : unknownShape
}

const optionalFlags = ["rejected", "directReturn"] as const

/** A tool result as stored (`encoded` may be left out) or as in `roundResults` (`encoded` required). */
const result = (encodedRequired: boolean) => (value: unknown): Copy<ResultEncoded> => {
  if (!isPlain(value)) return unknownShape
  const { id, isFailure, name } = value
  if (typeof id !== "string" || typeof name !== "string" || typeof isFailure !== "boolean") return unknownShape
  const out: ResultEncoded = { id, name, isFailure }
  if (Object.hasOwn(value, "encoded")) out.encoded = value.encoded
  else if (encodedRequired) return unknownShape
  if (Object.hasOwn(value, "failureOrigin")) {
    const origin = value.failureOrigin
    if (!isFailureOrigin(origin)) return unknownShape
    out.failureOrigin = origin
  }
  for (const flag of optionalFlags) {
    if (!Object.hasOwn(value, flag)) continue
    const set = value[flag]
    if (typeof set !== "boolean") return unknownShape
    out[flag] = set
  }
  return out
}

const inputKeys = ["uncached", "total", "cacheRead", "cacheWrite"] as const
const outputKeys = ["total", "text", "reasoning"] as const

/** A struct of optional whole numbers: the keys present, in `keys`' order. */
const tokens = (value: unknown, keys: ReadonlyArray<string>): Copy<Record<string, unknown>> => {
  if (!isPlain(value)) return unknownShape
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    if (!Object.hasOwn(value, key)) continue
    const count = value[key]
    if (count !== undefined && !isInt(count)) return unknownShape
    out[key] = count
  }
  return out
}

const usage = (value: unknown): Copy<UsageEncoded> => {
  if (!(value instanceof Response.Usage)) return unknownShape
  const inputTokens = tokens(value.inputTokens, inputKeys)
  const outputTokens = tokens(value.outputTokens, outputKeys)
  return inputTokens === unknownShape || outputTokens === unknownShape ? unknownShape : { inputTokens, outputTokens } as UsageEncoded
}

const response = (value: unknown): Copy<ResponseEncoded> => {
  if (!isPlain(value)) return unknownShape
  const { finishReason, text } = value
  if (typeof text !== "string" || !isFinishReason(finishReason)) return unknownShape
  const toolCalls = copyAll(value.toolCalls, toolCall)
  if (toolCalls === unknownShape) return unknownShape
  if (!Object.hasOwn(value, "usage")) return { text, toolCalls, finishReason }
  const copied = usage(value.usage)
  return copied === unknownShape ? unknownShape : { text, toolCalls, finishReason, usage: copied }
}

const storedResult = result(false)
// With `encoded` required, what it copies has `encoded`.
const roundResult = result(true) as (value: unknown) => Copy<NonNullable<Encoded["roundResults"]>[number]>

/** A mode state or context with no entries (one with entries goes through the Schema's JSON check). */
const emptyRecord = (value: unknown): Copy<Record<string, never>> =>
  isPlain(value) && Reflect.ownKeys(value).length === 0 ? {} : unknownShape

/** The lists and records of `rest`, copied, or `undefined` when one of them is not of a known shape. */
const copiedParts = (rest: Rest) => {
  const lastResponse = rest.lastResponse === undefined ? undefined : response(rest.lastResponse)
  const pendingToolCalls = copyAll(rest.pendingToolCalls, toolCall)
  const lastToolResults = copyAll(rest.lastToolResults, storedResult)
  const roundResults = rest.roundResults === undefined ? undefined : copyAll(rest.roundResults, roundResult)
  const modeState = emptyRecord(rest.modeState)
  const context = emptyRecord(rest.context)
  return lastResponse === unknownShape || pendingToolCalls === unknownShape || lastToolResults === unknownShape ||
      roundResults === unknownShape || modeState === unknownShape || context === unknownShape
    ? undefined
    : { lastResponse, pendingToolCalls, lastToolResults, roundResults, modeState, context }
}

/** The plain copy of `rest`, or `undefined` when a value is not of a known shape. */
const copied = (rest: Rest): Encoded | undefined => {
  if (
    rest.messages.length > 0 || rest.callStates !== undefined || rest.signature !== undefined || !isCount(rest.runCount) ||
    !isCount(rest.failureCount)
  ) return undefined
  const parts = copiedParts(rest)
  if (parts === undefined) return undefined
  return {
    format: rest.format,
    version: rest.version,
    messages: [],
    ...(parts.lastResponse === undefined ? {} : { lastResponse: parts.lastResponse }),
    pendingToolCalls: parts.pendingToolCalls,
    lastToolResults: parts.lastToolResults,
    ...(parts.roundResults === undefined ? {} : { roundResults: parts.roundResults }),
    runCount: rest.runCount,
    failureCount: rest.failureCount,
    modeState: parts.modeState,
    context: parts.context
  }
}

/**
 * `rest` (a document without messages, as `Chain.encode` builds it: no
 * signature, and a present optional field is never `undefined`) encoded as
 * the Schema encodes it, or `undefined` when a value is not of a known shape.
 *
 * @internal
 */
export const plainRest = (rest: Rest): Encoded | undefined => {
  try {
    return copied(rest)
  } catch {
    // A value that cannot be read (a getter that throws, a revoked proxy, from JavaScript): the Schema says what is wrong.
    return undefined
  }
}

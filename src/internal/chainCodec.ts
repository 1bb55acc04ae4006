/**
 * A chain as a versioned JSON document and back: `encode` and `decode`,
 * signing, and the checks that a stored document cannot grant what its
 * transcript does not show (the document's Schema is in `chainDocument.ts`).
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Tool from "effect/ai/Tool"
import { holdsNegativeZero } from "./canonicalJson.ts"
import { inconsistency } from "./consistency.ts"
import * as JsonBounds from "./jsonBounds.ts"
import * as MessageCodec from "./messageCodec.ts"
import { plainRest } from "./documentRest.ts"
import { checkObject, isToolkit, readably } from "./checks.ts"
import * as Signature from "./signature.ts"
import { signatureProblem, unsignedApproval } from "./documentTrust.ts"
import { type ToolResult, ToolResultEncoded } from "../ToolCall.ts"
import { Chain, emptyToolkit } from "./chain.ts"
import {
ChainCodecError,
Document,
type EncodeOptions,
formatVersion,
type SigningKey,
StoredResult
} from "./chainDocument.ts"
import { chainProblem } from "./chainInput.ts"
import { shortJson, thrownMessage } from "./errorText.ts"
import { checkEnvelope, decodeFailure, documentLimits } from "./documentEnvelope.ts"


const encodeDocument = Schema.encodeEffect(Document)

const noResults: ReadonlyMap<string, unknown> = new Map()

/** The last tool message's results by id (where the last round's results are written). */
const lastToolMessageResults = (messages: ReadonlyArray<Prompt.Message>): ReadonlyMap<string, unknown> => {
  const results = new Map<string, unknown>()
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role !== "tool") continue
    for (const part of message.content) if (part.type === "tool-result") results.set(part.id, part.result)
    break
  }
  return results
}

const encodeResult = (result: ToolResult): typeof ToolResultEncoded.Type => ({
  id: result.id,
  name: result.name,
  isFailure: result.isFailure,
  encoded: result.encoded,
  ...(result.failureOrigin === undefined ? {} : { failureOrigin: result.failureOrigin }),
  ...(result.rejected === true ? { rejected: true } : {}),
  ...(result.directReturn === true ? { directReturn: true } : {})
})

/** A last-round result, without its value when the transcript's tool message holds the same one. */
const storeResult = (result: ToolResult, written: ReadonlyMap<string, unknown>): typeof StoredResult.Type => {
  const full = encodeResult(result)
  if (written.get(result.id) !== result.encoded || !written.has(result.id)) return full
  const { encoded: _, ...stored } = full
  return stored
}

const decodeDocument = Schema.decodeUnknownEffect(Document)

/**
 * Turns a chain into a JSON-safe document (`JSON.stringify` it to store).
 * The toolkit is not included. The document's keys come in a fixed order,
 * so a chain read back with {@link decode} encodes to the same text. With
 * `signingKey`, the document carries an HMAC-SHA-256 `signature`. A value
 * that is not a chain, a chain made from bad input (see {@link make}), or
 * options that are not an object fail with a `ChainCodecError` naming the
 * field.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain } from "loopwork"
 *
 * const json = Chain.encode(Chain.make({ user: "Hi" })).pipe(Effect.map(JSON.stringify))
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const encode = (chain: Chain, options?: EncodeOptions): Effect.Effect<typeof Document.Encoded, ChainCodecError> => {
  let signingKey: EncodeOptions["signingKey"]
  const invalid = chainProblem(chain, false) ?? readably("options", () => {
    signingKey = options?.signingKey
    return checkObject(options, "options", true)
  })
  if (invalid !== undefined) return Effect.fail(new ChainCodecError({ operation: "encode", reason: invalid.message }))
  if (signingKey !== undefined) {
    const problem = Signature.keyProblem(signingKey)
    if (problem !== undefined) return Effect.fail(new ChainCodecError({ operation: "encode", reason: problem }))
  }
  const encoded = Effect.zipWith(
    Effect.suspend(() => MessageCodec.encodeMessages(chain.messages, documentLimits)),
    Effect.suspend(() => encodeRest(chain)),
    (messages, rest) => ({ document: { ...rest, messages: messages.messages as typeof Document.Encoded["messages"] }, messages, rest })
  ).pipe(
    Effect.mapError((error) => new ChainCodecError({ operation: "encode", reason: error.message })),
    Effect.flatMap(({ document, messages, rest }) => {
      // The rest's bound (its messages are []) and the messages' add up to the whole's, measured once
      // both are encoded (every getter they read has run): within the limit, nothing more to measure;
      // past it, or not known, the whole document is checked.
      const restBound = JsonBounds.bound(rest, documentLimits)
      const problem = typeof restBound === "number" && restBound + messages.bound() <= documentLimits.maxSize
        ? undefined
        : JsonBounds.check(document, documentLimits)
      return problem === undefined ? Effect.succeed(document) : Effect.fail(
        new ChainCodecError({
          operation: "encode",
          reason: `the chain holds a value that cannot be stored as JSON: the document is ${JsonBounds.describe(problem)}`
        })
      )
    })
  )
  const key = signingKey
  const signed = key === undefined ? encoded : Effect.map(encoded, (document) => {
    // Signed as stored: a -0 (a model may send one) is the 0 that JSON.stringify writes, so the
    // document kept as an object verifies as its JSON text does.
    const stored = holdsNegativeZero(document) ? JSON.parse(JSON.stringify(document)) as typeof document : document
    return { ...stored, signature: Signature.sign(stored, key) }
  })
  // A JavaScript caller's value whose getter throws (effect's Schema dies on it).
  return Effect.catchDefect(signed, (defect) =>
    Effect.fail(new ChainCodecError({ operation: "encode", reason: `the chain holds a value that cannot be read (${thrownMessage(defect)})` })))
}

/** Everything but the messages: a plain copy for the usual shapes (./documentRest.ts), the Schema otherwise. */
const encodeRest = (chain: Chain) => {
  const written = chain.lastToolResults.length === 0 ? noResults : lastToolMessageResults(chain.messages)
  const rest: typeof Document.Type = {
    format: "loopwork/chain",
    version: formatVersion,
    messages: [],
    ...(chain.lastResponse === undefined ? {} : { lastResponse: chain.lastResponse }),
    pendingToolCalls: chain.pendingToolCalls,
    lastToolResults: chain.lastToolResults.map((result) => storeResult(result, written)),
    ...(chain.roundResults.length === 0 ? {} : { roundResults: chain.roundResults.map(encodeResult) }),
    ...(chain.callStates.size === 0 ? {} : { callStates: recordOf(chain.callStates) }),
    runCount: chain.runCount,
    failureCount: chain.failureCount,
    modeState: chain.modeState,
    context: chain.context
  }
  const plain = plainRest(rest)
  return plain === undefined ? encodeDocument(rest) : Effect.succeed(plain)
}

/** A map as a null-prototype record (any id is a safe key). */
const recordOf = <A>(map: ReadonlyMap<string, A>): Record<string, A> => {
  const record: Record<string, A> = Object.create(null)
  for (const [key, value] of map) record[key] = value
  return record
}


const decodeResult = (toolkit: Toolkit.Any, encoded: typeof ToolResultEncoded.Type): Effect.Effect<ToolResult> => {
  const tool = Object.hasOwn(toolkit.tools, encoded.name) ? toolkit.tools[encoded.name] : undefined
  const base = { ...encoded, result: encoded.encoded }
  if (tool === undefined || encoded.isFailure || encoded.rejected === true) return Effect.succeed(base)
  return Schema.decodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown>)(encoded.encoded).pipe(
    Effect.map((result): ToolResult => ({ ...base, result })),
    Effect.orElseSucceed(() => base)
  )
}

/** The last round's results with their `encoded` value, taken from the transcript where it was left out. */
const restoreResults = (
  document: typeof Document.Type
): ReadonlyArray<typeof ToolResultEncoded.Type> | string => {
  const written = lastToolMessageResults(document.messages)
  const restored: Array<typeof ToolResultEncoded.Type> = []
  for (const result of document.lastToolResults) {
    if (Object.hasOwn(result, "encoded")) {
      restored.push(result as typeof ToolResultEncoded.Type)
      continue
    }
    if (document.version === 1 || !written.has(result.id)) {
      return `the last round's result for ${shortJson(result.id)} has no value, and the last tool message holds none`
    }
    restored.push({ ...result, encoded: written.get(result.id) })
  }
  return restored
}

/**
 * Options of {@link decode}.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const options: Chain.DecodeOptions<{}> = { signingKey: Redacted.make("a secret of at least thirty-two bytes!") }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface DecodeOptions<Tools extends Record<string, Tool.Any>> {
  /** The chain's toolkit (needed when calls wait on its tools). */
  readonly toolkit?: Toolkit.Toolkit<Tools> | undefined
  /** Refuses a document that is not signed with this key, or was changed after signing. */
  readonly signingKey?: SigningKey | undefined
  /**
   * Honours approvals (`Approved` call states) in a document read without
   * `signingKey`. Off by default: whoever can write where an unsigned
   * document is kept could have approved a call in it, so such a document is
   * refused. Set it only when nothing but your own service can write there.
   */
  readonly trustUnsignedApprovals?: boolean | undefined
}

/** `options` read once, or why they cannot be (a JavaScript caller's may be anything). */
const decodeOptions = <Tools extends Record<string, Tool.Any>>(
  options: DecodeOptions<Tools> | undefined
): DecodeOptions<Tools> | string => {
  // A JavaScript caller's `decode(text, "key")` must not skip the signature check silently.
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return "the options must be an object ({ toolkit, signingKey })"
  }
  let given: DecodeOptions<Tools>
  try {
    given = { signingKey: options?.signingKey, toolkit: options?.toolkit, trustUnsignedApprovals: options?.trustUnsignedApprovals }
  } catch (error) {
    return `the options cannot be read (${thrownMessage(error)})`
  }
  const trust: unknown = given.trustUnsignedApprovals
  return trust === undefined || typeof trust === "boolean"
    ? given
    : `the trustUnsignedApprovals option must be true or false (got ${shortJson(trust)})`
}

/**
 * Reads a chain back from a document written by {@link encode} (or its JSON
 * text) and re-attaches the toolkit. A stored document is untrusted input,
 * so decoding fails with a `ChainCodecError` that says what is wrong when the
 * document is corrupted, truncated, of another version, nested too deep, or
 * contradicts itself: pending calls, open-round results or call states for
 * calls the last assistant message did not make, arguments that differ from
 * the transcript, states for calls that are not pending, counters the
 * transcript does not bear out. With `signingKey`, a document that is not
 * signed with that key, or was changed since, is refused; without it, a
 * document that approves a call is refused unless `trustUnsignedApprovals`
 * is set (an approval is a human's decision, which only a signature shows).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain } from "loopwork"
 *
 * const roundTrip = Chain.encode(Chain.make({ user: "Hi" })).pipe(
 *   Effect.flatMap((document) => Chain.decode(JSON.stringify(document)))
 * )
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const decode = <Tools extends Record<string, Tool.Any> = {}>(
  input: unknown,
  options?: DecodeOptions<Tools>
): Effect.Effect<Chain<Tools>, ChainCodecError> =>
  Effect.gen(function*() {
    const given = decodeOptions(options)
    if (typeof given === "string") return yield* decodeFailure(given)
    const envelope = yield* checkEnvelope(input).pipe(Effect.flatMap((document) => {
      const problem = signatureProblem(document, given.signingKey)
      return problem === undefined ? Effect.succeed(document) : Effect.fail(decodeFailure(problem))
    }))
    const document = yield* decodeDocument(envelope).pipe(
      Effect.mapError((error) => decodeFailure(error.message))
    )
    const toolkit: Toolkit.Any = given.toolkit ?? emptyToolkit
    if (!isToolkit(toolkit)) {
      return yield* decodeFailure("the toolkit option must be a Toolkit (Toolkit.make(...))")
    }
    const states = document.callStates ?? {}
    // Calls a human decided on, or that wait for one, must find their tool again.
    const missing = new Set<string>()
    try {
      Object.keys(toolkit.tools)
      for (const call of document.pendingToolCalls) {
        if (Object.hasOwn(states, call.id) && !Object.hasOwn(toolkit.tools, call.name)) missing.add(call.name)
      }
    } catch {
      // Its tools cannot be read (a revoked Proxy, from JavaScript): no toolkit to find them in.
      return yield* decodeFailure("the toolkit option must be a Toolkit (Toolkit.make(...)) whose tools can be read")
    }
    if (missing.size > 0) {
      return yield* decodeFailure(
        `the chain has tool calls waiting on tools the toolkit does not have (${
          [...missing].join(", ")
        }); pass the chain's toolkit: Chain.decode(json, { toolkit })`
      )
    }
    const inconsistent = inconsistency(document, toolkit)
    if (inconsistent !== undefined) return yield* decodeFailure(`the document contradicts itself: ${inconsistent}`)
    const ungranted = given.signingKey === undefined && given.trustUnsignedApprovals !== true
      ? unsignedApproval(states, document.pendingToolCalls, toolkit)
      : undefined
    if (ungranted !== undefined) return yield* decodeFailure(ungranted)
    const stored = restoreResults(document)
    if (typeof stored === "string") return yield* decodeFailure(stored)
    const lastToolResults = yield* Effect.forEach(stored, (result) => decodeResult(toolkit, result))
    // A round result whose `encoded` was undefined (a tool returning nothing) comes back without it.
    const roundResults = yield* Effect.forEach(document.roundResults ?? [], (result) => decodeResult(toolkit, { ...result, encoded: result.encoded }))
    return new Chain<Tools>({
      messages: document.messages,
      toolkit,
      lastResponse: document.lastResponse,
      pendingToolCalls: document.pendingToolCalls,
      lastToolResults,
      roundResults,
      callStates: new Map(Object.entries(states)),
      runCount: document.runCount,
      failureCount: document.failureCount,
      modeState: document.modeState,
      context: document.context
    })
  })

/**
 * A chain's JSON document: its Schema (format and version), the codec's error,
 * and the signing options. `chainCodec.ts` turns chains into documents and
 * back.
 *
 * @internal
 */
import { Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import { CallState, ToolCall, ToolResultEncoded } from "../ToolCall.ts"
import { ModelResponse } from "./chain.ts"
import { redactSecrets } from "./redact.ts"
import type * as Signature from "./signature.ts"

/**
 * The format version `encode` writes. `decode` reads it and version 1 (the
 * same document, with every last-round result stored in full).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.formatVersion // 2
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const formatVersion = 2

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A last-round result as stored: without `encoded` when the transcript's tool message holds it. */
/** @internal */
export const StoredResult = Schema.Struct({
  ...ToolResultEncoded.fields,
  encoded: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "StoredToolResult" })

/**
 * A result of a paused round as stored. Its `encoded` value is written
 * even when `undefined` (a tool whose success is `Schema.Void`), which JSON
 * then leaves out, so a document read back may not have it.
 *
 * @internal
 */
export const RoundResult = Schema.Struct({
  ...ToolResultEncoded.fields,
  encoded: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "RoundToolResult" })

/**
 * The JSON document of a chain (version {@link formatVersion}). A result of
 * the last tool round is stored once: its `encoded` value is left out when
 * the transcript's tool message holds the same value. `signature` is there
 * when the document was signed (`encode(chain, { signingKey })`).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * type Stored = typeof Chain.Document.Encoded
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Document = Schema.Struct({
  format: Schema.Literal("loopwork/chain"),
  version: Schema.Literals([1, formatVersion]),
  messages: Schema.Array(Prompt.Message),
  lastResponse: Schema.optionalKey(ModelResponse),
  pendingToolCalls: Schema.Array(ToolCall),
  lastToolResults: Schema.Array(StoredResult),
  roundResults: Schema.optionalKey(Schema.Array(RoundResult)),
  callStates: Schema.optionalKey(Schema.Record(Schema.String, CallState)),
  runCount: Count,
  failureCount: Count,
  modeState: Schema.Record(Schema.String, Schema.Json),
  context: Schema.Record(Schema.String, Schema.Json),
  signature: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ChainDocument" })

/**
 * Encoding or decoding a chain failed; `reason` says what is wrong.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * new Chain.ChainCodecError({ operation: "decode", reason: "not JSON" }).message
 * // "Cannot decode chain: not JSON"
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class ChainCodecError extends Schema.TaggedError<ChainCodecError>()("ChainCodecError", {
  operation: Schema.Literals(["encode", "decode"]),
  reason: Schema.String
}) {
  override get message(): string {
    // The reason may quote the document (a wrong format or version, V8's JSON error): credentials redacted.
    return redactSecrets(`Cannot ${this.operation} chain: ${this.reason}`)
  }
}

/**
 * A key that signs a chain's document (HMAC-SHA-256): a secret of at least
 * 32 bytes, as a `Redacted` string (its UTF-8 bytes) or `Uint8Array`. Keep
 * it where the documents are not (a secret manager, an environment
 * variable), never next to them.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const signingKey: Chain.SigningKey = Redacted.make(process.env.CHAIN_SIGNING_KEY ?? "")
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type SigningKey = Signature.Key

/**
 * Options of {@link encode}.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const options: Chain.EncodeOptions = { signingKey: Redacted.make("a secret of at least thirty-two bytes!") }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface EncodeOptions {
  /** Signs the document; `decode` with the same key refuses any change to it. */
  readonly signingKey?: SigningKey | undefined
}


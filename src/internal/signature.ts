/**
 * Signing a chain's document with HMAC-SHA-256 (Node's `crypto`, also in
 * Deno, Bun and edge runtimes with Node compatibility) and checking a
 * signature in constant time.
 *
 * The signature covers the document's canonical JSON: keys sorted at every
 * level, no whitespace, numbers as `JSON.stringify` writes them. A store that
 * reorders keys (PostgreSQL `jsonb`) keeps the signature valid; any change of
 * a value breaks it, `0` to `-0` included.
 *
 * @internal
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Redacted } from "effect"
import { canonical } from "./canonicalJson.ts"

/** @internal the prefix of every signature this module writes */
export const scheme = "hmac-sha256:"

/** @internal the shortest key accepted (bytes) */
export const minKeyBytes = 32

/**
 * A signing key: a secret of at least 32 bytes (a string is taken as its
 * UTF-8 bytes), wrapped in `Redacted` so it never prints.
 *
 * @internal
 */
export type Key = Redacted.Redacted<string | Uint8Array>

const bytesOf = (key: Key): Uint8Array => {
  const secret = Redacted.value(key)
  return typeof secret === "string" ? new TextEncoder().encode(secret) : secret
}

/**
 * Why `key` cannot sign, or `undefined` when it can.
 *
 * @internal
 */
export const keyProblem = (key: unknown): string | undefined => {
  const notAKey = "the signing key must be a Redacted string or Uint8Array (Redacted.make(secret))"
  try {
    if (!Redacted.isRedacted(key)) return notAKey
    const secret = Redacted.value(key)
    if (typeof secret !== "string" && !(secret instanceof Uint8Array)) return notAKey
  } catch {
    // A revoked Proxy or a getter that throws, from JavaScript.
    return notAKey
  }
  const length = bytesOf(key as Key).length
  return length < minKeyBytes ? `the signing key has ${length} bytes; use at least ${minKeyBytes} random bytes` : undefined
}

/** The HMAC of `document`'s canonical JSON, its `-0`s written as `negativeZero` (see `canonical`). */
const signatureOf = (document: object, key: Key, negativeZero: "0" | "-0"): Buffer =>
  createHmac("sha256", bytesOf(key)).update(canonical(document, negativeZero), "utf8").digest()

/**
 * The signature of `document` (without its `signature` field).
 *
 * @internal
 */
export const sign = (document: object, key: Key): string => scheme + signatureOf(document, key, "0").toString("base64url")

/**
 * Whether `signature` is `document`'s signature under `key` (compared in
 * constant time). A document read back holds `-0` only if someone wrote it
 * by hand (`JSON.stringify` writes `0`): it does not verify.
 *
 * @internal
 */
export const verify = (document: object, signature: unknown, key: Key): boolean => {
  if (typeof signature !== "string" || !signature.startsWith(scheme)) return false
  const encoded = signature.slice(scheme.length)
  if (!/^[A-Za-z0-9_-]{43}$/.test(encoded)) return false
  // Compared as written: 43 characters carry 2 bits more than the 32 bytes, which decoding drops, so
  // comparing the bytes would let four spellings of one signature verify.
  return timingSafeEqual(Buffer.from(encoded), Buffer.from(signatureOf(document, key, "-0").toString("base64url")))
}

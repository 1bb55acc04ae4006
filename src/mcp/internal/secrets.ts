/**
 * What of a transport must never leave the adapter: a server's error, its
 * failed result, or a description it sends may quote the URL it was reached
 * at (effect's transport errors do) or echo a header it was sent, and those
 * texts go to the model provider and into the stored transcript. Pattern
 * redaction does not know a token in `?key=` or in a path segment, so the
 * adapter replaces what it was given itself.
 *
 * @internal
 */
import { Redacted } from "effect"
import type { Transport } from "../McpTransport.ts"

/**
 * The replacements of one connection, longest first: a text found in a
 * message is replaced by what it maps to.
 *
 * @internal
 */
export type Secrets = ReadonlyArray<readonly [secret: string, shown: string]>

/** @internal the secrets of a client the caller built (none known) */
export const noSecrets: Secrets = []

/**
 * A query value or a whole header value this long may be a credential; a
 * path segment, or a word of a header ("Bearer <token>"), only when it is as
 * long as a token is (shorter ones are words: "search", "server").
 */
const minValue = 6
const minToken = 16

const redacted = "[REDACTED]"

/** `url` with its user info, long path segments and query values masked. */
const safeUrl = (url: URL): string => {
  const path = url.pathname.split("/").map((segment) => segment.length >= minToken ? redacted : segment).join("/")
  const query = [...url.searchParams.keys()].map((key) => `${key}=${redacted}`).join("&")
  return `${url.protocol}//${url.host}${path}${query === "" ? "" : `?${query}`}`
}

/** The parts of `given` (a URL) that must not be shown, each with what to show instead. */
const urlSecrets = (given: string): Array<readonly [string, string]> => {
  if (!URL.canParse(given)) return [[given, redacted]]
  const url = new URL(given)
  const pairs: Array<readonly [string, string]> = [[given, safeUrl(url)], [url.href, safeUrl(url)]]
  const parts = [
    ...[url.username, url.password, ...url.searchParams.values()].filter((part) => part.length >= minValue),
    ...url.pathname.split("/").filter((segment) => segment.length >= minToken)
  ]
  for (const part of parts) pairs.push([part, redacted], [encodeURIComponent(part), redacted])
  return pairs
}

/**
 * @internal the secrets of `transport`: for HTTP, its URL's and every
 * header value; a stdio server's environment is its own and never quoted
 * by the adapter
 */
export const secretsOf = (transport: Transport): Secrets => {
  if (transport._tag !== "Http") return noSecrets
  const pairs = urlSecrets(transport.url)
  for (const value of Object.values(transport.headers)) {
    const text = Redacted.isRedacted(value) ? Redacted.value(value) : value
    if (typeof text !== "string") continue
    // A header is a secret as a whole and in its parts ("Bearer <token>").
    if (text.length >= minValue) pairs.push([text, redacted])
    for (const part of text.split(/\s+/)) if (part.length >= minToken) pairs.push([part, redacted])
  }
  return pairs.sort((a, b) => b[0].length - a[0].length)
}

/** @internal `text` with every secret of the connection replaced */
export const scrub = (text: string, secrets: Secrets): string => {
  let out = text
  for (const [secret, shown] of secrets) if (out.includes(secret)) out = out.split(secret).join(shown)
  return out
}

/**
 * Credential-looking strings out of the text the library writes: error
 * messages, event messages, span statuses, log lines.
 *
 * Every pattern starts at a fixed literal (`sk-`, `AKIA`, `Bearer`, a key
 * name, …) that may only begin where a token begins (a lookbehind rejects
 * every position inside a run of token characters), and consumes the whole
 * token without backtracking into it. A run of token characters is therefore
 * scanned a bounded number of times, and the cost is linear in the length of
 * the text; the text is also cut to {@link maxLength} characters first.
 *
 * @internal
 */

/**
 * The most characters of a text that are kept (and scanned); the rest is
 * replaced by a note of how many characters were left out.
 *
 * @internal
 */
export const maxLength = 65_536

/** What stands in for a secret. */
export const mask = "[REDACTED]"

/** What a text that could not be checked becomes. */
export const withheld = "[text withheld: it could not be checked for secrets]"

/** A cheap first look: no credential pattern can match a text this does not match. */
const maybe =
  /sk-|AKIA|ASIA|AIza|gh[pousr]_|github_pat_|xox[abposr]-|eyJ|bearer|key|secret|passw|token|authori[sz]ation|credential|:\/\/|PRIVATE KEY/i

/** A token begins here: the character before is not a token character. */
const start = String.raw`(?<![A-Za-z0-9_.-])`

/** PEM private keys, the whole block. */
const privateKey = /-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----[^-]*(?:-----END[A-Z ]{0,40}PRIVATE KEY-----)?/g

/** `scheme://user:password@host`: the user and password. */
const urlCredentials = /(?<=:\/\/)[^\s/?#@:"'<>]{1,256}:[^\s/?#@"'<>]{1,256}(?=@)/g

/**
 * `name: value` and `name=value` pairs whose name says the value is a secret,
 * as JSON (`"api_key": "…"`), a query string (`?api_key=…&`), a header
 * (`x-api-key: …`, `Authorization: Bearer …`) or an environment line
 * (`OPENAI_API_KEY=…`). Groups: name, separator, scheme, quoted value or bare value.
 * A value already redacted is matched as it is, so redacting twice changes nothing.
 */
const pair = new RegExp(
  start +
    String.raw`([A-Za-z0-9_.-]{0,40}?(?:api[_.-]?key|apikey|access[_.-]?key|secret[_.-]?key|private[_.-]?key|secret|password|passwd|token|authori[sz]ation|credentials?)(?![A-Za-z0-9_-]))` +
    String.raw`(["']?\s{0,3}[:=]\s{0,3})` +
    String.raw`((?:bearer|basic|digest|token|bot)\s{1,3})?` +
    String.raw`(?:\[REDACTED\]|("(?:[^"\\\r\n]|\\.)*"?|'[^'\r\n]*'?)|([^\s"'&,;(){}[\]<>]+))`,
  "gi"
)

/** `Bearer <token>` anywhere. Groups: the word `Bearer` (as written), the token. */
const bearer = new RegExp(start + String.raw`(bearer)\s{1,3}([A-Za-z0-9._~+/-]+=*)`, "gi")

/** Tokens recognisable by their prefix. Group 1: the prefix kept in the output. */
const prefixed: ReadonlyArray<RegExp> = [
  // OpenAI (sk-…, sk-proj-…, sk-svcacct-…) and Anthropic (sk-ant-…)
  new RegExp(start + String.raw`(sk-)[A-Za-z0-9_-]{16,}`, "g"),
  // AWS access key ids
  new RegExp(start + String.raw`(AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])`, "g"),
  // Google API keys
  new RegExp(start + String.raw`(AIza)[A-Za-z0-9_-]{30,}`, "g"),
  // GitHub tokens
  new RegExp(start + String.raw`(gh[pousr]_)[A-Za-z0-9]{20,}`, "g"),
  new RegExp(start + String.raw`(github_pat_)[A-Za-z0-9_]{20,}`, "g"),
  // Slack tokens
  new RegExp(start + String.raw`(xox[abposr]-)[A-Za-z0-9-]{10,}`, "g"),
  // JSON Web Tokens: header.payload.signature, both first parts JSON objects in base64url
  new RegExp(start + String.raw`()eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`, "g")
]

const hasDigit = /[0-9]/
const lettersOnly = /^[A-Za-z]+$/

const replacePair = (
  _match: string,
  name: string,
  separator: string,
  scheme: string | undefined,
  quoted: string | undefined
): string => {
  const quote = quoted === undefined ? "" : quoted[0]
  return `${name}${separator}${scheme ?? ""}${quote}${mask}${quote}`
}

const replaceBearer = (match: string, word: string, token: string): string =>
  // "Bearer authentication is required": a plain word is not a token.
  lettersOnly.test(token) && token.length < 20 ? match : `${word} ${mask}`

const replacePrefixed = (match: string, prefix: string): string =>
  // "sk-learn-compatible-estimators": words joined by dashes are not a key.
  prefix === "sk-" && !hasDigit.test(match) && match.length < 40 ? match : `${prefix}${mask}`

/**
 * `text` with credential-looking substrings replaced, without the length
 * bound. Linear in the length of `text`.
 *
 * @internal
 */
export const redactUnbounded = (text: string): string => {
  if (!maybe.test(text)) return text
  let out = text.replace(privateKey, "[REDACTED PRIVATE KEY]")
  out = out.replace(urlCredentials, mask)
  out = out.replace(pair, replacePair)
  out = out.replace(bearer, replaceBearer)
  for (const pattern of prefixed) out = out.replace(pattern, replacePrefixed)
  return out
}

/**
 * `text` with credential-looking substrings replaced by `[REDACTED]`, cut to
 * {@link maxLength} characters. Never throws.
 *
 * @internal
 */
export const redactSecrets = (text: string): string => {
  try {
    // The slack lets a text this function has already cut (its note included) through uncut again.
    return text.length <= maxLength + 64
      ? redactUnbounded(text)
      : `${redactUnbounded(text.slice(0, maxLength))}… (${text.length - maxLength} more characters not shown)`
  } catch {
    // Never reached by the patterns above; should the engine still give up, nothing unchecked goes out.
    return withheld
  }
}

/**
 * Text for a log line the library writes: credentials redacted, or, when
 * content is omitted (`Privacy.OmitContent`), only how long it was.
 *
 * @internal
 */
export const forLog = (text: string, omitContent: boolean): string =>
  omitContent ? `(${text.length} characters, omitted)` : redactSecrets(text)

/**
 * @internal `text` for a message that quotes it: credentials redacted, then
 * cut to `max` characters with `…` (in that order: the head of a cut key no
 * longer looks like one, so a redaction after the cut would miss it)
 */
export const redactedShort = (text: string, max: number): string => {
  const safe = redactSecrets(text)
  return safe.length > max ? `${safe.slice(0, max)}…` : safe
}

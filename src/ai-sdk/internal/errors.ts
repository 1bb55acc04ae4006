/**
 * The failures of the AI SDK bridge: what a provider call threw or streamed
 * as a `LoopError.ModelCallFailed` (message, HTTP status, retry-after,
 * retryable), with credentials redacted from the provider's error; requests
 * that cannot be built (not retried); timeouts and unfinished streams.
 * `AiSdkModel` re-exports `failureOf` and `retryAfterMillis`.
 *
 * @internal
 */
import { Duration } from "effect"
import { describe, isError, messageOf, safeString } from "../../internal/describe.ts"
import { redactSecrets } from "../../internal/redact.ts"
import { ModelCallFailed } from "../../LoopError.ts"

/**
 * @internal how long the headers ask to wait, in milliseconds (public,
 * documented, as `AiSdkModel.retryAfterMillis`)
 */
export const retryAfterMillis = (headers: Record<string, string> | undefined, now: number): number | undefined => {
  if (headers === undefined) return undefined
  const ms = Number.parseFloat(header(headers, "retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return ms
  const after = header(headers, "retry-after")
  if (after === undefined) return undefined
  const seconds = Number.parseFloat(after)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** A header the response has itself (never one inherited from `Object.prototype`), if it is a string. */
const header = (headers: Record<string, string>, name: string): string | undefined => {
  if (!Object.hasOwn(headers, name)) return undefined
  const value: unknown = headers[name]
  return typeof value === "string" ? value : undefined
}

/** HTTP status codes: a `statusCode` outside them (or not an integer) is left out. */
const isHttpStatus = (u: unknown): u is number => Number.isInteger(u) && (u as number) >= 100 && (u as number) <= 599

/** Stands in for a provider's message that cannot be read (a getter that throws). */
const unreadableMessage = "the provider's error (its message cannot be read)"

/**
 * What a provider's error says, each field read once (a getter may throw, or
 * answer differently a second time): an `APICallError`, or the plain error
 * object providers put in a stream's `error` part (`{ message, statusCode?,
 * isRetryable? }`). Read after {@link scrub}, so the message is redacted.
 */
const fieldsOf = (error: unknown) => {
  if ((typeof error !== "object" && typeof error !== "function") || error === null) {
    return { description: describe(error), retryable: undefined, status: undefined, headers: undefined }
  }
  const message = readOr(error, "message", unreadableMessage)
  const isRetryable = read(error, "isRetryable")
  const retryable = typeof isRetryable === "boolean" ? isRetryable : undefined
  const status = read(error, "statusCode")
  const headers = read(error, "responseHeaders")
  return {
    // An APICallError's message, or a plain error object's (providers stream those); else `describe`'s text.
    description: message === unreadableMessage || (typeof message === "string" && (retryable !== undefined || !isError(error)))
      ? message as string
      : describe(error),
    retryable,
    status: isHttpStatus(status) ? status : undefined,
    headers: typeof headers === "object" && headers !== null ? headers as Record<string, string> : undefined
  }
}

/** `retryAfterMillis` of headers that may be hostile (a getter that throws): `undefined` then. */
const safeRetryAfter = (headers: Record<string, string> | undefined): number | undefined => {
  try {
    return retryAfterMillis(headers, Date.now())
  } catch {
    return undefined
  }
}

/**
 * @internal the typed failure for anything a provider call threw or streamed,
 * the error kept as a scrubbed `cause` (public, documented, as `AiSdkModel.failureOf`).
 * Never throws: a field that cannot be read, or a `statusCode` that is not
 * an HTTP status, is left out.
 */
export const failureOf = (error: unknown): ModelCallFailed => {
  if (isModelCallFailed(error)) return error
  scrub(error)
  const { description, headers, retryable, status } = fieldsOf(error)
  // An APICallError says whether to retry; network errors, unfinished streams, unparsable responses: trying again may help.
  if (retryable === undefined) return new ModelCallFailed({ description, cause: error, retryable: true })
  const after = safeRetryAfter(headers)
  return new ModelCallFailed({
    description,
    cause: error,
    retryable,
    ...(status === undefined ? {} : { status }),
    ...(after === undefined ? {} : { retryAfterMillis: after })
  })
}

/** Whether `u` is a `ModelCallFailed` already; `false` when asking throws (a revoked proxy). */
const isModelCallFailed = (u: unknown): u is ModelCallFailed => {
  try {
    return u instanceof ModelCallFailed
  } catch {
    return false
  }
}

/** Own string properties of a provider error that may hold a credential. */
const scrubbed = ["message", "stack", "url", "responseBody"] as const

/** Own properties of a provider error that hold the request or response: readable, not printed. */
const unprinted = ["requestBodyValues", "responseBody", "responseHeaders", "data"] as const

/**
 * Redacts credentials from `error`'s own text properties and hides its
 * request and response bodies from printing, in place (the error was made
 * for this one call). Properties that cannot be changed are left as they are.
 */
const scrub = (error: unknown): void => {
  if (typeof error !== "object" || error === null) return
  for (const key of scrubbed) {
    // Read, not looked up: V8's `stack` is an accessor, and a message may be a getter.
    const value = read(error, key)
    if (typeof value !== "string") continue
    const safe = redactSecrets(value)
    if (safe === value) continue
    const enumerable = descriptorOf(error, key)?.enumerable ?? false
    redefine(error, key, { value: safe, writable: true, configurable: true, enumerable })
  }
  for (const key of unprinted) {
    const descriptor = descriptorOf(error, key)
    if (descriptor?.enumerable === true) redefine(error, key, { ...descriptor, enumerable: false })
  }
}

/** `target[key]`, or `fallback` when reading it throws (a hostile getter, a revoked proxy). */
const readOr = (target: object, key: string, fallback: unknown): unknown => {
  try {
    return Reflect.get(target, key)
  } catch {
    return fallback
  }
}

/** @internal `target[key]`, or `undefined` when reading it throws (a hostile getter, a revoked proxy) */
export const read = (target: object, key: string): unknown => readOr(target, key, undefined)

/**
 * @internal the failure of a provider response or stream part the bridge
 * cannot read (a missing field, one of the wrong type, a getter that throws);
 * not retried
 */
export const unreadable = (error: unknown): ModelCallFailed =>
  new ModelCallFailed({ description: `the provider's response cannot be read: ${messageOf(error)}`, cause: error, retryable: false })

/** `target`'s own property `key`, or `undefined` when asking throws (a revoked proxy). */
const descriptorOf = (target: object, key: string): PropertyDescriptor | undefined => {
  try {
    return Object.getOwnPropertyDescriptor(target, key)
  } catch {
    return undefined
  }
}

const redefine = (target: object, key: string, descriptor: PropertyDescriptor): void => {
  try {
    Object.defineProperty(target, key, descriptor)
  } catch {
    // a frozen or sealed error: nothing to do
  }
}

/** Whether `u` is an `Error` named one of `names`; never throws (a hostile getter, a revoked proxy). */
const isErrorNamed = (u: unknown, names: ReadonlySet<string>): u is Error => isError(u) && names.has(read(u, "name") as string)

/** Errors JavaScript throws for a value it cannot serialise (too deep, cyclic, a BigInt, …). */
const serialisationErrors: ReadonlySet<string> = new Set(["RangeError", "TypeError"])

/** The AI SDK's errors for a prompt or call options the provider refuses before sending anything. */
const refusedPromptErrors: ReadonlySet<string> = new Set([
  "AI_InvalidPromptError",
  "AI_UnsupportedFunctionalityError",
  "AI_InvalidArgumentError"
])

/** A `TypeError` from the network (`fetch failed`, a reset socket, …): trying again may help. */
const isNetworkError = (error: Error): boolean => {
  const message = read(error, "message")
  const cause = read(error, "cause")
  return (typeof message === "string" && /fetch|network|socket|terminated|connect|timed? ?out|abort/i.test(message)) ||
    (typeof cause === "object" && cause !== null && typeof read(cause, "code") === "string")
}

/**
 * @internal the failure for a request that could not be built from `prompt`:
 * our own mapping threw, or the provider threw while serialising it; not retryable
 */
export const unbuildable = (error: unknown): ModelCallFailed => {
  scrub(error)
  const what = isError(error) ? `${safeString(read(error, "name"))}: ${safeString(read(error, "message"))}` : describe(error)
  return new ModelCallFailed({
    description: isErrorNamed(error, refusedPromptErrors)
      ? `the provider refused this prompt before sending it (${what}); it is not retried, since the same ` +
        "prompt fails the same way: change the prompt or the call options"
      : `the provider request could not be built from this prompt (${what}); it is not retried, since the same ` +
        "prompt fails the same way: look in the chain for tool arguments or results that are nested too deeply, " +
        "cyclic, or hold values JSON cannot represent (a BigInt, a function)",
    cause: error,
    retryable: false
  })
}

/** @internal the failure for what `doGenerate` / `doStream` rejected with */
export const callFailureOf = (error: unknown): ModelCallFailed =>
  isErrorNamed(error, refusedPromptErrors) ||
    (isErrorNamed(error, serialisationErrors) && !isNetworkError(error))
    ? unbuildable(error)
    : failureOf(error)

/** @internal the failure of a call with `strictTools` whose tool `tool` has no strict form */
export const notStrict = (tool: string, reason: string): ModelCallFailed =>
  new ModelCallFailed({
    description: `the bridge's strictTools option sends every tool in OpenAI's strict form, and tool '${tool}' has none ` +
      `(${reason}); it is not retried: make every property of its parameters required (a nullable one where it may ` +
      "be absent) and use no records, or turn strictTools off",
    cause: undefined,
    retryable: false
  })

/** @internal the failure of a call that took longer than the bridge's `timeout` */
export const timedOut = (timeout: Duration.Duration) =>
  new ModelCallFailed({
    description: `no complete response within ${Duration.format(timeout)}; raise the bridge's timeout option or retry`,
    cause: undefined,
    retryable: true
  })

/** @internal the failure of a stream that ended without its finish part (or with an "interrupted" one) */
export const unfinished = new ModelCallFailed({
  description: "the response stream ended before its finish part; the response is incomplete",
  cause: undefined,
  retryable: true
})

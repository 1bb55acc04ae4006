/**
 * `McpTools.connect`'s options, checked (a JavaScript caller may hand
 * anything: a wrong value is an `InvalidInput` naming the option, an unknown
 * key too, since a misspelt limit would otherwise be lost) and resolved with
 * their defaults.
 *
 * @internal
 */
import { Duration, Predicate } from "effect"
import { isPositiveDuration, isPositiveInt } from "../../internal/checks.ts"
import { InvalidInput } from "../../LoopError.ts"
import type { Bounds } from "./screen.ts"

/**
 * The limits on what a server may send, with their defaults.
 *
 * @internal
 */
export interface Limits extends Bounds {
  readonly resultLength: number
  readonly messageBytes: number
}

/** @internal */
export const defaultLimits: Limits = {
  tools: 128,
  descriptionLength: 8_192,
  schemaDepth: 32,
  schemaSize: 100_000,
  resultLength: 1_000_000,
  messageBytes: 16 * 1024 * 1024
}

/**
 * The options, as a caller writes them.
 *
 * @internal
 */
export interface Options {
  readonly name?: string | undefined
  readonly version?: string | undefined
  readonly prefix?: string | undefined
  readonly include?: ReadonlyArray<string> | undefined
  readonly invalidTools?: "fail" | "skip" | undefined
  readonly protocol?: "2025-11-25" | "2026-07-28" | undefined
  readonly timeout?: Duration.Input | undefined
  readonly callTimeout?: Duration.Input | undefined
  readonly limits?: Partial<Limits> | undefined
}

/**
 * The options resolved.
 *
 * @internal
 */
export interface Resolved {
  readonly name: string
  readonly version: string
  readonly prefix: string
  readonly include: ReadonlySet<string> | undefined
  readonly invalidTools: "fail" | "skip"
  readonly protocol: "2025-11-25" | "2026-07-28"
  readonly timeout: Duration.Duration
  readonly callTimeout: Duration.Input | undefined
  readonly limits: Limits
}

type Rule = (value: unknown) => boolean

const isShortText: Rule = (u) => typeof u === "string" && u.length > 0 && u.length <= 200
const isPrefix: Rule = (u) => typeof u === "string" && /^[a-zA-Z0-9_-]{0,63}$/.test(u)
const isNames: Rule = (u) => Array.isArray(u) && u.length <= 10_000 && u.every((name) => typeof name === "string")

/** Each option: its rule and what the rule says. */
const rules: ReadonlyMap<string, readonly [Rule, string]> = new Map([
  ["name", [isShortText, "must be a non-empty string of at most 200 characters"]],
  ["version", [isShortText, "must be a non-empty string of at most 200 characters"]],
  ["prefix", [isPrefix, "must be letters, digits, '_' or '-', at most 63 of them"]],
  ["include", [isNames, "must be an array of tool names (at most 10,000)"]],
  ["invalidTools", [(u: unknown) => u === "fail" || u === "skip", "must be \"fail\" or \"skip\""]],
  ["protocol", [(u: unknown) => u === "2025-11-25" || u === "2026-07-28", "must be \"2025-11-25\" or \"2026-07-28\""]],
  ["timeout", [isPositiveDuration, "must be a positive duration (e.g. \"30 seconds\")"]],
  ["callTimeout", [isPositiveDuration, "must be a positive duration (e.g. \"30 seconds\")"]],
  ["limits", [Predicate.isObject, "must be an object of limits"]]
])

const checkLimits = (limits: object): InvalidInput | undefined => {
  for (const [key, value] of Object.entries(limits)) {
    if (!Object.hasOwn(defaultLimits, key)) {
      return new InvalidInput({ field: `limits[${JSON.stringify(key)}]`, rule: `is not a limit (${Object.keys(defaultLimits).join(", ")})`, value })
    }
    if (value !== undefined && !(isPositiveInt(value) && value <= Number.MAX_SAFE_INTEGER)) {
      return new InvalidInput({ field: `limits.${key}`, rule: "must be a positive whole number", value })
    }
  }
  return undefined
}

/**
 * The problem of `options`, if any.
 *
 * @internal
 */
export const check = (options: unknown, caller = "McpTools.connect"): InvalidInput | undefined => {
  if (options === undefined) return undefined
  if (!Predicate.isObject(options)) {
    return new InvalidInput({ field: `${caller} options`, rule: "must be an object", value: options })
  }
  for (const [key, value] of Object.entries(options)) {
    const rule = rules.get(key)
    if (rule === undefined) {
      return new InvalidInput({ field: `${caller} options[${JSON.stringify(key)}]`, rule: "is not an option", value })
    }
    if (value !== undefined && !rule[0](value)) return new InvalidInput({ field: key, rule: rule[1], value })
  }
  const limits = (options as Options).limits
  return limits === undefined ? undefined : checkLimits(limits)
}

/** `limits` over the defaults (absent keys keep theirs). */
const limitsOf = (limits: Partial<Limits> | undefined): Limits => {
  if (limits === undefined) return defaultLimits
  const out: { -readonly [K in keyof Limits]: Limits[K] } = { ...defaultLimits }
  for (const key of Object.keys(defaultLimits) as Array<keyof Limits>) {
    const value = limits[key]
    if (value !== undefined) out[key] = value
  }
  return out
}

/**
 * Checked `options` with their defaults.
 *
 * @internal
 */
export const resolve = (options: Options | undefined, defaultTimeout: Duration.Duration): Resolved => ({
  name: options?.name ?? "loopwork",
  version: options?.version ?? "0.2.0",
  prefix: options?.prefix ?? "",
  include: options?.include === undefined ? undefined : new Set(options.include),
  invalidTools: options?.invalidTools ?? "fail",
  protocol: options?.protocol ?? "2025-11-25",
  timeout: options?.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(options.timeout),
  callTimeout: options?.callTimeout,
  limits: limitsOf(options?.limits)
})

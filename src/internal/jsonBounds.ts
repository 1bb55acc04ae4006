/**
 * How deep and how large a JSON value is, measured without recursion (a value
 * nested 100,000 levels deep is measured, not a stack overflow), stopping as
 * soon as a limit is passed.
 *
 * Everything a chain stores that arrived from outside (tool arguments from a
 * model, tool results, resume values, stored documents) is measured before it
 * is kept, so `JSON.stringify` of a chain's document never throws.
 *
 * @internal
 */

/**
 * The deepest nesting any value in a chain may have. `JSON.stringify`
 * recurses; V8 overflows its stack between 4,000 and 5,000 levels at the top
 * of a stack, less inside deep fibers, so this leaves a wide margin.
 *
 * @internal
 */
export const depthCeiling = 512

/** @internal */
export interface Limits {
  /** Levels of arrays and objects allowed (a scalar is depth 0). */
  readonly maxDepth: number
  /** Characters of JSON text allowed, counted as `JSON.stringify` writes them. */
  readonly maxSize: number
}

/**
 * What is wrong with a value: too deep, too large, or not JSON data (a
 * non-finite number, which JSON would turn into `null`; a bigint, a symbol,
 * a function; a Date, a Map, a class instance; a cycle shows as unbounded
 * depth).
 *
 * @internal
 */
export type Problem =
  | { readonly _tag: "TooDeep"; readonly limit: number }
  | { readonly _tag: "TooLarge"; readonly limit: number }
  | { readonly _tag: "NotJson"; readonly kind: string }

/**
 * The characters `JSON.stringify` writes for a string: `"` and `\\` and the
 * short escapes take 2, other control characters and lone surrogates 6.
 * Counted without its escapes (a lower bound, no scan) unless `exact`.
 */
const stringSize = (text: string, exact: boolean): number => {
  const plain = text.length + 2
  if (!exact) return plain
  let extra = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20) extra += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 1 : 5
    else if (code === 0x22 || code === 0x5c) extra += 1
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++
      else extra += 5
    }
  }
  return plain + extra
}

/** The most a string's escapes add to its {@link stringSize} without them: 5 per character. */
const mostEscapes = (text: string): number => text.length * 5

/**
 * The size of a scalar (a string's as {@link stringSize} counts it), the
 * kind of a value that is not JSON (a string), or -1 for a container.
 * `undefined` is 0 (JSON leaves it out of objects).
 */
const scalarSize = (value: unknown, exact: boolean): number | string => {
  switch (typeof value) {
    case "string":
      return stringSize(value, exact)
    case "number":
      return Number.isFinite(value) ? String(value).length : "non-finite number"
    case "boolean":
      return value ? 4 : 5
    case "undefined":
      return 0
    case "bigint":
    case "symbol":
    case "function":
      return typeof value
    default:
      return value === null ? 4 : containerKind(value as object)
  }
}

/**
 * -1 for an array or a plain object (a container to walk), or the kind of
 * any other object: `JSON.stringify` writes a Date, a Map, a class
 * instance, or an array or plain object with a `toJSON` method as something
 * else than it is (what `toJSON` returns, or its own fields), so it would
 * not come back as it went in.
 */
const containerKind = (value: object): -1 | string => {
  if (!Array.isArray(value)) {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return classKind(proto)
  }
  // JSON.stringify writes what a toJSON method returns instead (an own one, hidden or not, an
  // inherited one, one a Proxy hands out): it may be anything, or throw.
  return typeof (value as { readonly toJSON?: unknown }).toJSON === "function" ? "value with a toJSON method" : -1
}

/** The kind of an object of the prototype `proto`, by its constructor's name when it has a short one. */
const classKind = (proto: unknown): string => {
  const name: unknown = typeof proto === "object" && proto !== null && Object.hasOwn(proto, "constructor")
    ? (proto as { readonly constructor: unknown }).constructor
    : undefined
  return typeof name === "function" && typeof name.name === "string" && name.name.length > 0 && name.name.length < 40
    ? `${name.name} object`
    : "non-plain object"
}

/**
 * What a pass of the walk found: a problem, or the most characters the
 * value takes as JSON (its exact size in an `exact` pass; in a pass that
 * counted strings without their escapes, that size plus the most the
 * escapes could add). A pass stops with `TooLarge` only once the size it
 * counted is past the limit, so a bound past it is for the caller to decide.
 */
type Found = Problem | number

const tooLarge = (limits: Limits): Problem => ({ _tag: "TooLarge", limit: limits.maxSize })

/**
 * The common case without allocating: an object whose values are all
 * scalars (tool arguments, provider metadata, most results). What it found,
 * or `null` when it nests (the full walk decides).
 */
const flatObject = (value: object, limits: Limits, exact: boolean): Found | null => {
  if (Array.isArray(value) || limits.maxDepth < 1) return null
  let size = 2
  let slack = 0
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const item: unknown = (value as Record<string, unknown>)[key]
    const own = scalarSize(item, exact)
    if (typeof own === "string") return { _tag: "NotJson", kind: own }
    if (own < 0) return null
    if (item === undefined) continue
    size += stringSize(key, exact) + 2 + own
    if (!exact) slack += mostEscapes(key) + (typeof item === "string" ? mostEscapes(item) : 0)
  }
  return size > limits.maxSize ? tooLarge(limits) : size + slack
}

/**
 * The first problem of `value` under `limits`, or `undefined` when it is
 * within them. Linear in the size of the value up to the limits: strings
 * are counted without their escapes first, and scanned only when those
 * could take the value past `maxSize`.
 *
 * @internal
 */
export const check = (value: unknown, limits: Limits): Problem | undefined => {
  try {
    const found = walk(value, limits, false)
    if (typeof found !== "number") return found
    if (found <= limits.maxSize) return undefined
    // Only the escapes can tell: count them.
    const exact = walk(value, limits, true)
    return typeof exact !== "number" ? exact : exact > limits.maxSize ? tooLarge(limits) : undefined
  } catch {
    return unreadable
  }
}

// A getter that throws, a revoked proxy: what cannot be read cannot be written as JSON either.
const unreadable: Problem = { _tag: "NotJson", kind: "value that cannot be read" }

/**
 * The most characters of JSON text `value` takes (its strings counted as
 * if every character were escaped), or its problem under `limits`: too
 * deep, not JSON data, or too large already without its escapes. A bound
 * past `limits.maxSize` is not a problem by itself: {@link check} decides.
 * For a document made of parts: the parts' bounds add up to a bound of the
 * whole, and only a whole whose bound is past the limit needs its
 * {@link check}.
 *
 * @internal
 */
export const bound = (value: unknown, limits: Limits): Problem | number => {
  try {
    return walk(value, limits, false)
  } catch {
    return unreadable
  }
}

/**
 * {@link check}'s walk, which reads every property (a hostile getter may
 * throw). It counts `size` (strings without their escapes unless `exact`)
 * and `slack` (the most the uncounted escapes could add), and gives their
 * sum, or the first problem.
 */
const walk = (value: unknown, limits: Limits, exact: boolean): Found => {
  const first = scalarSize(value, exact)
  if (typeof first === "string") return { _tag: "NotJson", kind: first }
  if (first >= 0) {
    const slack = !exact && typeof value === "string" ? mostEscapes(value) : 0
    return first > limits.maxSize ? tooLarge(limits) : first + slack
  }
  const flat = flatObject(value as object, limits, exact)
  if (flat !== null) return flat
  let size = 0
  let slack = 0
  // The containers still to measure and, at the same index, their depths; no recursion.
  const nodes: Array<object> = [value as object]
  const depths: Array<number> = [1]
  while (nodes.length > 0) {
    const node = nodes.pop() as object
    const depth = depths.pop() as number
    if (depth > limits.maxDepth) return { _tag: "TooDeep", limit: limits.maxDepth }
    if (Array.isArray(node)) {
      // Read once: a Proxy may answer each read differently, or with something that is not a count.
      const length: unknown = node.length
      if (!Number.isSafeInteger(length) || (length as number) < 0) return { _tag: "NotJson", kind: "list whose length is not a count" }
      size += length === 0 ? 2 : 1 + (length as number) // the brackets and the commas
      // Before the walk: a sparse array's length costs nothing to make and everything to walk.
      if (size > limits.maxSize) return tooLarge(limits)
      for (let i = (length as number) - 1; i >= 0; i--) {
        const item: unknown = node[i]
        const own = scalarSize(item, exact)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (own < 0) {
          nodes.push(item as object)
          depths.push(depth + 1)
          continue
        }
        size += own === 0 ? 4 : own // undefined in an array, or a hole, is written as null
        // Here, not after the array: a sparse array's holes cost nothing to make and 4 each to write.
        if (size > limits.maxSize) return tooLarge(limits)
        if (!exact && typeof item === "string") slack += mostEscapes(item)
      }
    } else {
      size += 2
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue
        const item: unknown = (node as Record<string, unknown>)[key]
        const own = scalarSize(item, exact)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (item === undefined) continue
        size += stringSize(key, exact) + 2
        if (!exact) slack += mostEscapes(key) + (typeof item === "string" ? mostEscapes(item) : 0)
        if (own >= 0) size += own
        else {
          nodes.push(item as object)
          depths.push(depth + 1)
        }
      }
    }
    if (size > limits.maxSize) return tooLarge(limits)
  }
  return size + slack
}

/**
 * `problem` as words, e.g. "nested more than 64 levels deep".
 *
 * @internal
 */
export const describe = (problem: Problem): string => {
  switch (problem._tag) {
    case "TooDeep":
      return `nested more than ${problem.limit} levels deep (or cyclic)`
    case "TooLarge":
      return `larger than ${problem.limit.toLocaleString("en-US")} characters of JSON`
    case "NotJson":
      return `not JSON data (it holds a ${problem.kind})`
  }
}

/**
 * Limits for values the loop keeps but the model did not send (tool results,
 * resume values, stored documents): the depth ceiling, and the longest string
 * V8 can build (2^29 - 24 characters), past which `JSON.stringify` throws.
 *
 * @internal
 */
export const storedLimits: Limits = { maxDepth: depthCeiling, maxSize: 2 ** 29 - 24 }

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
 * The characters `JSON.stringify` writes for a string: `"` and `\` and the
 * short escapes take 2, other control characters and lone surrogates 6.
 * Only scanned when the escapes could matter for `budget` (a string of
 * `length` characters is at most 6 × `length` + 2 once escaped).
 */
const stringSize = (text: string, budget: number): number => {
  const plain = text.length + 2
  if (text.length * 6 + 2 <= budget) return plain
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

/**
 * The size of a scalar, the kind of a value that is not JSON (a string), or
 * -1 for a container. `undefined` is 0 (JSON leaves it out of objects).
 */
const scalarSize = (value: unknown, budget: number): number | string => {
  switch (typeof value) {
    case "string":
      return stringSize(value, budget)
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
 * any other object: `JSON.stringify` writes a Date, a Map or a class
 * instance as something else than it is (its `toJSON`, or its own fields),
 * so it would not come back as it went in.
 */
const containerKind = (value: object): -1 | string => {
  if (Array.isArray(value)) return -1
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto === Object.prototype || proto === null) return -1
  const name: unknown = typeof proto === "object" && proto !== null && Object.hasOwn(proto, "constructor")
    ? (proto as { readonly constructor: unknown }).constructor
    : undefined
  return typeof name === "function" && typeof name.name === "string" && name.name.length > 0 && name.name.length < 40
    ? `${name.name} object`
    : "non-plain object"
}

/**
 * The common case without allocating: an object whose values are all
 * scalars (tool arguments, provider metadata, most results). `true` when it
 * is within the limits, its problem, or `undefined` when it nests (the full
 * walk decides).
 */
const flatObject = (value: object, limits: Limits): Problem | true | undefined => {
  if (Array.isArray(value) || limits.maxDepth < 1) return undefined
  let size = 2
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const item = (value as Record<string, unknown>)[key]
    const own = scalarSize(item, limits.maxSize - size)
    if (typeof own === "string") return { _tag: "NotJson", kind: own }
    if (own < 0) return undefined
    if (item !== undefined) size += stringSize(key, limits.maxSize - size) + 2 + own
  }
  return size > limits.maxSize ? { _tag: "TooLarge", limit: limits.maxSize } : true
}

/**
 * The first problem of `value` under `limits`, or `undefined` when it is
 * within them. Linear in the size of the value up to the limits.
 *
 * @internal
 */
export const check = (value: unknown, limits: Limits): Problem | undefined => {
  try {
    return walk(value, limits)
  } catch {
    // A getter that throws, a revoked proxy: what cannot be read cannot be written as JSON either.
    return { _tag: "NotJson", kind: "value that cannot be read" }
  }
}

/** {@link check}'s walk, which reads every property (a hostile getter may throw). */
const walk = (value: unknown, limits: Limits): Problem | undefined => {
  const first = scalarSize(value, limits.maxSize)
  if (typeof first === "string") return { _tag: "NotJson", kind: first }
  if (first >= 0) return first > limits.maxSize ? { _tag: "TooLarge", limit: limits.maxSize } : undefined
  const flat = flatObject(value as object, limits)
  if (flat !== undefined) return flat === true ? undefined : flat
  let size = 0
  // Pairs of (container, depth); no recursion.
  const stack: Array<unknown> = [value, 1]
  while (stack.length > 0) {
    const depth = stack.pop() as number
    const node = stack.pop() as object
    if (depth > limits.maxDepth) return { _tag: "TooDeep", limit: limits.maxDepth }
    if (Array.isArray(node)) {
      size += 1 + node.length
      // Before the walk: a sparse array's length costs nothing to make and everything to walk.
      if (size > limits.maxSize) return { _tag: "TooLarge", limit: limits.maxSize }
      for (let i = node.length - 1; i >= 0; i--) {
        const item = node[i]
        const own = scalarSize(item, limits.maxSize - size)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (own >= 0) size += Math.max(own, 4) // undefined in an array is written as null
        else stack.push(item, depth + 1)
      }
    } else {
      size += 2
      for (const key of Object.keys(node)) {
        const item = (node as Record<string, unknown>)[key]
        const own = scalarSize(item, limits.maxSize - size)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (item === undefined) continue
        size += stringSize(key, limits.maxSize - size) + 2
        if (own >= 0) size += own
        else stack.push(item, depth + 1)
      }
    }
    if (size > limits.maxSize) return { _tag: "TooLarge", limit: limits.maxSize }
  }
  return undefined
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

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
  /** Characters of JSON text allowed, counted as `JSON.stringify` writes them (escapes aside). */
  readonly maxSize: number
}

/**
 * What is wrong with a value: too deep, too large, or not JSON data (a
 * bigint, a symbol, a function, or a cycle, which shows as unbounded depth).
 *
 * @internal
 */
export type Problem =
  | { readonly _tag: "TooDeep"; readonly limit: number }
  | { readonly _tag: "TooLarge"; readonly limit: number }
  | { readonly _tag: "NotJson"; readonly kind: string }

const scalarSize = (value: unknown): number | string => {
  switch (typeof value) {
    case "string":
      return value.length + 2
    case "number":
      return Number.isFinite(value) ? String(value).length : 4
    case "boolean":
      return value ? 4 : 5
    case "undefined":
      return 0
    case "bigint":
    case "symbol":
    case "function":
      return typeof value
    default:
      return value === null ? 4 : -1
  }
}

/**
 * The first problem of `value` under `limits`, or `undefined` when it is
 * within them. Linear in the size of the value up to the limits.
 *
 * @internal
 */
export const check = (value: unknown, limits: Limits): Problem | undefined => {
  const first = scalarSize(value)
  if (typeof first === "string") return { _tag: "NotJson", kind: first }
  if (first >= 0) return first > limits.maxSize ? { _tag: "TooLarge", limit: limits.maxSize } : undefined
  let size = 0
  // Pairs of (container, depth); no recursion.
  const stack: Array<unknown> = [value, 1]
  while (stack.length > 0) {
    const depth = stack.pop() as number
    const node = stack.pop() as object
    if (depth > limits.maxDepth) return { _tag: "TooDeep", limit: limits.maxDepth }
    if (Array.isArray(node)) {
      size += 1 + node.length
      for (let i = node.length - 1; i >= 0; i--) {
        const item = node[i]
        const own = scalarSize(item)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (own >= 0) size += own
        else stack.push(item, depth + 1)
      }
    } else {
      size += 2
      for (const key of Object.keys(node)) {
        const item = (node as Record<string, unknown>)[key]
        const own = scalarSize(item)
        if (typeof own === "string") return { _tag: "NotJson", kind: own }
        if (own === 0) continue
        size += key.length + 4
        if (own > 0) size += own
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

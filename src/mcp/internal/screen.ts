/**
 * A server's tool list screened as the hostile input it is, before any of it
 * becomes a tool the model sees: names must be valid tool names (prefix
 * included) and unique (tools sharing a name are all refused: neither can be
 * trusted to be the one meant), descriptions and input schemas are bounded
 * (schemas in depth and size, measured without recursion), a schema may not
 * carry a `__proto__` key, and the list is bounded in length. Names are
 * only ever kept in `Map`s and `Set`s.
 *
 * @internal
 */
import type * as McpSchema from "effect/ai/McpSchema"
import * as JsonBounds from "../../internal/jsonBounds.ts"
import { McpToolRejected } from "../McpError.ts"

/**
 * The bounds a tool list must keep.
 *
 * @internal
 */
export interface Bounds {
  readonly tools: number
  readonly descriptionLength: number
  readonly schemaDepth: number
  readonly schemaSize: number
}

/**
 * How to screen: the prefix of every local name, the server names to keep
 * (all when absent), and whether a refused tool fails the whole list.
 *
 * @internal
 */
export interface Rules {
  readonly prefix: string
  readonly include: ReadonlySet<string> | undefined
  readonly invalidTools: "fail" | "skip"
  readonly bounds: Bounds
}

/**
 * A tool that passed, under its local name.
 *
 * @internal
 */
export interface Accepted {
  readonly name: string
  readonly descriptor: McpSchema.Tool
}

/**
 * The screened list: the tools kept, the tools refused.
 *
 * @internal
 */
export interface Screened {
  readonly accepted: ReadonlyArray<Accepted>
  readonly rejected: ReadonlyArray<McpToolRejected>
}

const validName = /^[a-zA-Z0-9_-]{1,64}$/

/** Whether any object in `schema` (already bounded in depth) has an own `__proto__` key. */
const hasProtoKey = (schema: unknown): boolean => {
  const stack: Array<unknown> = [schema]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== "object" || node === null) continue
    if (!Array.isArray(node) && Object.hasOwn(node, "__proto__")) return true
    for (const value of Object.values(node)) if (typeof value === "object" && value !== null) stack.push(value)
  }
  return false
}

const schemaProblem = (schema: unknown, bounds: Bounds): string | undefined => {
  const problem = JsonBounds.check(schema, { maxDepth: bounds.schemaDepth, maxSize: bounds.schemaSize })
  if (problem !== undefined) {
    const limit = problem._tag === "TooDeep" ? "limits.schemaDepth" : problem._tag === "TooLarge" ? "limits.schemaSize" : undefined
    const raise = limit === undefined ? "" : ` (raise ${limit} if you trust the server)`
    return `its input schema is ${JsonBounds.describe(problem)}${raise}`
  }
  return hasProtoKey(schema) ? "its input schema has a \"__proto__\" key" : undefined
}

/** Why the tool `descriptor`, named `name` locally, is refused; `undefined` when it passes. */
const problemOf = (descriptor: McpSchema.Tool, name: string, counts: ReadonlyMap<string, number>, bounds: Bounds): string | undefined => {
  if (!validName.test(name)) return "its name is not a valid tool name (^[a-zA-Z0-9_-]{1,64}$, prefix included)"
  if ((counts.get(name) ?? 0) > 1) return "another tool of the server has the same name"
  const description = descriptor.description ?? ""
  if (description.length > bounds.descriptionLength) {
    return `its description has ${description.length.toLocaleString("en-US")} characters, more than limits.descriptionLength (${bounds.descriptionLength}; raise it if you trust the server)`
  }
  return schemaProblem(descriptor.inputSchema, bounds)
}

const refused = (descriptor: McpSchema.Tool, rule: string): McpToolRejected =>
  new McpToolRejected({ tool: descriptor.name.slice(0, 100), rule })

/**
 * Screens `descriptors` under `rules`. Fails (as the returned `error`) with
 * the first refusal when `invalidTools` is `"fail"`.
 *
 * @internal
 */
export const screen = (
  descriptors: ReadonlyArray<McpSchema.Tool>,
  rules: Rules
): Screened | { readonly error: McpToolRejected } => {
  const listed = rules.include === undefined ? descriptors : descriptors.filter((d) => rules.include!.has(d.name))
  const limit = rules.bounds.tools
  if (listed.length > limit && rules.invalidTools === "fail") {
    return {
      error: new McpToolRejected({ rule: `it has ${listed.length} tools, more than limits.tools (${limit}; raise it, or keep fewer with \`include\`)` })
    }
  }
  const counts = new Map<string, number>()
  for (const descriptor of listed) {
    const name = rules.prefix + descriptor.name
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  const accepted: Array<Accepted> = []
  const rejected: Array<McpToolRejected> = []
  for (const descriptor of listed) {
    const name = rules.prefix + descriptor.name
    const problem = accepted.length >= limit
      ? `the list already has limits.tools (${limit}) tools`
      : problemOf(descriptor, name, counts, rules.bounds)
    if (problem === undefined) accepted.push({ name, descriptor })
    else if (rules.invalidTools === "fail") return { error: refused(descriptor, problem) }
    else rejected.push(refused(descriptor, problem))
  }
  return { accepted, rejected }
}

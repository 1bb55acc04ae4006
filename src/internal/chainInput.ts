/**
 * Chains from outside: `make` and `addUser` (which never throw: a wrongly
 * shaped value from JavaScript becomes a chain that holds the problem), and
 * the check of a chain handed to `run` or `encode`.
 *
 * @internal
 */
import { Cause, Exit, Schema, SchemaIssue } from "effect"
import * as Prompt from "effect/ai/Prompt"
import * as Toolkit from "effect/ai/Toolkit"
import type * as Tool from "effect/ai/Tool"
import { redactSecrets } from "./redact.ts"
import { checkObject, isToolkit, readably } from "./checks.ts"
import { InvalidInput } from "../LoopError.ts"
import { bareChain, Chain, emptyToolkit, freshChain, isChain, type Json, text as lastText } from "./chain.ts"

/**
 * Options of {@link make}.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const options: Chain.MakeOptions<{}> = { system: "Be brief.", user: ["Hi", "Who are you?"] }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface MakeOptions<Tools extends Record<string, Tool.Any>> {
  /** The system prompt. */
  readonly system?: string | undefined
  /** User message(s), appended after `messages`. */
  readonly user?: string | ReadonlyArray<string> | undefined
  /** Messages to start from (e.g. an earlier conversation). */
  readonly messages?: ReadonlyArray<Prompt.Message> | undefined
  /** The tools the model may call; their handlers come from the Effect context. */
  readonly toolkit?: Toolkit.Toolkit<Tools> | undefined
  /** Your own data, serialized with the chain. */
  readonly context?: Readonly<Record<string, Json>> | undefined
}

/**
 * Creates a chain from a system prompt, user message(s) and a toolkit.
 *
 * Options from JSON or JavaScript are checked here (each message against
 * `Prompt.Message`, `context` as JSON), but `make` never throws: a wrongly
 * shaped value gives a chain that holds the problem instead of messages, and
 * `run`, `stream` and `encode` refuse it with an `InvalidInput` (in
 * `encode`'s `ChainCodecError`) naming the option: `Chain.make options`,
 * `system`, `user`, `user[1]`, `messages`, `messages[1]`, `toolkit`, `context`,
 * `context["key"]`, or an unknown key (`Chain.make options["sytem"]`: a
 * misspelt option would otherwise be lost). Messages must be `Prompt` messages
 * (`Prompt.userMessage(...)`); decode JSON ones with `Prompt.Message` first.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool, Toolkit } from "effect/ai"
 * import { Chain } from "loopwork"
 *
 * const Search = Tool.make("search", { parameters: Schema.Struct({ query: Schema.String }), success: Schema.String })
 * const chain = Chain.make({ system: "You research.", user: "What is Effect?", toolkit: Toolkit.make(Search) })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <Tools extends Record<string, Tool.Any> = {}>(options: MakeOptions<Tools>): Chain<Tools> => {
  const problem = readably("Chain.make options", () => isCommonShape(options) ? undefined : makeProblem(options))
  if (problem !== undefined) return refusedChain(problem)
  const messages: Array<Prompt.Message> = []
  if (options.system !== undefined) messages.push(Prompt.systemMessage({ content: options.system }))
  if (options.messages !== undefined) for (const message of options.messages) messages.push(message)
  const users = options.user === undefined ? [] : typeof options.user === "string" ? [options.user] : options.user
  for (const text of users) messages.push(userMessage(text))
  return freshChain(messages, options.toolkit ?? emptyToolkit, options.context ?? {})
}

const userMessage = (text: string): Prompt.UserMessage =>
  Prompt.userMessage({ content: [Prompt.textPart({ text })] })

/**
 * The rules of {@link make}'s options (the type side: messages must already
 * be `Prompt` messages).
 */
const MakeOptionsSchema = Schema.Struct({
  system: Schema.optionalKey(Schema.String),
  user: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
  messages: Schema.optionalKey(Schema.Array(Prompt.Message)),
  toolkit: Schema.optionalKey(Schema.declare((u): u is Toolkit.Any => isToolkit(u))),
  context: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
})

const checkMakeOptions = Schema.decodeUnknownExit(Schema.toType(MakeOptionsSchema))
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * What a toolkit must be. effect's `McpClient.toolkit` gives a toolkit with
 * its handlers inside, which the loop cannot run: the rule says where MCP
 * tools come from instead.
 */
const toolkitRule = "must be a Toolkit (Toolkit.make(...); an MCP server's tools: McpTools.connect or McpTools.fromClient from loopwork/mcp)"

/** What each option must be, and each of its elements (`user[1]`, `messages[1]`, `context["key"]`). */
const makeRules: ReadonlyMap<string, readonly [option: string, element: string]> = new Map([
  ["system", ["must be a string", "must be a string"]],
  ["user", ["must be a string or an array of strings", "must be a string"]],
  ["messages", [
    "must be an array of Prompt messages",
    "must be a Prompt message (Prompt.userMessage(...); decode JSON ones with Prompt.Message)"
  ]],
  ["toolkit", [toolkitRule, toolkitRule]],
  ["context", [
    "must be an object of JSON values",
    "must be a JSON value (null, a boolean, a finite number, a string, an array or an object of them)"
  ]]
])

const makeKeys: ReadonlySet<string> = new Set(makeRules.keys())

/** The first key of `options` that is not an option of {@link make} (a misspelt `system` would be lost). */
const unknownKey = (options: object): string | undefined => {
  for (const key of Object.keys(options)) if (!makeKeys.has(key)) return key
  return undefined
}

/**
 * The common shape, checked without the Schema (`Chain.run` callers often
 * make a chain per run): strings for `system` and `user`, a toolkit, no other
 * key. Anything else goes through {@link makeProblem}.
 */
const isCommonShape = (options: unknown): boolean => {
  if (typeof options !== "object" || options === null) return false
  const { context, messages, system, toolkit, user } = options as MakeOptions<{}>
  return (system === undefined || typeof system === "string") && (user === undefined || typeof user === "string") &&
    messages === undefined && context === undefined && (toolkit === undefined || isToolkit(toolkit)) &&
    unknownKey(options) === undefined
}

/** A key or index of a path, as written in a field name (a hostile key is quoted and cut short). */
const segment = (key: PropertyKey): string => {
  if (typeof key === "number") return `[${key}]`
  // Redacted before it is cut: a cut key's head no longer looks like one.
  const text = JSON.stringify(redactSecrets(String(key)))
  return `[${text.length > 40 ? `${text.slice(0, 39)}…"` : text}]`
}

/** The first problem of {@link make}'s options, naming the option (and the element, for arrays and context). */
const makeProblem = (options: unknown): InvalidInput | undefined => {
  const shape = checkObject(options, "Chain.make options")
  if (shape !== undefined) return shape
  const unknown = unknownKey(options as object)
  if (unknown !== undefined) {
    return new InvalidInput({
      field: `Chain.make options${segment(unknown)}`,
      rule: "is not an option; the options are system, user, messages, toolkit and context",
      value: (options as Record<string, unknown>)[unknown]
    })
  }
  const exit = checkMakeOptions(options)
  if (Exit.isSuccess(exit)) return undefined
  const error = Cause.squash(exit.cause)
  const path = (Schema.isSchemaError(error) ? issuesOf(error.issue).issues[0]?.path ?? [] : []).map((at) =>
    typeof at === "object" ? at.key : at
  )
  const option = String(path[0] ?? "")
  const rules = Object.hasOwn(options as object, option) ? makeRules.get(option) : undefined
  if (rules === undefined) {
    return new InvalidInput({ field: "Chain.make options", rule: "must be { system?, user?, messages?, toolkit?, context? }", value: options })
  }
  const value: unknown = (options as Record<string, unknown>)[option]
  if (path.length < 2 || typeof value !== "object" || value === null) {
    return new InvalidInput({ field: option, rule: rules[0], value })
  }
  const key = path[1]
  return new InvalidInput({
    field: `${option}${segment(key)}`,
    rule: rules[1],
    value: Object.hasOwn(value, key) ? (value as Record<PropertyKey, unknown>)[key] : undefined
  })
}

/**
 * Stands in a chain's messages for bad input to {@link make} or
 * {@link addUser}: `run`, `stream` and `encode` report its problem.
 */
class Refused {
  readonly problem: InvalidInput
  constructor(problem: InvalidInput) {
    this.problem = problem
  }
}

const refusedMessage = (problem: InvalidInput): Prompt.Message => new Refused(problem) as unknown as Prompt.Message

/** A chain made from bad options: no usable message, only the problem. */
const refusedChain = <Tools extends Record<string, Tool.Any>>(problem: InvalidInput): Chain<Tools> =>
  bareChain([refusedMessage(problem)])

/** @internal */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The first problem of a chain given to `run` or `encode`: not a chain, or a
 * field that does not hold what the loop reads (a cheap shape check: `make`
 * and `decode` check the messages' content, `encode` the context's JSON).
 * `run` also checks the toolkit, which `encode` does not store.
 */
/** @internal */
/**
 * @internal `chain`, checked for a synchronous function whose JavaScript
 * caller may pass anything: what is not a chain throws `InvalidInput`
 * (`chain`), never a `TypeError`
 */
export const chainOrThrow = <C extends Chain>(chain: C): C => {
  if (isChain(chain)) return chain
  throw new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: chain })
}

/**
 * The text of the last model response ("" if there is none). Given
 * something that is not a chain (from JavaScript), it throws `InvalidInput`
 * (`chain`).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.text(Chain.make({ user: "Hi" })) // ""
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const text = (chain: Chain): string => lastText(chainOrThrow(chain))

export const chainProblem = (chain: unknown, withToolkit: boolean): InvalidInput | undefined => {
  if (!isChain(chain)) {
    return new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: chain })
  }
  const messages: unknown = chain.messages
  if (!Array.isArray(messages)) {
    return new InvalidInput({ field: "chain.messages", rule: "must be an array of Prompt messages", value: messages })
  }
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i]
    if (Prompt.isMessage(message)) continue
    return message instanceof Refused
      ? message.problem
      : new InvalidInput({ field: `chain.messages[${i}]`, rule: "must be a Prompt message", value: message })
  }
  if (withToolkit && !isToolkit(chain.toolkit)) {
    return new InvalidInput({ field: "chain.toolkit", rule: toolkitRule, value: chain.toolkit })
  }
  if (!isRecord(chain.context)) {
    return new InvalidInput({ field: "chain.context", rule: "must be an object of JSON values", value: chain.context })
  }
  if (!isRecord(chain.modeState)) {
    return new InvalidInput({ field: "chain.modeState", rule: "must be an object of JSON values", value: chain.modeState })
  }
  if (!(chain.callStates instanceof Map)) {
    return new InvalidInput({ field: "chain.callStates", rule: "must be a Map of call ids to states", value: chain.callStates })
  }
  return callsProblem(chain.pendingToolCalls, "chain.pendingToolCalls") ??
    callsProblem(chain.lastToolResults, "chain.lastToolResults") ??
    callsProblem(chain.roundResults, "chain.roundResults")
}

/** Tool calls or results set through `copy` from JavaScript: an array of objects with a string id and name. */
const callsProblem = (list: unknown, field: string): InvalidInput | undefined => {
  if (!Array.isArray(list)) return new InvalidInput({ field, rule: "must be an array", value: list })
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i]
    if (isRecord(item) && typeof item.id === "string" && typeof item.name === "string") continue
    return new InvalidInput({ field: `${field}[${i}]`, rule: "must be an object with a string id and name", value: item })
  }
  return undefined
}

/**
 * Appends a user message (e.g. the next question of a conversation).
 * Given a non-string (from JavaScript) it does not throw: it appends the
 * problem, and `run`, `stream` and `encode` refuse the chain with an
 * `InvalidInput` for `addUser text`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const next = Chain.make({ user: "Hi" }).pipe(Chain.addUser("And now?"))
 * next.messages.length // 2
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const addUser = (text: string) => {
  const problem = typeof text === "string"
    ? undefined
    : new InvalidInput({ field: "addUser text", rule: "must be a string", value: text })
  return <Tools extends Record<string, Tool.Any>>(chain: Chain<Tools>): Chain<Tools> =>
    chainOrThrow(chain).copy({ messages: [...chain.messages, problem === undefined ? userMessage(text) : refusedMessage(problem)] })
}

